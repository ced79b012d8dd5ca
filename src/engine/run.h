// Run lifecycle: backend from the registry, control loop, reports, exit code.
#pragma once
#include "spec/run_spec.h"

namespace lr::engine {

// Runs `spec` to completion and returns the process exit code. Throws lr::Error on setup errors.
int run(const spec::RunSpec& spec);

}  // namespace lr::engine
