#include "report/json_report.h"

#include "stats/tsc_clock.h"

#include <fmt/format.h>

#include "spec/options.h"
#include "util/error.h"

namespace lr::report {
nlohmann::json rates_json(const stats::Rates& r) {
    return {{"packets", r.packets}, {"bytes", r.bytes},           {"seconds", r.seconds},
            {"pps", r.pps()},       {"l1_bps", r.l1_bps()},       {"l2_bps", r.l2_bps()}};
}

namespace {

nlohmann::json gaps(const result::GapSummary& g) {
    if (!g.measured) return nullptr;
    return {{"gaps", g.gaps},         {"mean_ns", g.mean_ns}, {"stddev_ns", g.stddev_ns},        {"p50_ns", g.p50_ns},
            {"p90_ns", g.p90_ns},     {"p99_ns", g.p99_ns},   {"max_ns", g.max_ns}, {"zero_fraction", g.zero_fraction}};
}

nlohmann::json rate(const result::RateResult& r) {
    auto opt = [](double v) { return v > 0 ? nlohmann::json(v) : nlohmann::json(nullptr); };
    return {{"requested", r.requested},
            {"requested_pps", opt(r.requested_pps)},
            {"offered_pps", r.offered_pps},
            {"error_pct", r.requested_pps > 0 ? nlohmann::json(r.error_pct) : nlohmann::json(nullptr)},
            {"line_rate_bps", opt(r.line_rate_bps)},
            {"pattern", r.pattern},
            {"planned_s", opt(r.planned_s)},
            {"stretch_pct", r.requested_pps > 0 ? nlohmann::json(r.stretch_pct) : nlohmann::json(nullptr)},
            {"catch_up_s", r.catch_up_s},
            {"stalls", r.stalls},
            {"longest_stall_s", r.longest_stall_s},
            {"largest_catch_up_frames", r.largest_catch_up},
            {"skipped_slots", r.skipped},
            {"behind_s", r.behind_s},
            {"sender_nice", r.sender_nice ? nlohmann::json(*r.sender_nice) : nlohmann::json(nullptr)},
            {"departures", gaps(r.departures)},
            {"arrivals", gaps(r.arrivals)}};
}


}  // namespace

nlohmann::json latency_json(const result::LatencySummary& l) {
    if (!l.count) return nullptr;
    return {{"count", l.count}, {"min_ns", l.min},   {"mean_ns", l.mean}, {"p50_ns", l.p50},
            {"p90_ns", l.p90},  {"p99_ns", l.p99},   {"p999_ns", l.p999}, {"max_ns", l.max}};
}

nlohmann::json trial_report(const spec::RunSpec& spec, const result::TrialResult& r) {
    nlohmann::json j;

    auto intervals = nlohmann::json::array();
    for (const auto& row : r.intervals) {
        intervals.push_back({{"t0", row.t0},
                             {"t1", row.t1},
                             {"tx", rates_json(row.tx)},
                             {"rx", rates_json(row.rx)},
                             {"drops", row.drops},
                             {"backpressure", row.backpressure},
                             {"rx_ours", row.rx_ours},
                             {"rx_reordered", row.rx_reordered},
                             {"rx_duplicates", row.rx_dup},
                             {"seq_gaps", row.seq_gaps},
                             {"generator_limited", row.generator_limited}});
        // Latency of the frames measured in this interval (ns); null when not measured live.
        intervals.back()["latency"] =
            row.latency_live ? nlohmann::json{{"count", row.lat_count},
                                              {"min", row.lat_min},
                                              {"p50", row.lat_p50},
                                              {"p99", row.lat_p99},
                                              {"max", row.lat_max}}
                             : nlohmann::json(nullptr);
    }
    j["intervals"] = std::move(intervals);

    auto queues = nlohmann::json::array();
    for (const auto& q : r.queues) {
        stats::Rates rt{q.final.packets, q.final.bytes, q.active_s};
        queues.push_back({{"dir", stats::dir_str(q.id.dir)},
                          {"port", q.id.port},
                          {"queue", q.id.queue},
                          {"packets", q.final.packets},
                          {"bytes", q.final.bytes},
                          {"backpressure", q.final.backpressure},
                          {"no_buffer", q.final.no_buffer},
                          {"unsent", q.final.unsent},
                          {"tx_errors", q.final.tx_errors},
                          {"timeouts", q.final.timeouts},
                          {"active_s", q.active_s},
                          {"pps", rt.pps()},
                          {"l1_bps", rt.l1_bps()},
                          {"l2_bps", rt.l2_bps()}});
        if (q.id.dir == stats::Dir::rx) {
            auto& b = queues.back();
            b["ours"] = q.final.rx_ours;
            b["distinct"] = q.final.rx_unique;
            b["foreign"] = q.final.rx_foreign;
            b["foreign_other_run"] = q.final.rx_stale;
            b["malformed"] = q.final.rx_malformed;
            b["duplicates"] = q.final.rx_dup;
            b["reordered"] = q.final.rx_reordered;
            b["late"] = q.final.rx_late;
            b["latency"] = latency_json(q.latency);
        }
    }
    j["queues"] = std::move(queues);

    j["signature"] = {
        {"level", packet::sig_level_str(r.sig_level)},
        {"nonce", spec.nonce},
        {"timestamp_source", r.sig_level == packet::SigLevel::seq_ts
                                 ? stats::clock_source_name() +
                                       ", read once per TX burst just before it is handed to the driver and once per "
                                       "RX burst after it is received; one-way on one host"
                                 : std::string("none")},
    };
    auto streams = nlohmann::json::array();
    for (const auto& st : r.flows)
        streams.push_back({{"stream", st.stream},
                           {"sent", st.tx_known ? nlohmann::json(st.sent) : nlohmann::json(nullptr)},
                           {"received", st.received},
                           {"lost", st.lost},
                           {"lost_basis", st.tx_known ? "sent - received" : "sequence gaps"},
                           {"reordered", st.reordered},
                           {"duplicates", st.duplicates},
                           {"late", st.late},
                           {"jitter_ns", st.jitter_ns},
                           {"implausible", st.implausible},
                           {"claimed_gaps", st.claimed_gaps}});
    j["streams"] = std::move(streams);
    j["latency"] = latency_json(result::summarize(r.latency));
    if (!j["latency"].is_null()) j["latency"]["kind"] = r.round_trip ? "round-trip" : "one-way";
    j["transactions"] = spec.outstanding ? nlohmann::json{{"answered", r.rx.unique},
                                                          {"per_second", r.transactions_per_s},
                                                          {"outstanding", spec.outstanding},
                                                          {"timeouts", r.timeouts}}
                                         : nlohmann::json(nullptr);

    auto ports = nlohmann::json::array();
    for (size_t i = 0; i < r.ports.size(); ++i) {
        const auto& p = r.ports[i];
        ports.push_back({{"index", i},
                         {"ipackets", p.ipackets},
                         {"opackets", p.opackets},
                         {"ibytes", p.ibytes},
                         {"obytes", p.obytes},
                         {"imissed", p.imissed},
                         {"ierrors", p.ierrors},
                         {"oerrors", p.oerrors},
                         {"idropped", p.idropped},
                         {"odropped", p.odropped},
                         {"rx_nombuf", p.rx_nombuf},
                         {"xdp",
                          {{"received", p.xdp_received},
                           {"redirected", p.xdp_redirected},
                           {"passed", p.xdp_passed},
                           {"redirect_failed", p.xdp_redirect_failed}}},
                         {"xsk",
                          {{"rx_dropped", p.xsk_rx_dropped},
                           {"rx_ring_full", p.xsk_rx_ring_full},
                           {"rx_fill_ring_empty", p.xsk_rx_fill_empty},
                           {"rx_invalid_descs", p.xsk_rx_invalid},
                           {"tx_invalid_descs", p.xsk_tx_invalid},
                           {"tx_ring_empty_descs", p.xsk_tx_ring_empty}}}});
    }
    j["port_counters"] = std::move(ports);
    auto recon = nlohmann::json::array();
    for (const auto& t : r.tx_ports)
        recon.push_back({{"port", t.port},
                         {"handed", t.handed},
                         {"device_transmitted", t.transmitted},
                         {"device_dropped", t.dropped},
                         {"agrees", t.agrees()}});
    j["tx_reconciliation"] = std::move(recon);
    auto events = nlohmann::json::array();
    for (const auto& e : r.link_events)
        events.push_back({{"port", e.port}, {"t", e.t}, {"link", e.up ? "up" : "down"}});
    j["link_events"] = std::move(events);
    auto outages = nlohmann::json::array();
    for (const auto& o : r.outages)
        outages.push_back({{"port", o.port},
                           {"from", o.from},
                           {"to", o.to < 0 ? nlohmann::json(nullptr) : nlohmann::json(o.to)},
                           {"seconds", o.seconds},
                           {"handed", o.handed},
                           {"egress_dropped", o.egress_dropped},
                           {"received", o.received}});
    j["link_outages"] = std::move(outages);

    const stats::Rates tx{r.tx.packets, r.tx.bytes, r.tx_seconds};
    const stats::Rates rx{r.rx.packets, r.rx.bytes, r.rx_seconds};
    j["totals"] = {
        {"tx", rates_json(tx)},
        {"rx", rates_json(rx)},
        {"rx_classes",
         {{"ours", r.rx.ours},
          {"distinct", r.rx.unique},
          {"foreign", r.rx.foreign},
          {"foreign_other_run", r.rx.stale},
          {"malformed", r.rx.malformed},
          {"duplicates", r.rx.dup},
          {"reordered", r.rx.reordered},
          {"late", r.rx.late}}},
        {"tx_backpressure", r.tx.backpressure},
        {"tx_no_buffer", r.tx.no_buffer},
        {"tx_unsent", r.tx.unsent},
        {"loopback", r.loopback},
        {"requested_pps", r.rate.requested_pps > 0 ? nlohmann::json(r.rate.requested_pps) : nlohmann::json(nullptr)},
        {"offered_pps", r.rate.offered_pps},
        {"generator_limited", r.generator_limited},
        {"lost", r.loopback ? nlohmann::json(r.lost) : nlohmann::json(nullptr)},
        {"loss_account", r.loopback ? nlohmann::json{{"lost", r.loss.lost},
                                                     {"host_rx_dropped", r.loss.host_rx_dropped},
                                                     {"egress_dropped", r.loss.egress_dropped},
                                                     {"unaccounted", r.loss.unaccounted}}
                                    : nlohmann::json(nullptr)},
        {"tx_seconds", r.tx_seconds},
        {"rx_seconds", r.rx_seconds},
        {"drain_seconds", r.drain_seconds},
        {"total_seconds", r.total_seconds},
    };
    j["rate"] = rate(r.rate);
    auto wait = [](const result::CpuWait& w) { return nlohmann::json{{"longest_s", w.longest_s}, {"share_pct", w.share_pct}}; };
    j["cpu_wait"] = {{"senders", wait(r.tx_cpu_wait)}, {"receivers", wait(r.rx_cpu_wait)}};
    j["violations"] = r.violations;
    j["notes"] = r.notes;
    j["verdict"] = {{"result", result::verdict_str(r.verdict)}, {"reason", r.verdict_reason}};
    return j;
}

nlohmann::json make_report(const spec::RunSpec& spec, const nlohmann::json& environment,
                           const std::vector<result::TrialResult>& trials) {
    nlohmann::json j;
    j["schema_version"] = kSchemaVersion;
    j["tool"] = "linerate";
    j["spec"] = spec::spec_json(spec);
    j["environment"] = environment;
    if (trials.empty()) return j;
    // The last trial's result at the top level (a single trial: the whole run); with more,
    // every trial in "trials".
    j.update(trial_report(spec.with_trial(trials.back().trial), trials.back()));
    if (trials.size() > 1) {
        auto all = nlohmann::json::array();
        for (const auto& t : trials) {
            auto tj = trial_report(spec.with_trial(t.trial), t);
            tj["index"] = t.index;
            all.push_back(std::move(tj));
        }
        j["trials"] = std::move(all);
    }
    return j;
}

void write_json(const std::string& path, const nlohmann::json& j) { write_file(path, j.dump(2) + "\n", "JSON report"); }

}  // namespace lr::report
