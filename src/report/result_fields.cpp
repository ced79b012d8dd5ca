#include "report/result_fields.h"

#include <optional>

namespace lr::report {
namespace {

using J = nlohmann::json;

// A positive value, or null (not asked, not known).
J positive(double v) { return v > 0 ? J(v) : J(nullptr); }

}  // namespace

const Fields<stats::Rates>& rates_fields() {
    using F = Fields<stats::Rates>;
    static const F f{
        F::value("packets", [](const stats::Rates& r) { return r.packets; }),
        F::value("bytes", [](const stats::Rates& r) { return r.bytes; }),
        F::value("seconds", [](const stats::Rates& r) { return r.seconds; }),
        F::value("pps", [](const stats::Rates& r) { return r.pps(); }),
        F::value("l1_bps", [](const stats::Rates& r) { return r.l1_bps(); }),
        F::value("l2_bps", [](const stats::Rates& r) { return r.l2_bps(); }),
    };
    return f;
}

const Fields<result::LatencySummary>& latency_fields() {
    using F = Fields<result::LatencySummary>;
    using L = result::LatencySummary;
    static const F f{
        F::value("count", [](const L& l) { return l.count; }),
        F::value("min_ns", [](const L& l) { return l.min; }),
        F::value("mean_ns", [](const L& l) { return l.mean; }),
        F::value("p50_ns", [](const L& l) { return l.p50; }),
        F::value("p90_ns", [](const L& l) { return l.p90; }),
        F::value("p99_ns", [](const L& l) { return l.p99; }),
        F::value("p999_ns", [](const L& l) { return l.p999; }),
        F::value("max_ns", [](const L& l) { return l.max; }),
    };
    return f;
}

const Fields<result::LatencySummary>& live_latency_fields() {
    static const auto f = latency_fields().only({"count", "min_ns", "p50_ns", "p99_ns", "max_ns"});
    return f;
}

const std::vector<std::pair<std::string, double>>& latency_quantiles() {
    static const std::vector<std::pair<std::string, double>> q = {
        {"min_ns", 0}, {"p50_ns", 0.5}, {"p90_ns", 0.9}, {"p99_ns", 0.99}, {"p999_ns", 0.999}, {"max_ns", 1}};
    return q;
}

const Fields<result::LatencyBucket>& latency_bucket_fields() {
    using F = Fields<result::LatencyBucket>;
    using B = result::LatencyBucket;
    static const F f{
        F::value("lower_ns", [](const B& b) { return b.lower_ns; }),
        F::value("upper_ns", [](const B& b) { return b.upper_ns; }),
        F::value("count", [](const B& b) { return b.count; }),
    };
    return f;
}

const Fields<stats::Totals>& rx_class_fields() {
    using F = Fields<stats::Totals>;
    using T = stats::Totals;
    static const F f{
        F::value("ours", [](const T& t) { return t.ours; }),
        F::value("distinct", [](const T& t) { return t.unique; }),
        F::value("foreign", [](const T& t) { return t.foreign; }),
        F::value("foreign_other_run", [](const T& t) { return t.stale; }),
        F::value("malformed", [](const T& t) { return t.malformed; }),
        F::value("duplicates", [](const T& t) { return t.dup; }),
        F::value("reordered", [](const T& t) { return t.reordered; }),
        F::value("late", [](const T& t) { return t.late; }),
    };
    return f;
}

stats::Totals rx_classes(const stats::QueueSample& q) {
    stats::Totals t;
    stats::add_rx_classes(t, q);
    return t;
}

const Fields<stats::IntervalRow>& interval_fields() {
    using F = Fields<stats::IntervalRow>;
    using R = stats::IntervalRow;
    static const F f{
        F::value("t0", [](const R& r) { return r.t0; }),
        F::value("t1", [](const R& r) { return r.t1; }),
        F::part("tx", rates_fields(), [](const R& r) { return &r.tx; }),
        F::part("rx", rates_fields(), [](const R& r) { return &r.rx; }),
        F::value("rx_ours", [](const R& r) { return r.rx_ours; }),
        F::value("rx_reordered", [](const R& r) { return r.rx_reordered; }),
        F::value("rx_duplicates", [](const R& r) { return r.rx_dup; }),
        F::value("drops", [](const R& r) { return r.drops; }),
        F::value("backpressure", [](const R& r) { return r.backpressure; }),
        F::value("seq_gaps", [](const R& r) { return r.seq_gaps; }),
        F::value("requested_pps", [](const R& r) { return positive(r.requested_pps); }),
        F::value("generator_limited", [](const R& r) { return r.generator_limited; }),
        // The frames measured in this interval; null when the run measures no latency live.
        F::part("latency", live_latency_fields(), [](const R& r) { return result::live_latency(r); }),
    };
    return f;
}

const Fields<result::QueueResult>& queue_fields() {
    using F = Fields<result::QueueResult>;
    using Q = result::QueueResult;
    const auto rx = [](const Q& q) { return q.id.dir == stats::Dir::rx; };
    static const F f{
        F::value("dir", [](const Q& q) { return stats::dir_str(q.id.dir); }),
        F::value("port", [](const Q& q) { return q.id.port; }),
        F::value("queue", [](const Q& q) { return q.id.queue; }),
        F::value("packets", [](const Q& q) { return q.final.packets; }),
        F::value("bytes", [](const Q& q) { return q.final.bytes; }),
        F::value("backpressure", [](const Q& q) { return q.final.backpressure; }),
        F::value("no_buffer", [](const Q& q) { return q.final.no_buffer; }),
        F::value("unsent", [](const Q& q) { return q.final.unsent; }),
        F::value("tx_errors", [](const Q& q) { return q.final.tx_errors; }),
        F::value("timeouts", [](const Q& q) { return q.final.timeouts; }),
        F::value("active_s", [](const Q& q) { return q.active_s; }),
        // The rates over the queue's active time.
        F::spread(rates_fields().only({"pps", "l1_bps", "l2_bps"}),
                  [](const Q& q) { return std::optional(stats::Rates{q.final.packets, q.final.bytes, q.active_s}); }),
        F::spread(rx_class_fields(), [](const Q& q) { return std::optional(rx_classes(q.final)); }, rx),
        F::value("latency", [](const Q& q) { return latency_json(q.latency); }, rx),
    };
    return f;
}

const Fields<result::FlowResult>& flow_fields() {
    using F = Fields<result::FlowResult>;
    using S = result::FlowResult;
    static const F f{
        F::value("stream", [](const S& s) { return s.stream; }),
        F::value("sent", [](const S& s) { return s.tx_known ? J(s.sent) : J(nullptr); }),
        F::value("received", [](const S& s) { return s.received; }),
        F::value("lost", [](const S& s) { return s.lost; }),
        F::value("lost_basis", [](const S& s) { return s.tx_known ? "sent - received" : "sequence gaps"; }),
        F::value("reordered", [](const S& s) { return s.reordered; }),
        F::value("duplicates", [](const S& s) { return s.duplicates; }),
        F::value("late", [](const S& s) { return s.late; }),
        F::value("jitter_ns", [](const S& s) { return s.jitter_ns; }),
        F::value("implausible", [](const S& s) { return s.implausible; }),
        F::value("claimed_gaps", [](const S& s) { return s.claimed_gaps; }),
    };
    return f;
}

const Fields<result::SizeCount>& size_count_fields() {
    using F = Fields<result::SizeCount>;
    static const F f{
        F::value("size", [](const result::SizeCount& c) { return c.size; }),
        F::value("frames", [](const result::SizeCount& c) { return c.frames; }),
    };
    return f;
}

const Fields<result::StreamResult>& stream_fields() {
    using F = Fields<result::StreamResult>;
    using S = result::StreamResult;
    // Measured: the stream is signed and received in this run (else only what was sent).
    const auto measured = [](const S& s) { return s.measured; };
    static const F f{
        F::value("name", [](const S& s) { return s.name; }),
        F::value("index", [](const S& s) { return s.index; }),
        F::value("first_flow", [](const S& s) { return s.first_flow; }),
        F::value("flows", [](const S& s) { return s.flows; }),
        F::value("measured", measured),
        F::value("requested_pps", [](const S& s) { return positive(s.requested_pps); }),
        F::value("tx_pps", [](const S& s) { return s.tx_pps; }),
        F::value("sent", [](const S& s) { return s.sent; }),
        F::value("sent_bytes", [](const S& s) { return s.sent_bytes; }),
        F::value("unsigned_sent", [](const S& s) { return s.unsigned_sent; }),
        F::value("received", [](const S& s) { return s.measured ? J(s.received) : J(nullptr); }),
        F::value("lost", [](const S& s) { return s.measured ? J(s.lost) : J(nullptr); }),
        F::value("loss_pct", [](const S& s) {
            const uint64_t signed_sent = s.sent - s.unsigned_sent;
            return s.measured && signed_sent
                       ? J(100.0 * static_cast<double>(s.lost) / static_cast<double>(signed_sent))
                       : J(nullptr);
        }),
        F::value("reordered", [](const S& s) { return s.measured ? J(s.reordered) : J(nullptr); }),
        F::value("duplicates", [](const S& s) { return s.measured ? J(s.duplicates) : J(nullptr); }),
        F::value("late", [](const S& s) { return s.measured ? J(s.late) : J(nullptr); }),
        F::value("jitter_ns", [](const S& s) { return s.measured ? J(s.jitter_ns) : J(nullptr); }),
        F::part("latency", latency_fields(),
                [](const S& s) { return s.latency.count ? std::optional(s.latency) : std::nullopt; }),
        F::value("sizes", [](const S& s) { return json_array(size_count_fields(), s.sizes); }),
    };
    return f;
}

const Fields<result::GapSummary>& gap_fields() {
    using F = Fields<result::GapSummary>;
    using G = result::GapSummary;
    static const F f{
        F::value("gaps", [](const G& g) { return g.gaps; }),
        F::value("mean_ns", [](const G& g) { return g.mean_ns; }),
        F::value("stddev_ns", [](const G& g) { return g.stddev_ns; }),
        F::value("p50_ns", [](const G& g) { return g.p50_ns; }),
        F::value("p90_ns", [](const G& g) { return g.p90_ns; }),
        F::value("p99_ns", [](const G& g) { return g.p99_ns; }),
        F::value("max_ns", [](const G& g) { return g.max_ns; }),
        F::value("zero_fraction", [](const G& g) { return g.zero_fraction; }),
    };
    return f;
}

const Fields<result::RateResult>& rate_fields() {
    using F = Fields<result::RateResult>;
    using R = result::RateResult;
    const auto gaps = [](const result::GapSummary& g) { return g.measured ? &g : nullptr; };
    static const F f{
        F::value("requested", [](const R& r) { return r.requested; }),
        F::value("requested_pps", [](const R& r) { return positive(r.requested_pps); }),
        F::value("offered_pps", [](const R& r) { return r.offered_pps; }),
        F::value("error_pct", [](const R& r) { return r.requested_pps > 0 ? J(r.error_pct) : J(nullptr); }),
        F::value("line_rate_bps", [](const R& r) { return positive(r.line_rate_bps); }),
        F::value("pattern", [](const R& r) { return r.pattern; }),
        F::value("planned_s", [](const R& r) { return positive(r.planned_s); }),
        F::value("stretch_pct", [](const R& r) { return r.requested_pps > 0 ? J(r.stretch_pct) : J(nullptr); }),
        F::value("catch_up_s", [](const R& r) { return r.catch_up_s; }),
        F::value("stalls", [](const R& r) { return r.stalls; }),
        F::value("longest_stall_s", [](const R& r) { return r.longest_stall_s; }),
        F::value("largest_catch_up_frames", [](const R& r) { return r.largest_catch_up; }),
        F::value("skipped_slots", [](const R& r) { return r.skipped; }),
        F::value("behind_s", [](const R& r) { return r.behind_s; }),
        F::value("sender_nice", [](const R& r) { return r.sender_nice ? J(*r.sender_nice) : J(nullptr); }),
        F::part("departures", gap_fields(), [gaps](const R& r) { return gaps(r.departures); }),
        F::part("arrivals", gap_fields(), [gaps](const R& r) { return gaps(r.arrivals); }),
    };
    return f;
}

const Fields<PortCounters>& port_fields() {
    using P = PortCounters;
    using F = Fields<P>;
    using X = Fields<stats::PortSample>;
    using S = stats::PortSample;
    static const X xdp{
        X::value("received", [](const S& p) { return p.xdp_received; }),
        X::value("redirected", [](const S& p) { return p.xdp_redirected; }),
        X::value("passed", [](const S& p) { return p.xdp_passed; }),
        X::value("redirect_failed", [](const S& p) { return p.xdp_redirect_failed; }),
    };
    static const X xsk{
        X::value("rx_dropped", [](const S& p) { return p.xsk_rx_dropped; }),
        X::value("rx_ring_full", [](const S& p) { return p.xsk_rx_ring_full; }),
        X::value("rx_fill_ring_empty", [](const S& p) { return p.xsk_rx_fill_empty; }),
        X::value("rx_invalid_descs", [](const S& p) { return p.xsk_rx_invalid; }),
        X::value("tx_invalid_descs", [](const S& p) { return p.xsk_tx_invalid; }),
        X::value("tx_ring_empty_descs", [](const S& p) { return p.xsk_tx_ring_empty; }),
    };
    static const F f{
        F::value("index", [](const P& p) { return p.index; }),
        F::value("ipackets", [](const P& p) { return p.counters.ipackets; }),
        F::value("opackets", [](const P& p) { return p.counters.opackets; }),
        F::value("ibytes", [](const P& p) { return p.counters.ibytes; }),
        F::value("obytes", [](const P& p) { return p.counters.obytes; }),
        F::value("imissed", [](const P& p) { return p.counters.imissed; }),
        F::value("ierrors", [](const P& p) { return p.counters.ierrors; }),
        F::value("oerrors", [](const P& p) { return p.counters.oerrors; }),
        F::value("idropped", [](const P& p) { return p.counters.idropped; }),
        F::value("odropped", [](const P& p) { return p.counters.odropped; }),
        F::value("ipeer_xmit_refused", [](const P& p) { return p.counters.ipeer_xmit_refused; }),
        F::value("rx_nombuf", [](const P& p) { return p.counters.rx_nombuf; }),
        F::part("xdp", xdp, [](const P& p) { return &p.counters; }),
        F::part("xsk", xsk, [](const P& p) { return &p.counters; }),
    };
    return f;
}

const Fields<result::TxReconciliation>& tx_reconciliation_fields() {
    using F = Fields<result::TxReconciliation>;
    using T = result::TxReconciliation;
    static const F f{
        F::value("port", [](const T& t) { return t.port; }),
        F::value("handed", [](const T& t) { return t.handed; }),
        F::value("device_transmitted", [](const T& t) { return t.transmitted; }),
        F::value("device_dropped", [](const T& t) { return t.dropped; }),
        F::value("agrees", [](const T& t) { return t.agrees(); }),
    };
    return f;
}

const Fields<result::LinkEvent>& link_event_fields() {
    using F = Fields<result::LinkEvent>;
    using E = result::LinkEvent;
    static const F f{
        F::value("port", [](const E& e) { return e.port; }),
        F::value("t", [](const E& e) { return e.t; }),
        F::value("link", [](const E& e) { return e.up ? "up" : "down"; }),
    };
    return f;
}

const Fields<result::LinkOutage>& outage_fields() {
    using F = Fields<result::LinkOutage>;
    using O = result::LinkOutage;
    static const F f{
        F::value("port", [](const O& o) { return o.port; }),
        F::value("from", [](const O& o) { return o.from; }),
        F::value("to", [](const O& o) { return o.to < 0 ? J(nullptr) : J(o.to); }),
        F::value("seconds", [](const O& o) { return o.seconds; }),
        F::value("handed", [](const O& o) { return o.handed; }),
        F::value("egress_dropped", [](const O& o) { return o.egress_dropped; }),
        F::value("received", [](const O& o) { return o.received; }),
    };
    return f;
}

const Fields<result::TrialResult>& totals_fields() {
    using F = Fields<result::TrialResult>;
    using T = result::TrialResult;
    using A = Fields<result::LossAccount>;
    using L = result::LossAccount;
    static const A account{
        A::value("lost", [](const L& a) { return a.lost; }),
        A::value("host_rx_dropped", [](const L& a) { return a.host_rx_dropped; }),
        A::value("egress_dropped", [](const L& a) { return a.egress_dropped; }),
        A::value("unaccounted", [](const L& a) { return a.unaccounted; }),
    };
    static const F f{
        F::part("tx", rates_fields(),
                [](const T& r) { return std::optional(stats::Rates{r.tx.packets, r.tx.bytes, r.tx_seconds}); }),
        F::part("rx", rates_fields(),
                [](const T& r) { return std::optional(stats::Rates{r.rx.packets, r.rx.bytes, r.rx_seconds}); }),
        F::part("rx_classes", rx_class_fields(), [](const T& r) { return &r.rx; }),
        F::value("tx_backpressure", [](const T& r) { return r.tx.backpressure; }),
        F::value("tx_no_buffer", [](const T& r) { return r.tx.no_buffer; }),
        F::value("tx_unsent", [](const T& r) { return r.tx.unsent; }),
        F::value("loopback", [](const T& r) { return r.loopback; }),
        F::value("requested_pps", [](const T& r) { return positive(r.rate.requested_pps); }),
        F::value("offered_pps", [](const T& r) { return r.rate.offered_pps; }),
        F::value("generator_limited", [](const T& r) { return r.generator_limited; }),
        // Both only when TX and RX are in this run.
        F::value("lost", [](const T& r) { return r.loopback ? J(r.lost) : J(nullptr); }),
        F::part("loss_account", account, [](const T& r) { return r.loopback ? &r.loss : nullptr; }),
        F::value("tx_seconds", [](const T& r) { return r.tx_seconds; }),
        F::value("rx_seconds", [](const T& r) { return r.rx_seconds; }),
        F::value("drain_seconds", [](const T& r) { return r.drain_seconds; }),
        F::value("total_seconds", [](const T& r) { return r.total_seconds; }),
    };
    return f;
}

const Fields<result::TrialResult>& trial_latency_fields() {
    using F = Fields<result::TrialResult>;
    using T = result::TrialResult;
    static const F f{
        F::spread(latency_fields(), [](const T& r) { return std::optional(result::summarize(r.latency)); }),
        F::value("kind", [](const T& r) { return r.round_trip ? "round-trip" : "one-way"; }),
        // The whole histogram: its non-empty buckets, lowest first.
        F::value("buckets",
                 [](const T& r) { return json_array(latency_bucket_fields(), result::latency_buckets(r.latency)); }),
    };
    return f;
}

const Fields<result::TrialResult>& cpu_wait_fields() {
    using F = Fields<result::TrialResult>;
    using T = result::TrialResult;
    using W = Fields<result::CpuWait>;
    static const W wait{
        W::value("longest_s", [](const result::CpuWait& w) { return w.longest_s; }),
        W::value("share_pct", [](const result::CpuWait& w) { return w.share_pct; }),
    };
    static const F f{
        F::part("senders", wait, [](const T& r) { return &r.tx_cpu_wait; }),
        F::part("receivers", wait, [](const T& r) { return &r.rx_cpu_wait; }),
    };
    return f;
}

const Fields<result::TrialResult>& verdict_fields() {
    using F = Fields<result::TrialResult>;
    using T = result::TrialResult;
    static const F f{
        F::value("result", [](const T& r) { return result::verdict_str(r.verdict); }),
        F::value("reason", [](const T& r) { return r.verdict_reason; }),
    };
    return f;
}

const Fields<result::TrialResult>& trial_summary_fields() {
    using F = Fields<result::TrialResult>;
    using T = result::TrialResult;
    static const F f{
        F::value("verdict", [](const T& r) { return result::verdict_str(r.verdict); }),
        F::value("tx_packets", [](const T& r) { return r.tx.packets; }),
        F::value("rx_distinct", [](const T& r) { return r.rx.unique; }),
        F::value("lost", [](const T& r) { return r.loopback ? J(r.lost) : J(nullptr); }),
        F::value("offered_pps", [](const T& r) { return r.rate.offered_pps; }),
        F::value("tx_seconds", [](const T& r) { return r.tx_seconds; }),
    };
    return f;
}

const Fields<result::TrialLog>& trial_log_fields() {
    using F = Fields<result::TrialLog>;
    using T = result::TrialLog;
    static const F f{
        F::value("index", [](const T& t) { return t.index; }),
        F::value("size", [](const T& t) { return t.plan.frame_size; }),
        F::value("load_pps", [](const T& t) { return positive(t.plan.load_pps); }),
        F::value("duration_s", [](const T& t) { return t.plan.duration_s; }),
        F::value("count", [](const T& t) { return t.plan.count ? J(*t.plan.count) : J(nullptr); }),
        F::value("why", [](const T& t) { return t.plan.why; }),
        F::value("offered_pps", [](const T& t) { return t.offered_pps; }),
        F::value("tx_seconds", [](const T& t) { return t.tx_seconds; }),
        F::value("sent", [](const T& t) { return t.sent; }),
        F::value("received", [](const T& t) { return t.received; }),
        F::value("loss_ratio", [](const T& t) { return t.loss_ratio; }),
        F::value("host_drops", [](const T& t) { return t.host_drops; }),
        F::value("stalls", [](const T& t) { return t.stalls; }),
        F::value("longest_stall_s", [](const T& t) { return t.longest_stall_s; }),
        F::value("skipped_slots", [](const T& t) { return t.skipped; }),
        F::value("sender_cpu_wait_s", [](const T& t) { return t.sender_cpu_wait_s; }),
        F::value("probe", [](const T& t) { return t.plan.probe; }),
        F::value("valid", [](const T& t) { return t.valid; }),
        F::value("instrument_limited", [](const T& t) { return t.instrument_limited; }),
        F::value("invalid_reason", [](const T& t) { return t.valid ? J(nullptr) : J(t.invalid_reason); }),
    };
    return f;
}

J rates_json(const stats::Rates& r) { return rates_fields().json(r); }

J latency_json(const result::LatencySummary& l) { return l.count ? latency_fields().json(l) : J(nullptr); }

J interval_json(const stats::IntervalRow& row) { return interval_fields().json(row); }

}  // namespace lr::report
