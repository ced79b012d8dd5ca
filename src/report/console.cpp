#include "report/console.h"

#include "report/connect_report.h"
#include "report/impair_report.h"
#include "spec/rate.h"
#include "spec/stream_spec.h"
#include "stats/tsc_clock.h"

#include <algorithm>
#include <fmt/format.h>

namespace lr::report {

namespace {

std::string gap_line(const result::GapSummary& g) {
    return fmt::format("mean {:.3f} us, stddev {:.3f} us, p50 {:.3f}, p99 {:.3f}, max {:.3f} us ({:.1f} % in bursts)",
                       g.mean_ns / 1e3, g.stddev_ns / 1e3, g.p50_ns / 1e3, g.p99_ns / 1e3, g.max_ns / 1e3,
                       100.0 * g.zero_fraction);
}

void print_rate(std::FILE* out, const result::RateResult& r, double size) {
    if (r.requested_pps > 0)
        fmt::print(out, "Rate: asked {} ({}), offered {} ({:+.3f} %), {} pattern\n", r.requested,
                   spec::describe_rate(r.requested_pps, size, r.line_rate_bps), spec::format_pps(r.offered_pps),
                   r.error_pct, r.pattern);
    else
        fmt::print(out, "Rate: as fast as possible, offered {}\n",
                   spec::describe_rate(r.offered_pps, size, r.line_rate_bps));
    if (r.departures.measured) fmt::print(out, "Departure gaps (sender): {}\n", gap_line(r.departures));
    if (r.arrivals.measured) fmt::print(out, "Arrival gaps (receiver, per receive burst): {}\n", gap_line(r.arrivals));
}

// The streams of a mix, a line each: the worst by loss first when there are many.
void print_streams(std::FILE* out, const result::TrialResult& r) {
    constexpr size_t kShown = 20;
    std::vector<const result::StreamResult*> v;
    for (const auto& s : r.streams) v.push_back(&s);
    for (const auto* s : v)
        if (s->unsigned_sent)
            fmt::print(out, "{}: {} of its {} frames had no room for a signature: counted, not measured (received "
                            "and lost are the signed frames')\n",
                       s->name, s->unsigned_sent, s->sent);
    if (v.size() > kShown)
        std::stable_sort(v.begin(), v.end(), [](const auto* a, const auto* b) { return a->lost > b->lost; });
    fmt::print(out, "{:<16} {:>12} {:>14} {:>10} {:>12} {:>10} {:>9} {:>9} {:>10} {:>10} {:>9}\n", "stream", "sent",
               "bytes(L2)", "Mpps", "received", "lost", "lost %", "reord", "p50 us", "p99 us", "jitter us");
    for (size_t i = 0; i < v.size() && i < kShown; ++i) {
        const auto& s = *v[i];
        const auto num = [&](uint64_t x) { return s.measured ? fmt::format("{}", x) : std::string("-"); };
        const auto us = [&](double ns) { return s.latency.count ? fmt::format("{:.3f}", ns / 1e3) : std::string("-"); };
        fmt::print(out, "{:<16} {:>12} {:>14} {:>10.3f} {:>12} {:>10} {:>9} {:>9} {:>10} {:>10} {:>9}\n",
                   spec::name_prefix(s.name, 16), s.sent, s.sent_bytes, s.tx_pps / 1e6, num(s.received), num(s.lost),
                   s.measured && s.sent > s.unsigned_sent
                       ? fmt::format("{:.4f}", 100.0 * s.lost / (s.sent - s.unsigned_sent))
                       : std::string("-"),
                   num(s.reordered), us(static_cast<double>(s.latency.p50)), us(static_cast<double>(s.latency.p99)),
                   s.measured ? fmt::format("{:.3f}", s.jitter_ns / 1e3) : std::string("-"));
    }
    if (v.size() > kShown)
        fmt::print(out, "({} more streams, the least lost: every one is in --json and --csv)\n", v.size() - kShown);
    if (!r.rx_sizes.empty()) {
        std::string sizes;
        for (const auto& c : r.rx_sizes)
            if (sizes.size() < 200) sizes += fmt::format("{}{} B: {}", sizes.empty() ? "" : ", ", c.size, c.frames);
        fmt::print(out, "Received per size: {}{}\n", sizes, sizes.size() >= 200 ? ", ..." : "");
    }
}

}  // namespace

void print_header(std::FILE* out, bool latency) {
    fmt::print(out, "{:>8} | {:>9} {:>8} {:>8} | {:>9} {:>8} {:>8} | {:>9} {:>9} {:>9}", "time", "TX Mpps",
               "L1 Gb/s", "L2 Gb/s", "RX Mpps", "L1 Gb/s", "L2 Gb/s", "seq gaps", "drops", "backpres");
    if (latency) fmt::print(out, " | {:>9} {:>9}", "p50 us", "p99 us");
    fmt::print(out, "\n");
    std::fflush(out);
}

void print_interval(std::FILE* out, const stats::IntervalRow& row) {
    fmt::print(out, "{:>7.2f}s | {:>9.3f} {:>8.3f} {:>8.3f} | {:>9.3f} {:>8.3f} {:>8.3f} | {:>9} {:>9} {:>9}",
               row.t1, row.tx.pps() / 1e6, row.tx.l1_bps() / 1e9, row.tx.l2_bps() / 1e9, row.rx.pps() / 1e6,
               row.rx.l1_bps() / 1e9, row.rx.l2_bps() / 1e9, row.seq_gaps, row.drops, row.backpressure);
    if (row.latency_live && row.lat_count)
        fmt::print(out, " | {:>9.3f} {:>9.3f}", row.lat_p50 / 1e3, row.lat_p99 / 1e3);
    else if (row.latency_live)
        fmt::print(out, " | {:>9} {:>9}", "-", "-");
    if (row.generator_limited)
        fmt::print(out, "  generator-limited: asked {}, offered {}", spec::format_pps(row.requested_pps),
                   spec::format_pps(row.tx.pps()));
    fmt::print(out, "\n");
    std::fflush(out);
}

void print_summary(std::FILE* out, const spec::RunSpec& spec, const result::TrialResult& r) {
    if (!r.impair.empty()) {  // linerate impair: what each direction did
        print_impair_summary(out, r);
        return;
    }
    if (!r.connect.empty()) {  // linerate connect: how the handshakes ended
        print_connect_summary(out, r);
        return;
    }
    fmt::print(out, "\n{:<3} {:<20} {:>5} {:>14} {:>16} {:>9} {:>9} {:>9} {:>12}\n", "dir", "port", "queue",
               "packets", "bytes(L2)", "Mpps", "L1 Gb/s", "active s", "backpressure");
    // active s: TX, the worker's run time; RX, first to last received burst.
    for (const auto& q : r.queues) {
        stats::Rates rt{q.final.packets, q.final.bytes, q.active_s};
        fmt::print(out, "{:<3} {:<20} {:>5} {:>14} {:>16} {:>9.3f} {:>9.3f} {:>9.3f} {:>12}\n",
                   stats::dir_str(q.id.dir), q.id.port, q.id.queue, q.final.packets, q.final.bytes, rt.pps() / 1e6,
                   rt.l1_bps() / 1e9, q.active_s, q.final.backpressure);
    }
    const double secs = r.tx_seconds;
    if (spec.tx_enabled()) {
        stats::Rates t{r.tx.packets, r.tx.bytes, secs};
        fmt::print(out, "TX total: {} packets, {} bytes in {:.3f}s = {:.3f} Mpps, {:.3f} Gb/s L1, {:.3f} Gb/s L2\n",
                   r.tx.packets, r.tx.bytes, secs, t.pps() / 1e6, t.l1_bps() / 1e9, t.l2_bps() / 1e9);
    }
    // A mix's rates in bits count its mean frame, as sent.
    const double size = spec.single_fixed_stream() || !r.tx.packets
                            ? spec.frame.frame_size
                            : static_cast<double>(r.tx.bytes) / static_cast<double>(r.tx.packets);
    if (spec.tx_enabled()) print_rate(out, r.rate, size);
    if (spec.rx_enabled()) {
        stats::Rates t{r.rx.packets, r.rx.bytes, r.rx_seconds};
        fmt::print(out,
                   "RX total: {} packets, {} bytes; first to last packet {:.3f}s = {:.3f} Mpps, {:.3f} Gb/s L1, "
                   "{:.3f} Gb/s L2\n",
                   r.rx.packets, r.rx.bytes, r.rx_seconds, t.pps() / 1e6, t.l1_bps() / 1e9, t.l2_bps() / 1e9);
    }
    if (spec.rx_enabled() && r.sig_level != packet::SigLevel::none) {
        fmt::print(out, "RX frames: ours {} (distinct {}), foreign {} (other runs {}), malformed {}\n", r.rx.ours,
                   r.rx.unique, r.rx.foreign, r.rx.stale, r.rx.malformed);
        uint64_t lost = 0;
        double jit = 0;
        for (const auto& st : r.flows) {
            lost += st.lost;
            jit = std::max(jit, st.jitter_ns);
        }
        fmt::print(out, "Sequence ({} flows): lost {}, reordered {}, duplicates {}, late {}\n", r.flows.size(),
                   lost, r.rx.reordered, r.rx.dup, r.rx.late);
        const auto l = result::summarize(r.latency);
        if (l.count)
            fmt::print(out,
                       "Latency {}, us: min {:.3f} mean {:.3f} p50 {:.3f} p90 {:.3f} p99 {:.3f} p99.9 {:.3f} "
                       "max {:.3f}; jitter (RFC 3550, worst stream) {:.3f}\n",
                       r.round_trip ? "round-trip" : "one-way", l.min / 1e3, l.mean / 1e3, l.p50 / 1e3, l.p90 / 1e3,
                       l.p99 / 1e3, l.p999 / 1e3, l.max / 1e3, jit / 1e3);
        if (l.count) fmt::print(out, "Timestamps: {}, one read per burst\n", stats::clock_source_name());
    }
    if (!spec.single_fixed_stream()) print_streams(out, r);
    if (spec.outstanding)
        fmt::print(out, "Transactions: {} answered, {:.0f}/s with at most {} outstanding per queue; {} timed out\n",
                   r.rx.unique, r.transactions_per_s, spec.outstanding, r.timeouts);
    for (const auto& t : r.tx_ports)
        fmt::print(out, "TX {}: handed {} frames to the device; it transmitted {} and dropped {}{}\n", t.port, t.handed,
                   t.transmitted, t.dropped, t.agrees() ? "" : " (does not add up: see the note)");
    if (r.loopback) {
        const auto& a = r.loss;
        fmt::print(out, "Lost: {} ({:.6f}%) after {:.3f}s drain: {} dropped by this host's receive path, {} by its "
                        "egress device, {} unaccounted (lost on the path under test)\n",
                   r.lost, r.tx.packets ? 100.0 * r.lost / r.tx.packets : 0.0, r.drain_seconds, a.host_rx_dropped,
                   a.egress_dropped, a.unaccounted);
    }
    uint64_t drops = 0;
    for (const auto& p : r.ports) drops += p.drops();
    fmt::print(out, "Port drop counters (missed+errors+no-mbuf): {}\n", drops);
    for (const auto& n : r.notes) fmt::print(out, "note: {}\n", n);
    for (const auto& v : r.violations) fmt::print(out, "INVARIANT BROKEN: {}\n", v);
    fmt::print(out, "Verdict: {}{}{}\n", result::verdict_str(r.verdict), r.verdict_reason.empty() ? "" : " - ",
               r.verdict_reason);
    std::fflush(out);
}

void ConsoleSink::trial_started(const result::TrialStart& t) {
    spec_ = *t.spec;
    of_ = t.of;
    if (of_ != 1) fmt::print(out_, "{}Trial {}{}\n", t.index ? "\n" : "", t.index + 1, of_ ? fmt::format(" of {}", of_) : "");
    if (!quiet_) print_header(out_, spec_.live_latency());
}

void ConsoleSink::interval(const stats::IntervalRow& row) {
    if (quiet_) return;
    print_interval(out_, row);
    if (!impair_.empty()) print_impair_live(out_, impair_);
    if (!connect_.empty()) print_connect_live(out_, connect_, connect_prev_, row.t1 - row.t0);
}

void ConsoleSink::trial_finished(const result::TrialResult& r) { print_summary(out_, spec_, r); }

}  // namespace lr::report
