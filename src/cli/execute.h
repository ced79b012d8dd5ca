// Runs a built spec, whatever the command that built it (run, a procedure, check): opens the
// session, runs the trials or the procedure, prints, writes --json and --junit, and returns
// the exit code (0 pass, 1 a threshold failed, 4 invalid).
#pragma once
#include <string>
#include <utility>
#include <vector>

#include "result/result.h"
#include "spec/run_spec.h"

namespace lr::cli {

struct ExecuteInfo {
    std::string suite;  // the JUnit suite's name: "linerate throughput", a profile's name
    std::vector<std::pair<std::string, std::string>> properties;  // for JUnit: profile path...
    bool print_checks = false;  // PASS/FAIL lines even without thresholds (check)
};

int execute(const spec::RunSpec& spec, const ExecuteInfo& info);

// The exit code for the worst of the trials' verdicts.
int exit_code(const std::vector<result::TrialResult>& trials);

}  // namespace lr::cli
