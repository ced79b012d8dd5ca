#include "engine/aggregate.h"

#include "engine/stream_results.h"
#include "result/checks.h"
#include "util/cpus.h"

#include <algorithm>
#include <cstring>
#include <fmt/format.h>

namespace lr::engine {

using stats::Dir;

std::vector<result::FlowResult> merge_flows(const std::vector<TxStreams>& tx,
                                            const std::vector<const stats::RxResult*>& rx, bool sender_known,
                                            std::vector<std::string>& violations) {
    size_t n = 0;  // stream ids are dense: size everything once
    for (const auto& t : tx)
        for (auto id : *t.streams) n = std::max<size_t>(n, id + 1u);
    for (const auto* r : rx) n = std::max({n, r->streams.size(), r->sink.size()});
    std::vector<result::FlowResult> out(n);
    std::vector<uint64_t> best(n, 0), gaps(n, 0);
    for (uint32_t s = 0; s < n; ++s) out[s].stream = s;
    for (const auto& t : tx)
        if (t.sent && t.sent->size() == t.streams->size())
            for (size_t k = 0; k < t.streams->size(); ++k) {
                auto& r = out[(*t.streams)[k]];
                r.tx_known = true;
                r.sent += (*t.sent)[k];
            }
    for (const auto* rr : rx) {
        const auto& sk = rr->sink;  // XDP sink: frames and highest sequence only
        for (uint32_t s = 0; s < sk.size(); ++s) {
            out[s].received += sk[s].first;
            gaps[s] += sk[s].second > sk[s].first ? sk[s].second - sk[s].first : 0;
        }
        const auto& st = rr->streams;
        for (uint32_t s = 0; s < st.size(); ++s) {
            const auto& c = st[s].seq.counts();
            if (!c.any()) continue;
            auto& r = out[s];
            r.received += c.received;
            r.reordered += c.reordered;
            r.duplicates += c.duplicates;
            r.late += c.late;
            if (s < rr->flow_totals.size()) r.rx.merge(rr->flow_totals[s]);
            gaps[s] += st[s].seq.gaps();
            if (c.received > best[s]) {  // a stream normally lands on one queue
                best[s] = c.received;
                r.jitter_ns = st[s].jitter.ns();
            }
        }
    }
    for (auto& r : out) {
        if (sender_known && r.tx_known) {
            if (r.received > r.sent)
                violations.push_back(fmt::format("stream {}: received {} distinct packets but sent {}", r.stream,
                                                 r.received, r.sent));
            else
                r.lost = r.sent - r.received;
        } else if (const uint64_t g = gaps[r.stream]; g > 1000 && g / 1000 > std::max<uint64_t>(r.received, 1)) {
            r.implausible = true;
            r.claimed_gaps = g;
        } else {
            r.lost = g;
        }
    }
    // Only streams that exist: sent something or received something.
    std::vector<result::FlowResult> used;
    for (const auto& r : out)
        if (r.tx_known || r.received || r.late || r.duplicates) used.push_back(r);
    return used;
}

namespace {

// Requested against offered, how the departures and arrivals were spaced, and whether the
// senders kept up.
// The nice value the paced senders ran at (the least favoured of them), with a note when the
// kernel refused to raise it: another process on a sender's core can then hold it off for a
// whole time slice, and its late frames leave together.
void sender_priority(result::TrialResult& r, const spec::RunSpec& spec,
                     const std::vector<const result::QueueResult*>& senders) {
    if (!spec.sender_nice || senders.empty()) return;
    int ran_at = *spec.sender_nice, refused = 0;
    for (const auto* q : senders) {
        ran_at = std::max(ran_at, static_cast<int>(q->final.nice));
        if (q->final.nice_errno) refused = q->final.nice_errno;
    }
    r.rate.sender_nice = ran_at;
    if (refused)
        r.notes.push_back(fmt::format("couldn't raise the paced senders to nice {} ({}: it needs CAP_SYS_NICE, or an "
                                      "RLIMIT_NICE of {}): they ran at nice {}, so other processes on their cores can delay departures",
                                      *spec.sender_nice, std::strerror(refused), 20 - *spec.sender_nice, ran_at));
    // With the kernel's session groups a thread's nice value weighs only within its session:
    // a CPU-bound process of another session still takes a core from the group as a whole.
    const auto group = util::session_group_nice();
    if (group && *group > ran_at)
        r.notes.push_back(fmt::format(
            "the paced senders ran at nice {} within this session's scheduling group, which runs at nice {} "
            "(kernel.sched_autogroup_enabled=1): processes of other sessions share each core with the whole group "
            "and can still delay departures; raise the group with `echo {} > /proc/self/autogroup` in the shell "
            "that starts linerate (CAP_SYS_NICE), or set kernel.sched_autogroup_enabled=0",
            ran_at, *group, ran_at));
}

void rate_result(result::TrialResult& r, const spec::RunSpec& spec, const std::vector<TxStreams>& tx,
                 const std::vector<const stats::RxResult*>& rx) {
    auto& rr = r.rate;
    rr.requested = spec.rate.str();
    rr.requested_pps = spec.rate_pps;
    rr.line_rate_bps = spec.line_rate_bps;
    rr.pattern = spec.pattern.str();
    rr.skipped = r.tx.skipped;
    rr.behind_s = r.tx.behind_ns * 1e-9;
    rr.catch_up_s = spec.catch_up_s;
    rr.stalls = r.tx.stalls;
    rr.longest_stall_s = r.tx.longest_stall_ns * 1e-9;
    rr.largest_catch_up = r.tx.catch_up_max;
    stats::GapStats dep, arr;
    for (const auto& t : tx)
        if (t.departures) dep.merge(*t.departures);
    for (const auto* x : rx) arr.merge(x->arrivals);
    rr.departures = result::summarize(dep);
    rr.arrivals = result::summarize(arr);
    if (spec.rate_pps <= 0) {  // as fast as possible: what the devices took over the TX phase
        rr.offered_pps = r.tx_seconds > 0 ? r.tx.packets / r.tx_seconds : 0;
        return;
    }
    // Paced: each queue's schedule is exact, and a frame sent within the catch-up window of its
    // slot was offered on it; only the slots a queue gave up were not. So each queue offered its
    // share times the fraction of its slots it filled, free of start and stop effects and of
    // stalls it made up for (which are reported below, not hidden).
    std::vector<const result::QueueResult*> senders;
    for (const auto& q : r.queues)
        if (q.id.dir == Dir::tx) senders.push_back(&q);
    sender_priority(r, spec, senders);
    for (const auto* q : senders) {
        const double slots = static_cast<double>(q->final.packets + q->final.tx_skipped);
        if (slots > 0) rr.offered_pps += spec.rate_pps / senders.size() * q->final.packets / slots;
    }
    rr.error_pct = 100.0 * (rr.offered_pps - spec.rate_pps) / spec.rate_pps;
    rr.planned_s = spec.count ? static_cast<double>(*spec.count) / spec.rate_pps : spec.duration_s;
    if (rr.planned_s > 0 && r.tx_seconds > 0) rr.stretch_pct = 100.0 * (r.tx_seconds / rr.planned_s - 1);
    if (rr.offered_pps < stats::kGeneratorLimited * spec.rate_pps) {
        r.generator_limited = true;
        r.notes.push_back(fmt::format("generator-limited: asked {}, offered {} ({:.1f} % short)",
                                      spec::format_pps(spec.rate_pps), spec::format_pps(rr.offered_pps),
                                      -rr.error_pct));
    }
    if (rr.skipped)
        r.notes.push_back(fmt::format("the senders fell further behind their schedule than the catch-up window "
                                      "({}): they gave up {} departure slots ({:.3f} s) rather than send them later; "
                                      "{} stalls, the longest {}",
                                      spec::format_seconds(rr.catch_up_s), rr.skipped, rr.behind_s, rr.stalls,
                                      spec::format_seconds(rr.longest_stall_s)));
    else if (rr.stalls)
        r.notes.push_back(fmt::format("the senders stalled {} times (the longest {}) and made up for each within the "
                                      "catch-up window ({}): at most {} frames sent late at once",
                                      rr.stalls, spec::format_seconds(rr.longest_stall_s), spec::format_seconds(rr.catch_up_s),
                                      rr.largest_catch_up));
}

// How long the workers of each direction waited for their CPUs, with a note when receivers
// waited enough (1 % of their run) to show in latency and arrival times.
void cpu_wait_result(result::TrialResult& r) {
    constexpr double kNotablePct = 1.0;
    for (const auto& q : r.queues) {
        auto& w = q.id.dir == Dir::tx ? r.tx_cpu_wait : r.rx_cpu_wait;
        const double wait_s = q.final.cpu_wait_ns * 1e-9;
        const double run_s = q.final.end_ns > q.final.start_ns ? (q.final.end_ns - q.final.start_ns) * 1e-9 : 0;
        w.longest_s = std::max(w.longest_s, wait_s);
        if (run_s > 0) w.share_pct = std::max(w.share_pct, std::min(100.0, 100 * wait_s / run_s));
    }
    if (r.rx_cpu_wait.share_pct >= kNotablePct)
        r.notes.push_back(fmt::format("a receiving worker waited {} for its CPU ({:.1f} % of its run: another task held "
                                      "the core); frames waited in its ring meanwhile, so latency and arrival times "
                                      "include that wait",
                                      spec::format_seconds(r.rx_cpu_wait.longest_s), r.rx_cpu_wait.share_pct));
}

// Who dropped what: each sending port's count against its device's own, and the loss split
// between this host (egress device, receive path) and the path under test.
void account_losses(result::TrialResult& r, bool reflect) {
    std::vector<int> role(r.ports.size(), 0);  // bit 0: sends, bit 1: receives
    std::vector<uint64_t> handed(r.ports.size(), 0);
    for (const auto& q : r.queues) {
        if (q.id.port_index >= r.ports.size()) continue;
        role[q.id.port_index] |= q.id.dir == Dir::tx ? 1 : 2;
        if (q.id.dir == Dir::tx) handed[q.id.port_index] += q.final.packets;
    }
    auto& a = r.loss;
    for (size_t p = 0; p < r.ports.size(); ++p) {
        const auto& ps = r.ports[p];
        if (role[p] & 1) {
            a.egress_dropped += ps.egress_drops();
            std::string name;
            for (const auto& q : r.queues)
                if (q.id.port_index == p) name = q.id.port;
            result::TxReconciliation t{name, handed[p], ps.opackets, ps.egress_drops()};
            if (!t.agrees())
                r.notes.push_back(fmt::format(
                    "{}: linerate handed {} frames to the device, which counted {} transmitted and {} dropped "
                    "({:+} frames: other traffic on the port, or a device that does not count all it drops)",
                    name, t.handed, t.transmitted, t.dropped,
                    static_cast<int64_t>(t.transmitted + t.dropped) - static_cast<int64_t>(t.handed)));
            r.tx_ports.push_back(std::move(t));
        }
        if (role[p] & 2) a.host_rx_dropped += ps.host_rx_drops();
    }
    a.lost = r.lost;
    const uint64_t host = a.egress_dropped + a.host_rx_dropped;
    a.unaccounted = a.lost > host ? a.lost - host : 0;
    if (a.egress_dropped && !r.loopback && !r.round_trip && !reflect)
        r.violations.push_back(fmt::format(
            "the egress device dropped {} of the {} frames linerate handed it: they were counted as sent but "
            "never left (the far end down, or a queue beyond the device full: a veth drops what its peer "
            "cannot take in)",
            a.egress_dropped, r.tx.packets));
    else if (a.egress_dropped)
        r.notes.push_back(fmt::format("this host's egress device dropped {} frames linerate had handed it",
                                      a.egress_dropped));
    for (const auto& o : r.outages) r.notes.push_back(result::outage_text(o));
    if (a.host_rx_dropped)
        r.notes.push_back(fmt::format("this host's receive path dropped {} frames that reached it (no socket on "
                                      "their queue, a full socket ring, or the NIC missed them): not the network's "
                                      "loss",
                                      a.host_rx_dropped));
}

}  // namespace

void aggregate_counters(result::TrialResult& r, const spec::RunSpec& spec, const stats::Snapshot& fin, bool loopback) {
    stats::check_invariants(r.ids, fin, loopback, r.violations);
    r.notes.insert(r.notes.begin(), spec.notes.begin(), spec.notes.end());  // what the spec changed
    r.ports = fin.ports;
    r.tx = stats::total(r.ids, fin, Dir::tx);
    r.rx = stats::total(r.ids, fin, Dir::rx);
    for (size_t i = 0; i < r.ids.size(); ++i) {
        const auto& q = fin.queues[i];
        const bool is_rx = r.ids[i].dir == Dir::rx;
        const uint64_t a = is_rx ? q.first_pkt_ns : q.start_ns, b = is_rx ? q.last_pkt_ns : q.end_ns;
        r.queues.push_back({r.ids[i], q, b > a ? (b - a) * 1e-9 : 0, {}});
    }
}

void aggregate(result::TrialResult& r, const spec::RunSpec& spec, const stats::Snapshot& fin,
               const std::vector<TxStreams>& tx, const std::vector<const stats::RxResult*>& rx, bool ended_early) {
    aggregate_counters(r, spec, fin, r.loopback);
    size_t rxi = 0;
    for (auto& qr : r.queues) {
        if (qr.id.dir != Dir::rx || rxi >= rx.size()) continue;
        qr.latency = result::summarize(rx[rxi]->latency);
        r.latency.merge(rx[rxi]->latency);
        ++rxi;
    }
    r.sig_level = spec.sig_level();
    for (const auto& t : spec.tx)
        for (const auto& x : spec.rx)
            if (t.port == x.port && !spec.reflect) r.round_trip = true;
    for (const auto& q : fin.queues) r.timeouts += q.timeouts;
    if (spec.rx_enabled() && spec.signed_frames() && !spec.reflect)
        r.flows = merge_flows(tx, rx, spec.tx_enabled(), r.violations);
    // Each queue's frames, with its port: RX queues in the order of their slots, as `rx`.
    std::vector<unsigned> rx_ports, tx_ports;
    for (const auto& id : r.ids) (id.dir == Dir::rx ? rx_ports : tx_ports).push_back(id.port_index);
    for (size_t k = 0; k < rx.size(); ++k)
        for (auto& f : rx[k]->capture.frames()) {
            f.port_index = k < rx_ports.size() ? rx_ports[k] : 0;
            r.captured.push_back(std::move(f));
        }
    for (size_t k = 0; k < tx.size(); ++k)
        if (tx[k].capture)
            for (auto& f : tx[k].capture->frames()) {
                f.port_index = k < tx_ports.size() ? tx_ports[k] : 0;
                r.captured.push_back(std::move(f));
            }
    std::stable_sort(r.captured.begin(), r.captured.end(),
                     [](const stats::CapturedFrame& a, const stats::CapturedFrame& b) { return a.ts_ns < b.ts_ns; });
    for (const auto& st : r.flows)
        if (st.implausible)
            r.notes.push_back(fmt::format(
                "anomaly: stream {} received {} frames but its sequence numbers claim {} missing: a stray or forged "
                "frame with a far-off sequence, not counted as loss (with the sender in this run, loss is sent minus "
                "received and cannot be faked)",
                st.stream, st.received, st.claimed_gaps));
    if (spec.rx_enabled() && spec.afxdp.rx_mode == spec::RxMode::xdp)
        r.notes.push_back("RX counted by the XDP sink in the driver: the reduced set (frames, bytes and sequence "
                          "gaps per stream); duplicates count as received, reordering and latency are not "
                          "measured");
    // The TX phase as the workers saw it: first TX worker start to last TX worker end.
    uint64_t t_first = UINT64_MAX, t_last = 0;
    for (const auto& q : r.queues)
        if (q.id.dir == Dir::tx && q.final.start_ns && q.final.end_ns) {
            t_first = std::min(t_first, q.final.start_ns);
            t_last = std::max(t_last, q.final.end_ns);
        }
    if (t_last > t_first) r.tx_seconds = (t_last - t_first) * 1e-9;
    uint64_t r_first = UINT64_MAX, r_last = 0;
    for (const auto& q : r.queues)
        if (q.id.dir == Dir::rx && q.final.first_pkt_ns) {
            r_first = std::min(r_first, q.final.first_pkt_ns);
            r_last = std::max(r_last, q.final.last_pkt_ns);
        }
    if (r_last > r_first) r.rx_seconds = (r_last - r_first) * 1e-9;
    if (spec.outstanding && r.tx_seconds > 0) r.transactions_per_s = r.rx.unique / r.tx_seconds;
    if (spec.tx_enabled()) rate_result(r, spec, tx, rx);
    stream_results(r, spec, tx, rx);
    // Loss counts distinct test frames: foreign and malformed frames, duplicates and late
    // arrivals never make up for a lost one.
    if (r.loopback && r.rx.unique <= r.tx.packets) r.lost = r.tx.packets - r.rx.unique;
    account_losses(r, spec.reflect);
    cpu_wait_result(r);
    if (spec.count && spec.tx_enabled() && r.tx.packets != *spec.count && !ended_early)
        r.violations.push_back(fmt::format("sent {} packets but --count asked for {}", r.tx.packets, *spec.count));
    if (r.tx.unsent)
        r.notes.push_back(fmt::format("{} built packets were never accepted by the device when TX stopped "
                                      "(not counted as sent)",
                                      r.tx.unsent));
    if (r.flushed_before)
        r.notes.push_back(fmt::format("{} frames were waiting in the receive queues before the trial started "
                                      "(discarded, not counted)",
                                      r.flushed_before));
}

void decide(result::TrialResult& r, const spec::RunSpec& spec) {
    if (!r.violations.empty()) {
        r.verdict = result::Verdict::invalid;
        r.verdict_reason = r.violations.front();
    } else if (const auto why = result::first_failure(result::trial_checks(spec.thresholds, r, spec.line_rate_bps, ""));
               !why.empty()) {
        r.verdict = result::Verdict::fail;
        r.verdict_reason = why;
    } else {
        r.verdict = result::Verdict::pass;
    }
}

}  // namespace lr::engine
