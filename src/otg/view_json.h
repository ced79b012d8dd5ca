// A service's View as JSON, and back: what an engine answers a controller (GET
// /linerate/engine/view) and the controller merges. Every number a merge needs is there:
// counts, latency sums, extremes and histogram buckets, arrival times, rates.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "otg/view.h"
#include "result/result.h"

namespace lr::otg {

nlohmann::json view_to_json(const View& v);
// Throws std::runtime_error naming the field when the JSON is not a view.
View view_from_json(const nlohmann::json& j);

Transmit transmit_from(const std::string& s);

// A flow's line of GET /linerate/flows: its counts, loss, and latency and jitter when measured.
nlohmann::json extended_flow_json(const FlowView& f);

// What a controller's procedures judge of an engine's last trial (GET /linerate/engine/view's
// `trial`): what its senders did against their schedule, what its host dropped, and anything
// that made it invalid.
struct EngineTrial {
    uint64_t finished = 0;  // trials this engine has finished: a new one ended when it grows
    bool interrupted = false;
    std::vector<std::string> violations;
    std::vector<result::LinkOutage> outages;  // its ports' links down during the trial
    uint64_t tx_packets = 0, tx_skipped = 0, stalls = 0, rx_unique = 0, egress_dropped = 0, host_rx_dropped = 0;
    double longest_stall_s = 0, tx_cpu_wait_longest_s = 0, tx_seconds = 0;
};
nlohmann::json engine_trial_json(const result::TrialResult& r);  // without `finished`
// An engine that has finished none answers {}: finished 0.
EngineTrial engine_trial_from_json(const nlohmann::json& j);

}  // namespace lr::otg
