// A procedure's result for people (one table per procedure, a row per frame size) and as
// JSON (the rows, every trial in order with why it was run, the checks, the verdict).
#pragma once
#include <cstdio>

#include <nlohmann/json.hpp>

#include "result/procedure_result.h"
#include "spec/run_spec.h"

namespace lr::report {

void print_procedure(std::FILE* out, const result::ProcedureResult& r);
nlohmann::json procedure_report(const spec::RunSpec& spec, const nlohmann::json& environment,
                                const result::ProcedureResult& r);

}  // namespace lr::report
