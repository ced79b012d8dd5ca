// A controller's view of a test across engines, merged from each engine's (GET
// /linerate/engine/view): a flow's frames sent are its sending engine's, its frames received
// the sum over every engine (each counts what reached its ports), its loss recomputed from
// those; latency merged from the counts, sums, extremes and histograms, never by averaging
// percentiles; a port is its engine's. One-way latency between engines that do not share a
// clock (different hosts: CLOCK_MONOTONIC of different boots) was read by the receiver through
// both hosts' system clocks: it is as good as their synchronisation, and says so.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "otg/clock_info.h"
#include "otg/view.h"
#include "otg/view_json.h"
#include "result/result.h"

namespace lr::otg {

struct EngineView {
    View view;
    ClockInfo clock;  // boot_id: engines that share it share a clock; sync: how well it keeps time
    EngineTrial trial;  // its last finished trial
};

// What a flow's one-way latency rests on, from the best to the worst (LatencyClock::worsen).
enum class LatencyBasis {
    one_clock,     // every receiver shares the sender's clock: exact
    synchronised,  // a receiver on another host; both system clocks synchronised within the bound
    indicative,    // a receiver on another host whose clock, or the sender's, is not known synchronised
};
const char* basis_name(LatencyBasis b);
struct LatencyClock {
    LatencyBasis basis = LatencyBasis::one_clock;
    // synchronised: the largest error the two clocks admit (the sender's bound plus the
    // receiver's; the worst receiver).
    double bound_ns = 0;
    // Takes in another's basis: indicative over synchronised over one clock, the larger bound.
    void worsen(const LatencyClock& o);
};

struct MergePlan {
    std::vector<size_t> flow_tx_engine;       // per flow of the configuration
    std::vector<std::vector<size_t>> flow_rx_engines;  // per flow: the engines of its rx ports
    std::vector<size_t> port_engine;          // per port of the configuration
    std::vector<std::string> port_location;   // per port: as the configuration gives it
};

struct MergedView {
    View view;  // first and last arrival times in ns since the epoch (realtime_minus_monotonic_ns 0)
    std::vector<LatencyClock> latency_clock;  // per flow
    std::vector<bool> rx_over_tx;        // per flow: more received than sent (an alarm once final)
    std::vector<std::vector<result::LatencyBucket>> buckets;  // per flow: the merged histogram
};

// `engines` in the plan's engine order. Throws std::runtime_error when an engine's view does
// not have the configuration's flows and ports.
MergedView merge_views(const MergePlan& plan, const std::vector<EngineView>& engines);

// Buckets of several histograms of the same kind added up, lowest first.
std::vector<result::LatencyBucket> merge_buckets(const std::vector<std::vector<result::LatencyBucket>>& parts);
// The value at quantile q (0..1) of a bucket list: the midpoint of the bucket that holds it.
uint64_t bucket_quantile(const std::vector<result::LatencyBucket>& buckets, double q);

}  // namespace lr::otg
