#include "spec/run_spec.h"

#include <algorithm>
#include <fmt/format.h>
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

std::string Pattern::str() const {
    switch (kind) {
        case Kind::cbr: return "cbr";
        case Kind::burst: return fmt::format("burst:{}", burst);
        case Kind::poisson: return "poisson";
    }
    return "?";
}

Pattern parse_pattern(std::string_view s, std::string_view what) {
    if (s == "cbr") return {};
    if (s == "poisson") return {Pattern::Kind::poisson, 1};
    if (s.rfind("burst:", 0) == 0)
        return {Pattern::Kind::burst,
                static_cast<uint32_t>(parse_uint(s.substr(6), what, 1, 1u << 20, {s, "the burst length"}))};
    throw UsageError(fmt::format("invalid {} \"{}\": expected cbr, burst:N or poisson", what, s));
}

RunSpec RunSpec::with_trial(const TrialSpec& t) const {
    RunSpec s = *this;
    s.frame.frame_size = t.frame_size;
    s.count = t.count;
    s.rate = t.rate;
    s.rate_pps = 0;  // resolved by the session for the trial's frame size
    s.duration_s = t.duration_s;
    return s;
}

std::vector<unsigned> RunSpec::frame_sizes() const {
    return procedure.sizes.empty() ? std::vector<unsigned>{frame.frame_size} : procedure.sizes;
}

void RunSpec::check_rates(const RateCeiling& c, bool percent_needs_line_rate) const {
    if (!tx_enabled()) return;
    const std::pair<const RateSpec*, std::string_view> rates[] = {
        {&rate, "--rate"}, {&procedure.max_rate, "--max-rate"}, {&procedure.min_rate, "--min-rate"}};
    for (const auto& [r, what] : rates) {
        if (r->unit == RateSpec::Unit::percent && !c.line_rate && !percent_needs_line_rate) continue;
        for (unsigned size : frame_sizes()) (void)to_pps(*r, what, size, c);
    }
}

void RunSpec::validate() const {
    const bool afxdp_rx_xdp = afxdp.rx_mode == RxMode::xdp;
    if (afxdp_rx_xdp && rx_streams() > kSinkMaxStreams)
        throw UsageError(fmt::format("--rx-mode xdp tracks at most {} streams; pass --flows N (the sender's flow "
                                     "count) to a receive-only run",
                                     kSinkMaxStreams));
    if (afxdp_rx_xdp && trials > 1)
        throw UsageError("--rx-mode xdp counts in the driver for the whole session: give it one trial (--trials 1)");
    if (backend == BackendKind::afxdp && session_max_frame() > kAfxdpMaxFrame)
        throw UsageError(fmt::format("--size {} is too large for the afxdp backend (at most {} bytes: one UMEM "
                                     "chunk); use --backend dpdk for jumbo frames",
                                     session_max_frame(), kAfxdpMaxFrame));
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
    // Every destination the flows walk through, not only the first, stays in the ranges.
    if (!force && nflows > 1 && (vary & flow::vary_dst_ip) && !packet::in_benchmark_range(frame.dst_ip.plus(nflows - 1)))
        throw UsageError(fmt::format("--flows {} with --vary dst-ip walk from {} to {}, outside the benchmarking ranges "
                                     "198.18.0.0/15 and 2001:2::/48; pass --force to send there anyway",
                                     nflows, frame.dst_ip.str(), frame.dst_ip.plus(nflows - 1).str()));
    if (signed_frames() && tx_enabled() && nflows < tx_queue_total())
        throw UsageError(fmt::format("--flows {} is fewer than the {} TX queues: with signatures every queue needs "
                                     "flows of its own (each flow is one sequence-numbered stream)",
                                     nflows, tx_queue_total()));
    if (signature && nflows > packet::kMaxSignedFlows)
        throw UsageError(fmt::format("--flows {}: signatures carry a 16-bit stream id, at most {} flows (or "
                                     "--no-signature)",
                                     nflows, packet::kMaxSignedFlows));
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
    if (burst > kMaxBurst)
        throw UsageError(
            fmt::format("--burst {} must be between 1 and {} (0: the backend's default)", burst, kMaxBurst));
    if (descriptors && (descriptors < kMinRing || descriptors > kMaxRing || (descriptors & (descriptors - 1))))
        throw UsageError(fmt::format("--descriptors {} must be a power of two between {} and {}", descriptors, kMinRing,
                                     kMaxRing));
    if (dpdk.mbufs && dpdk.mbufs < 2 * ring_size() + 4 * burst_size())
        throw UsageError(fmt::format("--mbufs {} is too small: need at least 2 x descriptors + 4 x burst = {}",
                                     dpdk.mbufs, 2 * ring_size() + 4 * burst_size()));
    if (interval_s < 0.01) throw UsageError("--interval must be at least 10ms");
    const auto& th = thresholds;
    if (th.max_loss_pct && (!tx_enabled() || !rx_enabled()))
        throw UsageError("--max-loss needs both --tx and --rx ports in this run (loss is TX minus RX)");
    if ((th.max_latency_p99_s || th.max_latency_s || th.max_jitter_s) &&
        (!rx_enabled() || sig_level() != packet::SigLevel::seq_ts || afxdp.rx_mode == RxMode::xdp))
        throw UsageError("--max-latency, --max-latency-p99 and --max-jitter need a receiver in this run and frames that "
                         "carry timestamps (a signature with room for one, received in user space)");
    if (th.min_throughput && !rx_enabled())
        throw UsageError("--min-throughput judges what arrives: it needs an --rx port in this run");
    if (th.max_rate_error_pct && !rate.limited() && procedure.kind == Procedure::run)
        throw UsageError("--max-rate-error judges the offered rate against a --rate: give one");
    if (trials < 1) throw UsageError("--trials must be at least 1");
    check_rates(spec_ceiling(line_rate_bps, tx.size()), false);
    if (pattern.kind != Pattern::Kind::cbr && !rate.limited())
        throw UsageError(fmt::format("--pattern {} spaces departures at a --rate: give one", pattern.str()));
    if (trials > 1 && !tx_enabled()) throw UsageError("--trials needs a --tx port: each trial sends");
    if (!capture_path.empty() && !captures_sent() && !rx_enabled())
        throw UsageError("--capture keeps received frames: give an --rx port (or --capture-filter sent)");
    if (!capture_path.empty() && captures_sent() && !tx_enabled())
        throw UsageError("--capture-filter sent keeps sent frames: give a --tx port");
    validate_procedure();
}

void RunSpec::validate_procedure() const {
    const auto& p = procedure;
    const auto name = to_string(p.kind);
    if (p.kind == Procedure::run) return;
    if (!tx_enabled()) throw UsageError(fmt::format("{} sends: give a --tx port", name));
    const bool searches = p.kind != Procedure::sweep;
    if (searches && !rx_enabled())
        throw UsageError(fmt::format("{} measures what comes back: give an --rx port in the same run", name));
    if (searches && !signed_frames())
        throw UsageError(fmt::format("{} tells the device's loss from the instrument's by the frames' signatures: "
                                     "drop --no-signature",
                                     name));
    if (p.kind == Procedure::latency && (sig_level() != packet::SigLevel::seq_ts || afxdp.rx_mode == RxMode::xdp))
        throw UsageError("latency needs frames that carry a timestamp, received in user space (not --rx-mode xdp)");
    for (unsigned size : p.sizes) {
        auto f = frame;
        f.frame_size = size;
        if (size < packet::min_frame_size(f))
            throw UsageError(fmt::format("--sizes{}: {} bytes is smaller than this frame kind's smallest ({} bytes)",
                                         p.sizes_typed.empty() ? "" : fmt::format(" \"{}\"", p.sizes_typed), size,
                                         packet::min_frame_size(f)));
    }
    if (p.min_rate.limited() && p.max_rate.limited() && p.min_rate.unit == p.max_rate.unit &&
        p.min_rate.value >= p.max_rate.value)
        throw UsageError(fmt::format("--min-rate {} is not below --max-rate {}", p.min_rate.str(), p.max_rate.str()));
    if (p.initial_trial_s && p.final_trial_s && *p.initial_trial_s > *p.final_trial_s)
        throw UsageError("--initial-duration is longer than --trial-duration");
}

}  // namespace lr::spec
