// `linerate report RUN.json -o report.html`: one self-contained HTML page from a run's or a
// procedure's JSON report: the run's facts, every setting as a row of option and value, the
// checks, and charts (rate over time against the rate asked, per-queue balance, the
// loss/reorder/drop timeline, the latency histogram and CDF drawn from the report's buckets,
// who dropped it; for procedures, the table against frame size and a bar per trial). Chart.js
// (Debian's libjs-chart.js), the page's script and its style are inlined at build time: the
// page fetches nothing.
#pragma once
#include <string>

#include <nlohmann/json_fwd.hpp>

namespace lr::report {

// Throws UsageError when `report` is not a linerate report.
std::string html_report(const nlohmann::json& report);

}  // namespace lr::report
