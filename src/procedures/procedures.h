// The procedures engineers run, over a session: a frame-size sweep, and the RFC 2544
// throughput (MLRsearch or binary search), latency, frame loss rate and back-to-back tests.
// Each returns plain data (one row per frame size, every trial in order, the checks);
// report/procedure_report.h prints and serialises it.
#pragma once
#include <string>
#include <vector>

#include "engine/session.h"
#include "procedures/search.h"
#include "procedures/trial_runner.h"
#include "result/checks.h"
#include "result/result.h"

namespace lr::procedures {

// The load range a procedure offers at one frame size, and where its top came from.
struct LoadRange {
    double min_pps = 0, max_pps = 0;
    double line_pps = 0;       // the line rate at this size (0: unknown)
    double peak_pps = 0;       // the generator as fast as it can (0: not measured)
    double ceiling_pps = 0;    // the highest load it holds paced (0: not measured)
    bool generator_limited = false;  // max_pps is the generator's ceiling: below the line rate or --max-rate
    std::string max_source;    // "--max-rate 80 kpps", "the line rate", "the generator's ceiling ..."
};

struct SweepRow {
    unsigned size = 0;
    TrialLog trial;
    double rx_pps = 0;
    result::LatencySummary latency;
    double requested_pps = 0;
};

struct ThroughputRow {
    unsigned size = 0;
    LoadRange range;
    SearchResult search;
    unsigned first_trial = 0, trials = 0;  // this size's trials in the procedure's log
};

struct LatencyRow {
    unsigned size = 0;
    double load_pps = 0;
    std::string load_source;               // "--rate", "100 % of NDR 1.234 Mpps"
    std::vector<result::LatencySummary> per_trial;
    result::LatencySummary all;            // every trial's frames merged
    double mean_of_means_ns = 0;           // RFC 2544 26.2: the average over the trials
    double worst_jitter_ns = 0;
    uint64_t sent = 0, received = 0;
};

struct FrameLossStep {
    double load_pps = 0, load_pct = 0;     // % of the highest load
    uint64_t sent = 0, received = 0;
    double loss_pct = 0;
};
struct FrameLossRow {
    unsigned size = 0;
    LoadRange range;
    std::vector<FrameLossStep> steps;
};

struct BackToBackRow {
    unsigned size = 0;
    double load_pps = 0;
    uint64_t longest_tried = 0;            // the longest burst a trial offered
    std::vector<uint64_t> bursts;          // per repetition: the longest burst that arrived whole
    double mean = 0;
    uint64_t min = 0, max = 0;
    bool capped = false;                   // even the longest burst arrived whole: "at least"
};

struct ProcedureResult {
    spec::Procedure kind = spec::Procedure::sweep;
    double line_rate_bps = 0;
    std::vector<SweepRow> sweep;
    std::vector<ThroughputRow> throughput;
    std::vector<LatencyRow> latency;
    std::vector<FrameLossRow> frame_loss;
    std::vector<BackToBackRow> back_to_back;
    std::vector<TrialLog> trials;          // every trial, in order
    std::vector<result::Check> checks;
    std::vector<std::string> notes;
    bool invalid = false;                  // the procedure could not reach a trustworthy answer
    std::string invalid_reason;
    bool interrupted = false;
    double seconds = 0;                    // wall time
    result::Verdict verdict() const;
    // The trials that measured the device (not the generator's capacity probes) and were
    // invalid, though repeated or left out of the results: never hidden behind a bare pass.
    struct InvalidTrials {
        unsigned count = 0, of = 0;
        std::string summary;  // "2 of 17 trials invalid (2 the generator fell short of the load), ..."; "" for none
    };
    InvalidTrials invalid_trials() const;
    // What the verdict line adds to pass or fail: the reason, then the invalid trials.
    std::string verdict_reason() const;
};

// Runs the session's procedure (spec().procedure) to the end. progress: one line per trial;
// sink: every trial's intervals and result (nullptr: none).
ProcedureResult run_procedure(engine::Session& s, std::FILE* progress, result::Sink* sink = nullptr);

// The goals of a throughput search: the preset's (or one per --goals), with the options'
// overrides applied.
std::vector<Goal> goals_for(const spec::ProcedureSpec& p);

// ---- shared by the procedures' implementations ----
// The range at `size`: the lowest of --max-rate, the line rate and the generator's ceiling
// (measured first: the highest load it holds paced); --min-rate, else a thousandth of the top.
// A --max-rate above the ceiling is clamped to it, with a note in `notes`.
LoadRange load_range(TrialRunner& run, unsigned size, std::vector<std::string>& notes);
// Search goals' throughput at `size` (first goal's conditional throughput).
SearchResult search_throughput(TrialRunner& run, const spec::RunSpec& spec, unsigned size, const LoadRange& range,
                               const std::vector<Goal>& goals);
// How often an invalid trial is repeated before the procedure ends with its reason: a
// generator preempted for a few milliseconds (a shared core) misses the 0.1 % now and then.
inline constexpr unsigned kInvalidRetries = 4;
// A trial repeated while invalid, at most `retries` more times; the last one is returned.
TrialLog run_valid(TrialRunner& run, const TrialPlan& p, result::TrialResult* r, unsigned retries = kInvalidRetries);
// The non-search procedures' trial length: --trial-duration, else --duration.
double plain_trial_s(const spec::RunSpec& spec);
// A frame size as the checks name it: "64B".
std::string size_label(unsigned size);

void run_latency(TrialRunner& run, ProcedureResult& out);
void run_frame_loss(TrialRunner& run, ProcedureResult& out);
void run_back_to_back(TrialRunner& run, ProcedureResult& out);

}  // namespace lr::procedures
