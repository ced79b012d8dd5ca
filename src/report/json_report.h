// The JSON report (--json FILE): spec, environment, interval series, per-queue totals, verdict.
#pragma once
#include <string>

#include <nlohmann/json.hpp>

#include "engine/control.h"

namespace lr::report {

inline constexpr int kSchemaVersion = 1;

nlohmann::json make_report(const spec::RunSpec& spec, const nlohmann::json& environment,
                           const engine::RunResult& r);
// Writes atomically (temp file + rename). Throws lr::EnvError when the file can't be written.
void write_json(const std::string& path, const nlohmann::json& j);

}  // namespace lr::report
