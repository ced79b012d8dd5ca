// POST /linerate/procedure on a controller: linerate's procedures (RFC 2544 throughput by
// MLRsearch or binary search, latency, frame loss, back-to-back, the frame-size sweep) over
// ports of several engines. The procedures are the ones `linerate throughput` runs
// (procedures/procedures.h); only their trials differ: each is an OTG configuration of one
// flow per port pair, at the trial's frame size, load and count, set on every engine, started
// at one set time, and judged from the engines' merged counts and each engine's own account of
// its trial (its senders' schedule, its host's drops, broken invariants).
//
// The body is the JSON profile an engine takes (docs/profiles.md): "tx" and "rx" name ports of
// the configuration in place (POST /config) or names of the location map. The answer is the
// JSON report `--json` writes, its environment listing the engines.
#pragma once
#include <string>

#include <nlohmann/json.hpp>

#include "otg/controller_service.h"

namespace lr::otg {

// Throws OtgError: 400 for a profile the controller cannot run, 500 when an engine fails.
nlohmann::json run_controller_procedure(ControllerService& controller, const std::string& body);

}  // namespace lr::otg
