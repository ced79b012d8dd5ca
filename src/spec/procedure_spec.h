// What a procedure (sweep, RFC 2544 throughput, latency, frame loss, back-to-back) is asked
// to do beyond the run options it shares with `linerate run`, and the thresholds a run or a
// procedure is judged by. Both come from the option table, so a profile file can say them.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "spec/choices.h"
#include "spec/rate.h"

namespace lr::spec {

// Frame sizes: "64:1518:*2" (64, 128 ... while <= 1518), "64:512:+64", "64,128,1518",
// "rfc2544" (64, 128, 256, 512, 1024, 1280, 1518), "rfc2544+jumbo" (and 9000), or a mix
// separated by commas. Sorted, without duplicates. Throws UsageError naming `what`.
std::vector<unsigned> parse_sizes(std::string_view s, std::string_view what);

// The searches' defaults, read by the procedures and printed by the option table.
inline constexpr double kSearchWidth = 0.005;     // every preset's goal width (relative)
inline constexpr double kBackToBackWidth = 0.01;  // back-to-back's search for the longest burst
inline constexpr double kInitialTrialS = 1.0;     // MLRsearch's shortest trials
inline constexpr Preset kDefaultPreset = Preset::rfc2544;

// What a measuring command does: `run` (trials of the given rate), or one of the procedures.
enum class Procedure { run, sweep, throughput, latency, frame_loss, back_to_back };
// run, sweep, throughput, latency, frame-loss, back-to-back
std::string_view to_string(Procedure p);
// Throws UsageError naming `what` for another name.
Procedure parse_procedure(std::string_view s, std::string_view what);

struct ProcedureSpec {
    Procedure kind = Procedure::run;
    std::vector<unsigned> sizes;       // empty: the run's --size
    std::string sizes_typed;           // --sizes as given, for messages
    // Throughput search.
    std::string search = "mlr";        // mlr (MLRsearch, RFC 9971) or binary (RFC 2544 26.1)
    std::string preset{to_string(kDefaultPreset)};  // rfc2544, csit, tst009 (--goals replace its goals)
    std::vector<double> goal_losses;   // loss ratios of the goals (0 = NDR); empty: the preset's
    std::optional<double> final_trial_s, initial_trial_s, duration_sum_s, exceed_ratio, width;
    // The width a search ends at without --width: back-to-back's own, else the presets' goal width.
    double default_width() const { return kind == Procedure::back_to_back ? kBackToBackWidth : kSearchWidth; }
    RateSpec max_rate;                 // the highest load tried (max: the line rate, or what the generator does)
    RateSpec min_rate;                 // the lowest (max: a thousandth of the highest)
    uint32_t max_trials = 1000;
    // Latency: trials at this share of the throughput (or at --rate when given).
    double latency_load = 1.0;
    uint32_t repeat = 20;              // latency and back-to-back: trials per size
    // Frame loss: loads from 100 % down by this many percent of the highest load.
    double step_pct = 10;
    // A trial is valid when the offered load is this close to the request (ratio) and the
    // trial took at most max(1 %, this) longer than planned.
    double rate_tolerance = 0.001;
};

// The pass/fail thresholds (absent: not checked).
struct Thresholds {
    std::optional<double> max_loss_pct;      // the device's loss, in % of what was sent
    std::optional<RateSpec> min_throughput;  // received rate (run, sweep) or throughput (searches)
    std::optional<double> max_latency_p99_s;
    std::optional<double> max_latency_s;
    std::optional<double> max_jitter_s;      // RFC 3550, the worst stream
    std::optional<double> max_rate_error_pct;  // |offered - requested| / requested
    // Procedures: invalid trials tolerated (repeated, or left out of a search); `check` makes it 0
    // unless the profile says otherwise, so an invalid trial never passes unnoticed.
    std::optional<uint64_t> max_invalid_trials;
    LinkOutage link_outage = LinkOutage::fail;  // a port's link going down fails the run, or is only reported
    bool any() const {
        return max_loss_pct || min_throughput || max_latency_p99_s || max_latency_s || max_jitter_s ||
               max_rate_error_pct || max_invalid_trials;
    }
};

}  // namespace lr::spec
