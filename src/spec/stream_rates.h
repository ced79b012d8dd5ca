// What each stream of a trial sends: its packet rate (or, unpaced, its part of what the
// device takes) and its count, from the streams' own rates and shares and the trial's rate
// and count. One place for the arithmetic the planner, the session and the reports share.
#pragma once
#include <cstdint>
#include <optional>
#include <vector>

#include "spec/run_spec.h"

namespace lr::spec {

struct StreamRate {
    double pps = 0;      // its own rate in packets/s; 0: unpaced
    double weight = 0;   // unpaced: its part of the frames the unpaced streams send (they add up to 1)
    std::optional<uint64_t> count;  // frames in all (none: until the trial ends)
    double mean_size = 0;           // its mean frame size, FCS included
};

// The streams of `spec` (the trial's rate and count in place) on links of `line_bps` (L1,
// 0: unknown). A stream with rate= has that rate (max: unpaced); the others share the run's
// --rate by their share= (or equally what the shares leave), unpaced when --rate is max.
// The run's --count goes to the streams without a count of their own, in proportion to their
// rates (or weights when all of them are unpaced). A replayed capture without a rate keeps its
// recorded rate (times its speed). Throws UsageError (a percentage without a line rate, or
// --count over streams some paced and some not).
std::vector<StreamRate> stream_rates(const RunSpec& spec, double line_bps);

// The sum of the paced streams' rates (0 when every stream is unpaced).
double total_pps(const std::vector<StreamRate>& r);

// The mean frame of the mix, FCS included: the streams' mean sizes weighted by their rates
// (by their weights when every stream is unpaced).
double mix_mean_size(const std::vector<StreamRate>& r);

// For a procedure, which scales the whole mix: every stream's rate= becomes its share of the
// load (its packets/s over the sum of them all, at its own mean size on links of `line_bps`),
// so a trial at load L sends each stream at L x share. Streams given by share= keep theirs.
// validate() has checked that the streams give either all rates or none.
void rates_to_shares(RunSpec& spec, double line_bps);

}  // namespace lr::spec
