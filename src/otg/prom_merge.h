// The controller's GET /metrics: every engine's Prometheus exposition merged into one, each
// family's HELP and TYPE once followed by every engine's samples of it, each sample labelled
// host="<engine>" (the engine's own host label replaced by the name the controller knows it
// by), so one query sums a flow across hosts.
#pragma once
#include <string>
#include <utility>
#include <vector>

namespace lr::otg {

// (engine name, its exposition text) per engine. Lines that are neither comments nor samples
// are dropped.
std::string merge_expositions(const std::vector<std::pair<std::string, std::string>>& engines);

// A sample line with its `host` label set to `host` (added, or its value replaced).
std::string with_host_label(const std::string& sample_line, const std::string& host);

}  // namespace lr::otg
