#include "report/json_report.h"

#include "report/connect_report.h"
#include "report/impair_report.h"

#include "report/result_fields.h"
#include "spec/options.h"
#include "stats/tsc_clock.h"

namespace lr::report {

nlohmann::json trial_report(const spec::RunSpec& spec, const result::TrialResult& r) {
    using J = nlohmann::json;
    J j;
    j["intervals"] = json_array(interval_fields(), r.intervals);
    j["queues"] = json_array(queue_fields(), r.queues);
    j["signature"] = {
        {"level", packet::sig_level_str(r.sig_level)},
        {"nonce", spec.nonce},
        {"timestamp_source", r.sig_level == packet::SigLevel::seq_ts
                                 ? stats::clock_source_name() +
                                       ", read once per TX burst just before it is handed to the driver and once per "
                                       "RX burst after it is received; one-way on one host"
                                 : std::string("none")},
    };
    j["streams"] = json_array(stream_fields(), r.streams);
    j["flows"] = json_array(flow_fields(), r.flows);
    j["rx_sizes"] = json_array(size_count_fields(), r.rx_sizes);
    j["latency"] = r.latency.count() ? trial_latency_fields().json(r) : J(nullptr);
    j["transactions"] = spec.outstanding ? J{{"answered", r.rx.unique},
                                             {"per_second", r.transactions_per_s},
                                             {"outstanding", spec.outstanding},
                                             {"timeouts", r.timeouts}}
                                         : J(nullptr);
    std::vector<PortCounters> ports;
    for (size_t i = 0; i < r.ports.size(); ++i) ports.push_back({i, r.ports[i]});
    j["port_counters"] = json_array(port_fields(), ports);
    j["tx_reconciliation"] = json_array(tx_reconciliation_fields(), r.tx_ports);
    j["link_events"] = json_array(link_event_fields(), r.link_events);
    j["link_outages"] = json_array(outage_fields(), r.outages);
    j["totals"] = totals_fields().json(r);
    j["rate"] = rate_fields().json(r.rate);
    j["cpu_wait"] = cpu_wait_fields().json(r);
    j["violations"] = r.violations;
    j["notes"] = r.notes;
    j["verdict"] = verdict_fields().json(r);
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
    if (!trials.back().impair.empty()) j["impair"] = impair_json(trials.back().impair);  // linerate impair
    if (!trials.back().connect.empty()) j["connect"] = connect_json(trials.back().connect);  // linerate connect
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
