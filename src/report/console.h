// Human-readable output: one live line per interval, then per-queue and total tables.
#pragma once
#include <cstdio>

#include "engine/control.h"

namespace lr::report {

// latency: the run measures latency live (RunSpec::live_latency): two more columns.
void print_header(std::FILE* out, bool latency);
void print_interval(std::FILE* out, const stats::IntervalRow& row);
void print_summary(std::FILE* out, const spec::RunSpec& spec, const engine::RunResult& r);

}  // namespace lr::report
