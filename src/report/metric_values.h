// What the Prometheus exporter (report/metrics.h) sets each interval, read from the interval's
// and the queues' field lists (report/result_fields.h), so its gauges and labels hold the
// same values and names as the JSON and CSV outputs. Kept apart from prometheus-cpp, so the
// unit tests can compare them with the other outputs.
#pragma once
#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "result/result.h"
#include "stats/snapshot.h"

namespace lr::report {

struct GaugeValue {
    std::string name;  // the metric: "linerate_rate_packets_per_second"
    std::map<std::string, std::string> labels;
    double value = 0;
};

// The last interval's gauges: rates per direction (pps; bits/s at L1 and L2), the open
// sequence gaps, whether the senders fell short, and the live latency quantiles in seconds
// (quantile "0" is the minimum, "1" the maximum; none when the interval measured no frame).
std::vector<GaugeValue> interval_gauges(const stats::IntervalRow& row);

// At most this many streams are exported by name; the rest are added up under stream="other",
// so a mix of thousands of streams does not become thousands of series.
inline constexpr size_t kMaxStreamSeries = 100;

// The streams of a mix as the exporter labels them: per stream (the first kMaxStreamSeries by
// their place in the mix; the rest as "other"), frames sent and received so far
// (linerate_stream_packets, direction tx or rx: counters, trial-relative) and the open
// sequence gaps (linerate_stream_sequence_gaps: a gauge).
std::vector<GaugeValue> stream_values(const std::vector<result::StreamLive>& streams);

// A receiving queue's frames by class ("ours", "distinct", ...: the JSON's rx class keys).
std::vector<std::pair<std::string, uint64_t>> rx_class_counts(const stats::QueueSample& q);

}  // namespace lr::report
