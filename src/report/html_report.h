// `linerate report RUN.json -o report.html`: one self-contained HTML page from a run's or a
// procedure's JSON report: the spec and environment, the checks, and charts (rate over time,
// per-queue balance, the loss/reorder/drop timeline, latency percentiles and CDF, who dropped
// it; for procedures, the table against frame size and every trial's load). Chart.js (Debian's
// libjs-chart.js), the page's script and its style are inlined at build time: the page fetches
// nothing.
#pragma once
#include <string>

#include <nlohmann/json_fwd.hpp>

namespace lr::report {

// Throws UsageError when `report` is not a linerate report.
std::string html_report(const nlohmann::json& report);

}  // namespace lr::report
