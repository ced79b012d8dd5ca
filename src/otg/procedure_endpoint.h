// POST /linerate/procedure: one of linerate's procedures (sweep, throughput, latency,
// frame-loss, back-to-back) described by a JSON profile (docs/profiles.md: the option names
// as keys, "procedure" naming it), run on the server's backend with its options, answered
// with the same JSON report `--json` writes.
#pragma once
#include <string>

#include <nlohmann/json.hpp>

#include "result/sink.h"
#include "spec/options.h"

namespace lr::otg {

// `serve_options`: the server's own options (backend, CPUs, EAL arguments...), which take the
// place of the profile's. `sink`: follows every trial (the Prometheus exporter), or null.
// Throws OtgError: 400 for a profile error, 500 when the ports cannot be opened.
nlohmann::json run_procedure_profile(const std::string& body, const spec::OptionValues& serve_options,
                                     result::Sink* sink);

}  // namespace lr::otg
