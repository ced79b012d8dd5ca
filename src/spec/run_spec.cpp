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

uint32_t RunSpec::stream_queues(const StreamSpec& st) const {
    uint32_t n = 0;
    for (const auto& p : tx)
        if (st.ports.empty() || std::find(st.ports.begin(), st.ports.end(), p.port) != st.ports.end()) n += p.queues;
    return n;
}

uint32_t RunSpec::stream_flows(const StreamSpec& st) const {
    if (st.replay) {
        uint32_t ports = 0;
        for (const auto& p : tx)
            ports += st.ports.empty() || std::find(st.ports.begin(), st.ports.end(), p.port) != st.ports.end();
        return std::max(1u, ports);
    }
    if (!st.flow_frames.empty()) return static_cast<uint32_t>(st.flow_frames.size());
    return st.flows ? st.flows : std::max(1u, stream_queues(st));
}

std::vector<packet::FrameSpec> RunSpec::stream_flow_frames(const StreamSpec& st) const {
    if (!st.flow_frames.empty()) return st.flow_frames;
    const uint32_t nflows = stream_flows(st);
    return flow::make_flows(st.frame, nflows, nflows > 1 ? st.vary : 0);
}

uint32_t RunSpec::mix_flows() const {
    if (streams.empty()) return effective_flows();
    uint32_t n = 0;
    for (const auto& st : streams) n += stream_flows(st);
    return n;
}

packet::SigLevel RunSpec::stream_sig_level(const StreamSpec& st) const {
    if (!signature) return packet::SigLevel::none;
    if (st.replay) return st.replay->sig_level;
    return packet::sig_layout(st.frame).level;  // frame_size is the smallest: the level only grows with size
}

packet::SigLevel RunSpec::sig_level() const {
    if (streams.empty()) return signature ? packet::sig_layout(frame).level : packet::SigLevel::none;
    auto l = packet::SigLevel::seq_ts;
    for (const auto& st : streams) l = std::min(l, stream_sig_level(st));
    return l;
}

bool RunSpec::signed_frames() const {
    if (streams.empty()) return sig_level() != packet::SigLevel::none;
    return std::any_of(streams.begin(), streams.end(),
                       [&](const StreamSpec& st) { return stream_sig_level(st) != packet::SigLevel::none; });
}

std::vector<StreamSpec> RunSpec::mix() const {
    if (!streams.empty()) return streams;
    StreamSpec s;
    s.name = "s1";
    s.frame = frame;
    s.size = size.varies() ? size : SizeSpec::fixed_size(frame.frame_size);
    s.flows = effective_flows();
    s.vary = effective_flows() > 1 ? vary : 0;
    s.pattern = pattern;
    s.seed = seed;
    return {s};
}

unsigned RunSpec::session_max_frame() const {
    unsigned m = std::max(max_frame_size, frame.frame_size);
    m = std::max(m, size.largest());
    for (const auto& st : streams) m = std::max(m, st.replay ? st.replay->max_frame : st.size.largest());
    return m;
}

RunSpec::LargestPacket RunSpec::largest_packet() const {
    // Ethernet header and FCS, and an 802.1Q tag when the frame has one.
    const auto l3 = [](unsigned frame, bool vlan) { return frame - 18 - (vlan ? 4 : 0); };
    LargestPacket out;
    const auto consider = [&](unsigned frame, bool vlan, const std::string& source) {
        if (frame && l3(frame, vlan) > out.l3) out = {frame, l3(frame, vlan), source};
    };
    consider(std::max({max_frame_size, frame.frame_size, size.largest()}), frame.vlan.has_value(),
             procedure.sizes.size() > 1 ? "--sizes " + procedure.sizes_typed : "--size " + size.str());
    for (const auto& st : streams)
        consider(st.replay ? st.replay->max_frame : st.size.largest(), !st.replay && st.frame.vlan.has_value(),
                 st.origin());
    return out;
}

RunSpec RunSpec::with_trial(const TrialSpec& t) const {
    RunSpec s = *this;
    if (t.frame_size) {
        s.frame.frame_size = t.frame_size;
        if (!s.size.varies()) s.size = SizeSpec::fixed_size(t.frame_size);
    }
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
    // Streams with rates of their own: each within the ceiling, and all of them together.
    double l1 = 0;
    for (const auto& st : streams) {
        if (!st.rate || !st.rate->limited() || (st.replay && !st.replay->frames)) continue;
        if (st.rate->unit == RateSpec::Unit::percent && !c.line_rate && !percent_needs_line_rate) continue;
        const double mean = st.replay ? static_cast<double>(st.replay->max_frame) : st.size.mean();
        // Named as given: "--stream name=a,rate=..." or "profile.toml:12:1 [[stream]]".
        l1 += l1_bps(to_pps(*st.rate, fmt::format("{}: rate", st.origin()),
                            mean, c),
                     mean);
    }
    if (c.bps > 0 && l1 > c.bps * (1 + 1e-9))
        throw UsageError(fmt::format("the streams' rates add up to {} at L1, more than {}", format_bps(l1), c.source));
}

void RunSpec::validate() const {
    if (backend == BackendKind::afxdp && session_max_frame() > kAfxdpMaxFrame)
        throw UsageError(fmt::format("{} {} is too large for the afxdp backend (at most {} bytes: one UMEM "
                                     "chunk); use --backend dpdk for jumbo frames",
                                     impair ? "--max-frame" : "--size", session_max_frame(), kAfxdpMaxFrame));
    if (impair) return validate_impair();
    if (connect) return validate_connect();
    const bool afxdp_rx_xdp = afxdp.rx_mode == RxMode::xdp;
    if (afxdp_rx_xdp && rx_streams() > kSinkMaxStreams)
        throw UsageError(fmt::format("--rx-mode xdp tracks at most {} streams; pass --flows N (the sender's flow "
                                     "count) to a receive-only run",
                                     kSinkMaxStreams));
    if (afxdp_rx_xdp && trials > 1)
        throw UsageError("--rx-mode xdp counts in the driver for the whole session: give it one trial (--trials 1)");
    if (tx.empty() && rx.empty())
        throw UsageError("no port given: name at least one port with --tx PORT or --rx PORT");
    check_unique(tx, "--tx");
    check_unique(rx, "--rx");
    for (const auto& p : tx)
        if (p.queues == 0) throw UsageError(fmt::format("--tx {}: queues must be at least 1", p.port));
    for (const auto& p : rx)
        if (p.queues == 0) throw UsageError(fmt::format("--rx {}: queues must be at least 1", p.port));

    for (const auto& st : mix()) validate_stream(st);
    if (signature && mix_flows() > packet::kMaxSignedFlows)
        throw UsageError(fmt::format("{} {}: signatures carry a 16-bit stream id, at most {} flows (or "
                                     "--no-signature)",
                                     streams.empty() ? "--flows" : "the streams' flows add up to", mix_flows(),
                                     packet::kMaxSignedFlows));
    if (signed_frames() && rx_enabled() && !tx_enabled() && !nonce_given)
        throw UsageError("a receive-only run must know the sender's run nonce to recognise its frames: pass "
                         "--nonce N (the sender prints it, or set the same --nonce on both), or --no-signature");

    if (count && tx_enabled() && *count < tx_queue_total())
        throw UsageError(fmt::format("--count {} is smaller than the number of TX queues ({})", *count,
                                     tx_queue_total()));
    if (reflect && (tx.size() != 1 || rx.size() != 1 || !(tx[0] == rx[0])))
        throw UsageError("reflect: one port, receiving and sending on the same queues");
    if (reflect && count) throw UsageError("reflect runs for --duration (or until interrupted), not for a --count");
    if (stack_responder && !outstanding)
        throw UsageError("--responder stack: who answers requests; give --outstanding N to send them");
    if (outstanding && !single_fixed_stream())
        throw UsageError("--outstanding sends one frame template: give it no --stream and one --size");
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
    if (trials > 1 && !tx_enabled()) throw UsageError("--trials needs a --tx port: each trial sends");
    if (!capture_path.empty() && !captures_sent() && !rx_enabled())
        throw UsageError("--capture keeps received frames: give an --rx port (or --capture-filter sent)");
    if (!capture_path.empty() && captures_sent() && !tx_enabled())
        throw UsageError("--capture-filter sent keeps sent frames: give a --tx port");
    validate_procedure();
}

namespace {

// A frame of a stream (its base, or one of its flow_frames) as the stream's checks see it:
// buildable at the stream's smallest and largest sizes, addresses the run may send to.
void check_stream_frame(const packet::FrameSpec& f, const StreamSpec& st, bool force, const std::string& who) {
    // Frame consistency (sizes, families, VLAN) is checked by building it once, at both ends.
    auto at = f;
    at.frame_size = st.frame.frame_size;
    (void)packet::build_frame(at);
    at.frame_size = st.size.largest();
    (void)packet::build_frame(at);
    if (!force) {
        if (!packet::in_benchmark_range(f.dst_ip))
            throw UsageError(fmt::format(
                "{}--dst-ip {} is outside the benchmarking ranges 198.18.0.0/15 and 2001:2::/48; "
                "pass --force to send there anyway",
                who, f.dst_ip.str()));
        if (f.dst_mac.is_multicast())
            throw UsageError(fmt::format("{}--dst-mac {} is a multicast/broadcast address; pass --force to use it",
                                         who, f.dst_mac.str()));
    }
    if (f.src_mac.is_multicast())
        throw UsageError(fmt::format("{}--src-mac {} is a multicast address", who, f.src_mac.str()));
}

// A stream's flow_frames share its base frame's layout: the signature's place and the frame
// kind's smallest size are the base frame's.
void check_flow_frames(const StreamSpec& st, const std::string& who) {
    const auto kind = [](const packet::FrameSpec& f) {
        return fmt::format("{}/{}{}", f.src_ip.v6 ? "IPv6" : "IPv4", f.l4 == packet::L4::udp ? "UDP" : "TCP",
                           f.vlan ? " with VLAN" : "");
    };
    for (size_t i = 0; i < st.flow_frames.size(); ++i) {
        const auto& g = st.flow_frames[i];
        if (g.src_ip.v6 != st.frame.src_ip.v6 || g.l4 != st.frame.l4 || g.vlan.has_value() != st.frame.vlan.has_value())
            throw UsageError(fmt::format("{}flow {} is {} but the stream's frame is {}: a stream's flows share one "
                                         "frame kind",
                                         who, i, kind(g), kind(st.frame)));
    }
}

}  // namespace

void RunSpec::validate_stream(const StreamSpec& st) const {
    // Messages name the option when the command line's options describe the one stream.
    const std::string who = streams.empty() ? "" : fmt::format("stream {}: ", st.name);
    const auto& f = st.frame;
    if (const auto why = stream_name_problem(st.name); !why.empty())
        throw UsageError(fmt::format("{}: {}", st.origin(), why));
    if (st.endless_bursts && (st.bursts || !st.burst_frames || st.count))
        throw UsageError(fmt::format("{}endless bursts need burst frames, and neither a count nor a number of bursts",
                                     who));
    if (st.replay) return;
    check_stream_frame(f, st, force, who);
    check_flow_frames(st, who);
    for (const auto& g : st.flow_frames) check_stream_frame(g, st, force, who);
    const uint32_t nflows = stream_flows(st);
    (void)stream_flow_frames(st);
    // Every destination the flows walk through, not only the first, stays in the ranges.
    if (!force && st.flow_frames.empty() && nflows > 1 && (st.vary & flow::vary_dst_ip) &&
        !packet::in_benchmark_range(f.dst_ip.plus(nflows - 1)))
        throw UsageError(fmt::format("{}--flows {} with --vary dst-ip walk from {} to {}, outside the benchmarking "
                                     "ranges 198.18.0.0/15 and 2001:2::/48; pass --force to send there anyway",
                                     who, nflows, f.dst_ip.str(), f.dst_ip.plus(nflows - 1).str()));
    if (signature && packet::sig_layout(f).level != packet::SigLevel::none && tx_enabled() &&
        nflows < stream_queues(st))
        throw UsageError(fmt::format("{}--flows {} is fewer than the {} TX queues: with signatures every queue needs "
                                     "flows of its own (each flow is one sequence-numbered stream)",
                                     who, nflows, stream_queues(st)));
    const bool paced = st.rate ? st.rate->limited() : rate.limited();
    if (st.pattern.kind != Pattern::Kind::cbr && !paced)
        throw UsageError(fmt::format("{}--pattern {} spaces departures at a --rate: give one", who, st.pattern.str()));
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
    validate_procedure_mix();
    for (unsigned size : p.sizes) {
        if (size == 0) continue;  // the stream mix's own sizes
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

void RunSpec::validate_procedure_mix() const {
    if (single_fixed_stream()) return;
    const auto name = to_string(procedure.kind);
    // A procedure scales the whole mix by one load: each stream keeps its part of it, trial
    // after trial, and every trial lasts as long as the procedure says.
    bool rated = false, unrated = false;
    for (const auto& st : mix()) {
        const std::string who = streams.empty() ? "--size " + size.str() : "stream " + st.name;
        const auto refuse = [&](std::string_view what) {
            throw UsageError(fmt::format("{}: {} runs each trial at a load it chooses and for as long as it says; "
                                         "{} has no place in it",
                                         who, name, what));
        };
        if (!st.after.empty()) refuse("after=");
        if (st.bursts || st.endless_bursts) refuse("bursts=");
        if (st.count) refuse("count=");
        if (st.delay_s > 0) refuse("delay=");
        if (st.replay && st.replay->loops) refuse("a capture replayed a set number of times (loops=0 replays it over and over)");
        if (st.rate && !st.rate->limited())
            throw UsageError(fmt::format("{}: rate=max has no share of a load; {} scales every stream by its rate= or "
                                         "share=",
                                         who, name));
        (st.rate || (st.replay && !st.share) ? rated : unrated) = true;
    }
    if (rated && unrated)
        throw UsageError(fmt::format("{} scales the streams in proportion to their rates: give every stream a rate= "
                                     "(any unit) or none of them (share= or equal parts)",
                                     name));
    if (!procedure.sizes.empty() && procedure.sizes != std::vector<unsigned>{0})
        throw UsageError("--sizes with a stream mix: the mix's sizes are its streams' own; run one procedure per mix");
}

}  // namespace lr::spec
