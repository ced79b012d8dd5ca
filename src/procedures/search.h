// Throughput searches over a measurer: MLRsearch (the IETF BMWG "Multiple Loss Ratio Search",
// RFC 9971, as FD.io CSIT runs it) and the plain RFC 2544 binary search. Both only decide which
// load to try next and what the trials mean; running a trial is the measurer's job, so they
// are tested against simulated devices and used unchanged on real ports.
#pragma once
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "spec/procedure_spec.h"

namespace lr::procedures {

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

// Presets: rfc2544 (60 s, 0 loss, 0 exceed), csit (NDR 0 % and PDR 0.5 %, 1 s trials, 21 s sum,
// 50 % exceed, 0.5 % width), tst009 (ETSI TST009 binary search with loss verification, max(r)
// = 2: 60 s trials, 120 s sum, 0 loss, 50 % exceed). Throws UsageError for another name.
std::vector<Goal> preset_goals(const std::string& preset);

// What a measurer reports of one trial.
struct TrialOutcome {
    double loss_ratio = 0;     // the device's loss: frames it did not forward / frames it was sent
    double offered_pps = 0;
    double effective_s = 0;    // the trial's effective duration (RFC 9971 4.5.6): its intended duration
    bool valid = true;         // the generator did its part (rate, no host-side drops)
    bool instrument_limited = false;  // invalid because this host could not carry the load
    std::string invalid_reason;
};
using Measurer = std::function<TrialOutcome(double load_pps, double duration_s, const std::string& why)>;

// One trial of the search, in the order run, with why its load and duration were chosen.
struct TrialRecord {
    double load = 0, duration_s = 0;
    TrialOutcome outcome;
    std::string why;
};

// RFC 9971 appendix A: the classification of a load for a goal from the trials at that load.
enum class LoadClass { undecided, lower, upper };
LoadClass classify(const Goal& g, const std::vector<const TrialRecord*>& trials_at_load);
// RFC 9971 appendix B: the conditional throughput at a load (lower bound) for a goal.
double conditional_throughput(const Goal& g, double load, const std::vector<const TrialRecord*>& trials_at_load);

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

struct SearchLimits {
    double min_load = 0, max_load = 0;  // pps; max_load > 0 required
    bool max_is_generator = false;      // max_load is what the generator holds, not the line rate or --max-rate
    uint32_t max_trials = 1000;
    uint32_t invalid_retries = 2;       // an invalid trial is repeated this often, then the search ends
    uint32_t preceding_phases = 2;      // MLRsearch: coarser phases with shorter trials before the final one
};

// A load the instrument could not carry (TrialOutcome::instrument_limited) is tried once more
// (a sender preempted for longer than its catch-up window misses once in a while; at a load no
// higher than one it carried in a valid trial of this search, kLimitedTriesHeld times in all);
// a last miss in a row drops the search's maximum load below it, to kLimitedBackoff times the
// lower of the load and what was offered, and the search goes on: it never ends for want of a
// load this host can hold while a lower one would answer. A load already carried misses in
// runs: through an overloaded kernel-path DUT on two shared cores, half the trials at 30-50 %
// of the generator's ceiling fell short, and four misses in a row (one chance in 16) lowered
// the maximum step by step below the device's rate, to a false "NDR >= X (generator-limited)"
// at a fifth of the ceiling. Eight in a row (one in 256 at that rate) is evidence of a limit.
inline constexpr uint32_t kLimitedTries = 2;
inline constexpr uint32_t kLimitedTriesHeld = 8;
inline constexpr double kLimitedBackoff = 0.95;

struct SearchResult {
    std::vector<GoalResult> goals;
    std::vector<TrialRecord> trials;
    double trial_seconds = 0;  // the sum of the trials' effective durations
    bool ended_early = false;  // an invalid trial kept failing, or the trial budget ran out
    std::string end_reason;
    double max_load = 0;       // the maximum load at the end (lowered when the instrument was limited)
    std::vector<std::string> notes;  // each time the maximum load was lowered, and why
};

SearchResult mlr_search(const std::vector<Goal>& goals, const SearchLimits& lim, const Measurer& m);
// RFC 2544 section 26.1: per goal, a binary search between min and max load with full-length
// trials, a trial passing when its loss ratio is at most the goal's; stops at the goal width.
SearchResult binary_search(const std::vector<Goal>& goals, const SearchLimits& lim, const Measurer& m);

}  // namespace lr::procedures
