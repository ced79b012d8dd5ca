// Checks: a threshold held against a measured value, one per threshold and frame size. The
// verdict of a run, the PASS/FAIL lines of `check` and the JUnit file all come from these.
#pragma once
#include <string>
#include <vector>

#include "result/result.h"
#include "spec/procedure_spec.h"

namespace lr::result {

struct Check {
    std::string name;       // "loss 64B", "throughput 1518B", "latency p99 64B"
    std::string option;     // the threshold's option: "max-loss"
    bool pass = false;
    double measured = 0, threshold = 0;  // in the unit below
    std::string unit;       // "%", "pps", "s"
    std::string measured_text, threshold_text;  // with units, for people
};

// The checks of one trial against `th`: loss, received rate, latency max and p99, jitter,
// rate error; `label` ("64B") names them. A threshold without a measurement to judge (no
// latency measured, say) is a failed check saying so, never a silent pass.
std::vector<Check> trial_checks(const spec::Thresholds& th, const TrialResult& r, double line_rate_bps,
                                const std::string& label);

// A minimum-throughput check of a search result (pps found at `frame_size`).
Check throughput_check(const spec::RateSpec& min, double found_pps, double frame_size, double line_rate_bps,
                       const std::string& label);

// The first failed check's one-line description, "" when all passed.
std::string first_failure(const std::vector<Check>& checks);
bool all_pass(const std::vector<Check>& checks);

}  // namespace lr::result
