// The fields of every result type, one list each (report/fields.h): the JSON report, the JSON
// lines, the CSV files and the Prometheus exporter all write a result through its list, so
// two outputs cannot disagree on a key or a value.
//
// Latency keys are spelt one way everywhere: the unit in the name (`min_ns`, `p50_ns`,
// `p999_ns`, `mean_ns`, `max_ns`), beside `count`.
#pragma once
#include <cstddef>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "report/fields.h"
#include "result/procedure_result.h"
#include "result/result.h"
#include "stats/snapshot.h"

namespace lr::report {

// A port's counters over a trial, with its place in the run's port list.
struct PortCounters {
    size_t index = 0;
    stats::PortSample counters;
};

const Fields<stats::Rates>& rates_fields();                  // packets, bytes, seconds, pps, l1_bps, l2_bps
const Fields<result::LatencySummary>& latency_fields();      // count, min_ns, mean_ns, p50_ns ... max_ns
const Fields<result::LatencySummary>& live_latency_fields(); // what an interval measures: count, min, p50, p99, max
const Fields<result::LatencyBucket>& latency_bucket_fields();
const Fields<stats::Totals>& rx_class_fields();              // ours, distinct, foreign, ..., late
const Fields<stats::IntervalRow>& interval_fields();
const Fields<result::QueueResult>& queue_fields();
const Fields<result::FlowResult>& flow_fields();   // per flow (signed stream id): the report's "flows"
const Fields<result::SizeCount>& size_count_fields();
const Fields<result::StreamResult>& stream_fields();  // per stream of the mix: the report's "streams"
const Fields<result::GapSummary>& gap_fields();
const Fields<result::RateResult>& rate_fields();
const Fields<PortCounters>& port_fields();
const Fields<result::TxReconciliation>& tx_reconciliation_fields();
const Fields<result::LinkEvent>& link_event_fields();
const Fields<result::LinkOutage>& outage_fields();
const Fields<result::TrialResult>& totals_fields();
const Fields<result::TrialResult>& trial_latency_fields();   // the trial's summary, kind and histogram buckets
const Fields<result::TrialResult>& cpu_wait_fields();
const Fields<result::TrialResult>& verdict_fields();
const Fields<result::TrialResult>& trial_summary_fields();   // one line per trial (JSON lines)
const Fields<result::TrialLog>& trial_log_fields();          // a procedure's trials

// The latency fields that are quantiles, with their quantile (min 0, max 1): the Prometheus
// exporter's `quantile` label.
const std::vector<std::pair<std::string, double>>& latency_quantiles();

// The receive classes of one queue, in the shape of a direction's totals.
stats::Totals rx_classes(const stats::QueueSample& q);

// Packets, bytes, seconds and the rates of an interval or a total.
nlohmann::json rates_json(const stats::Rates& r);
// A latency summary in ns; null when nothing was measured.
nlohmann::json latency_json(const result::LatencySummary& l);
// One interval row, as the JSON report and (with "type" and "trial") the JSON lines give it.
nlohmann::json interval_json(const stats::IntervalRow& row);

}  // namespace lr::report
