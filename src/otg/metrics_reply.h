// POST /monitor/metrics: the OTG Metrics.Response for a Metrics.Request, from the service's
// view. Port and flow metrics; every counter and rate is always present (clients sum them),
// latency and timestamps for the flows that asked for them.
#pragma once
#include <nlohmann/json.hpp>

#include "otg/view.h"

namespace lr::otg {

// Throws OtgError (400) for a request linerate cannot answer: another choice than port or
// flow, an unknown name or column.
nlohmann::json metrics_reply(const nlohmann::json& request, const View& view);

}  // namespace lr::otg
