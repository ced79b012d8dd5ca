// `linerate impair` in the outputs: a live line per direction each interval, the summary of
// every decision when the run ends, and the report's "impair" section (JSON).
#pragma once
#include <cstdio>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "result/result.h"

namespace lr::report {

// A line per direction and queue: its counts so far (the console's lines, the live table's).
std::vector<std::string> impair_live_lines(const std::vector<result::ImpairLive>& v);
void print_impair_live(std::FILE* out, const std::vector<result::ImpairLive>& v);
void print_impair_summary(std::FILE* out, const result::TrialResult& r);
nlohmann::json impair_json(const std::vector<result::ImpairResult>& v);

}  // namespace lr::report
