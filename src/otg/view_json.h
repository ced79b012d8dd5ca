// A service's View as JSON, and back: what an engine answers a controller (GET
// /linerate/engine/view) and the controller merges. Every number a merge needs is there:
// counts, latency sums, extremes and histogram buckets, arrival times, rates.
#pragma once
#include <nlohmann/json.hpp>

#include "otg/view.h"

namespace lr::otg {

nlohmann::json view_to_json(const View& v);
// Throws std::runtime_error naming the field when the JSON is not a view.
View view_from_json(const nlohmann::json& j);

Transmit transmit_from(const std::string& s);

// A flow's line of GET /linerate/flows: its counts, loss, and latency and jitter when measured.
nlohmann::json extended_flow_json(const FlowView& f);

}  // namespace lr::otg
