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

#include "result/search_result.h"
#include "spec/procedure_spec.h"

namespace lr::procedures {

// The goals, the trials and what they found are plain data (result/search_result.h).
using result::Goal;
using result::GoalResult;
using result::SearchResult;
using result::TrialOutcome;
using result::TrialRecord;

// Presets: rfc2544 (60 s, 0 loss, 0 exceed), csit (NDR 0 % and PDR 0.5 %, 1 s trials, 21 s sum,
// 50 % exceed, 0.5 % width), tst009 (ETSI TST009 binary search with loss verification, max(r)
// = 2: 60 s trials, 120 s sum, 0 loss, 50 % exceed). Throws UsageError for another name.
std::vector<Goal> preset_goals(const std::string& preset);

// Runs one trial at a load for a duration and reports what it measured.
using Measurer = std::function<TrialOutcome(double load_pps, double duration_s, const std::string& why)>;

// RFC 9971 appendix A: the classification of a load for a goal from the trials at that load.
enum class LoadClass { undecided, lower, upper };
LoadClass classify(const Goal& g, const std::vector<const TrialRecord*>& trials_at_load);
// RFC 9971 appendix B: the conditional throughput at a load (lower bound) for a goal.
double conditional_throughput(const Goal& g, double load, const std::vector<const TrialRecord*>& trials_at_load);

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

SearchResult mlr_search(const std::vector<Goal>& goals, const SearchLimits& lim, const Measurer& m);
// RFC 2544 section 26.1: per goal, a binary search between min and max load with full-length
// trials, a trial passing when its loss ratio is at most the goal's; stops at the goal width.
SearchResult binary_search(const std::vector<Goal>& goals, const SearchLimits& lim, const Measurer& m);

}  // namespace lr::procedures
