#include "spec/run_spec.h"

#include <algorithm>
#include <fmt/format.h>
#include <nlohmann/json.hpp>
#include <set>

#include "util/error.h"

namespace lr::spec {
namespace {

uint32_t sum_queues(const std::vector<PortQueues>& v) {
    uint32_t n = 0;
    for (const auto& p : v) n += p.queues;
    return n;
}

void check_unique(const std::vector<PortQueues>& v, const char* opt) {
    std::set<std::string> seen;
    for (const auto& p : v)
        if (!seen.insert(p.port).second)
            throw UsageError(fmt::format("port \"{}\" is given twice with {}; use {} {},queues=N",
                                         p.port, opt, opt, p.port));
}

}  // namespace

uint32_t RunSpec::tx_queue_total() const { return sum_queues(tx); }
uint32_t RunSpec::rx_queue_total() const { return sum_queues(rx); }

void RunSpec::validate() const {
    if (backend != "dpdk" && backend != "afxdp")
        throw UsageError(fmt::format("unknown backend \"{}\" (available: dpdk, afxdp)", backend));
    if (xdp_mode != "auto" && xdp_mode != "native" && xdp_mode != "skb")
        throw UsageError(fmt::format("invalid --xdp-mode \"{}\": expected auto, native or skb", xdp_mode));
    if (xsk_mode != "auto" && xsk_mode != "copy" && xsk_mode != "zero-copy")
        throw UsageError(fmt::format("invalid --xsk-mode \"{}\": expected auto, copy or zero-copy", xsk_mode));
    if (rx_mode != "socket" && rx_mode != "xdp")
        throw UsageError(fmt::format("invalid --rx-mode \"{}\": expected socket or xdp", rx_mode));
    if (rx_mode == "xdp" && backend != "afxdp") throw UsageError("--rx-mode xdp needs --backend afxdp");
    if (rx_mode == "xdp" && rx_streams() > LR_SINK_MAX_STREAMS)
        throw UsageError(fmt::format("--rx-mode xdp tracks at most {} streams; pass --flows N (the sender's flow "
                                     "count) to a receive-only run",
                                     LR_SINK_MAX_STREAMS));
    if (!ring_pairs.empty() && backend != "dpdk") throw UsageError("--ring-pair needs --backend dpdk");
    if (backend == "afxdp" && frame.frame_size > kAfxdpMaxFrame)
        throw UsageError(fmt::format("--size {} is too large for the afxdp backend (at most {} bytes: one UMEM "
                                     "chunk); use --backend dpdk for jumbo frames",
                                     frame.frame_size, kAfxdpMaxFrame));
    if (tx.empty() && rx.empty())
        throw UsageError("no port given: name at least one port with --tx PORT or --rx PORT");
    check_unique(tx, "--tx");
    check_unique(rx, "--rx");
    for (const auto& p : tx)
        if (p.queues == 0) throw UsageError(fmt::format("--tx {}: queues must be at least 1", p.port));
    for (const auto& p : rx)
        if (p.queues == 0) throw UsageError(fmt::format("--rx {}: queues must be at least 1", p.port));

    // Frame consistency (sizes, families, VLAN) is checked by building it once.
    (void)packet::build_frame(frame);
    if (!force) {
        if (!packet::in_benchmark_range(frame.dst_ip))
            throw UsageError(fmt::format(
                "--dst-ip {} is outside the benchmarking ranges 198.18.0.0/15 and 2001:2::/48; "
                "pass --force to send there anyway",
                frame.dst_ip.str()));
        if (frame.dst_mac.is_multicast())
            throw UsageError(fmt::format("--dst-mac {} is a multicast/broadcast address; pass --force to use it",
                                         frame.dst_mac.str()));
    }
    if (frame.src_mac.is_multicast())
        throw UsageError(fmt::format("--src-mac {} is a multicast address", frame.src_mac.str()));

    const uint32_t nflows = effective_flows();
    (void)flow::make_flows(frame, nflows, nflows > 1 ? vary : 0);
    if (signed_frames() && tx_enabled() && nflows < tx_queue_total())
        throw UsageError(fmt::format("--flows {} is fewer than the {} TX queues: with signatures every queue needs "
                                     "flows of its own (each flow is one sequence-numbered stream)",
                                     nflows, tx_queue_total()));
    if (signature && nflows > 65535) throw UsageError("signatures carry a 16-bit stream id: at most 65535 flows");
    if (signed_frames() && rx_enabled() && !tx_enabled() && !nonce_given)
        throw UsageError("a receive-only run must know the sender's run nonce to recognise its frames: pass "
                         "--nonce N (the sender prints it, or set the same --nonce on both), or --no-signature");

    if (count && tx_enabled() && *count < tx_queue_total())
        throw UsageError(fmt::format("--count {} is smaller than the number of TX queues ({})", *count,
                                     tx_queue_total()));
    if (reflect && (tx.size() != 1 || rx.size() != 1 || !(tx[0] == rx[0])))
        throw UsageError("reflect: one port, receiving and sending on the same queues");
    if (reflect && count) throw UsageError("reflect runs for --duration (or until interrupted), not for a --count");
    if (outstanding) {
        if (!signed_frames())
            throw UsageError("--outstanding matches responses by sequence number: the frames must carry a signature");
        for (const auto& t : tx) {
            const auto it = std::find_if(rx.begin(), rx.end(), [&](const PortQueues& r) { return r.port == t.port; });
            if (it == rx.end() || it->queues != t.queues)
                throw UsageError(fmt::format("--outstanding: responses come back to the sending port: give --rx {} "
                                             "with the same queues as --tx",
                                             t.port));
            if (t.queues != 1)
                throw UsageError("--outstanding supports one queue per port for now (a NIC's RSS may return a "
                                 "response on another queue)");
        }
        if (rx.size() != tx.size()) throw UsageError("--outstanding: every --rx port must also be a --tx port");
    }
    if (burst > 512) throw UsageError(fmt::format("--burst {} must be between 1 and 512 (0: the backend's default)", burst));
    if (descriptors && (descriptors < 64 || descriptors > 16384 || (descriptors & (descriptors - 1))))
        throw UsageError(fmt::format("--descriptors {} must be a power of two between 64 and 16384", descriptors));
    if (mbufs && mbufs < 2 * ring_size() + 4 * burst_size())
        throw UsageError(fmt::format("--mbufs {} is too small: need at least 2 x descriptors + 4 x burst = {}",
                                     mbufs, 2 * ring_size() + 4 * burst_size()));
    if (interval_s < 0.01) throw UsageError("--interval must be at least 10ms");
    if (max_loss_pct && (!tx_enabled() || !rx_enabled()))
        throw UsageError("--max-loss needs both --tx and --rx ports in this run (loss is TX minus RX)");
    if (max_loss_pct && (*max_loss_pct < 0 || *max_loss_pct > 100))
        throw UsageError("--max-loss must be a percentage between 0 and 100");
}

void to_json(nlohmann::json& j, const RunSpec& s) {
    auto ports = [](const std::vector<PortQueues>& v) {
        auto a = nlohmann::json::array();
        for (const auto& p : v) a.push_back({{"port", p.port}, {"queues", p.queues}});
        return a;
    };
    const auto& f = s.frame;
    j = {
        {"backend", s.backend},
        {"tx", ports(s.tx)},
        {"rx", ports(s.rx)},
        {"eal_args", s.eal_args},
        {"xdp_mode", s.xdp_mode},
        {"xsk_mode", s.xsk_mode},
        {"rx_mode", s.rx_mode},
        {"cpus", s.cpus},
        {"ring_pairs", s.ring_pairs},
        {"frame",
         {{"size", f.frame_size},
          {"l4", f.l4 == packet::L4::udp ? "udp" : "tcp"},
          {"ip", f.src_ip.v6 ? 6 : 4},
          {"vlan", f.vlan ? nlohmann::json(*f.vlan) : nlohmann::json(nullptr)},
          {"vlan_pcp", f.vlan_pcp},
          {"src_mac", f.src_mac.str()},
          {"dst_mac", f.dst_mac.str()},
          {"src_ip", f.src_ip.str()},
          {"dst_ip", f.dst_ip.str()},
          {"src_port", f.src_port},
          {"dst_port", f.dst_port},
          {"ttl", f.ttl}}},
        {"flows", s.effective_flows()},
        {"signature", s.signature},
        {"nonce", s.nonce},
        {"vary", flow::vary_str(s.vary)},
        {"count", s.count ? nlohmann::json(*s.count) : nlohmann::json(nullptr)},
        {"rate_pps", s.rate_pps > 0 ? nlohmann::json(s.rate_pps) : nlohmann::json(nullptr)},
        {"reflect", s.reflect},
        {"outstanding", s.outstanding ? nlohmann::json(s.outstanding) : nlohmann::json(nullptr)},
        {"response_timeout_s", s.response_timeout_s},
        {"duration_s", s.duration_s},
        {"interval_s", s.interval_s},
        {"drain_s", s.drain_s},
        {"stall_s", s.stall_s},
        {"burst", s.burst_size()},
        {"descriptors", s.ring_size()},
        {"mbufs", s.effective_mbufs()},
        {"max_loss_pct", s.max_loss_pct ? nlohmann::json(*s.max_loss_pct) : nlohmann::json(nullptr)},
    };
}

}  // namespace lr::spec
