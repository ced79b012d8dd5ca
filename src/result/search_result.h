// What a throughput search asked and found, as plain data: its goals, every trial in the order
// run with what it measured, and per goal the bounds and the conditional throughput.
// procedures/search.h runs the searches; reports read these.
#pragma once
#include <optional>
#include <string>
#include <vector>

#include "spec/procedure_spec.h"

namespace lr::result {

// A search goal (RFC 9971 section 4.6.7), with the goal width (relative: the bounds' distance
// divided by the upper bound) and the initial trial duration.
struct Goal {
    std::string name;
    double loss_ratio = 0;        // a trial losing more than this is high-loss
    double exceed_ratio = 0;      // the share of high-loss trial time a lower bound tolerates
    double final_trial_s = 60;    // full-length trials are at least this long
    double duration_sum_s = 60;   // trial time at a load needed to decide it
    double width = spec::kSearchWidth;  // stop when (upper - lower) / upper is at most this
    double initial_trial_s = spec::kInitialTrialS;  // the shortest trials used while narrowing down
};

// What a measurer reports of one trial.
struct TrialOutcome {
    double loss_ratio = 0;     // the device's loss: frames it did not forward / frames it was sent
    double offered_pps = 0;
    double effective_s = 0;    // the trial's effective duration (RFC 9971 4.5.6): its intended duration
    bool valid = true;         // the generator did its part (rate, no host-side drops)
    bool instrument_limited = false;  // invalid because this host could not carry the load
    std::string invalid_reason;
};

// One trial of the search, in the order run, with why its load and duration were chosen.
struct TrialRecord {
    double load = 0, duration_s = 0;
    TrialOutcome outcome;
    std::string why;
};

struct GoalResult {
    Goal goal;
    bool regular = false;                    // both bounds found, within the goal width
    std::optional<double> lower, upper;      // relevant lower and upper bounds (pps)
    std::optional<double> conditional;       // conditional throughput at the relevant lower bound
    // The device lost nothing beyond the goal at the highest load this host could offer: the
    // answer is "at least the lower bound" (generator-limited), not the device's limit.
    bool at_least = false;
    std::string irregular_reason;            // why not regular
};

struct SearchResult {
    std::vector<GoalResult> goals;
    std::vector<TrialRecord> trials;
    double trial_seconds = 0;  // the sum of the trials' effective durations
    bool ended_early = false;  // an invalid trial kept failing, or the trial budget ran out
    std::string end_reason;
    double max_load = 0;       // the maximum load at the end (lowered when the instrument was limited)
    std::vector<std::string> notes;  // each time the maximum load was lowered, and why
};

}  // namespace lr::result
