// A procedure's result as plain data: one row per frame size (sweep, throughput, latency,
// frame loss, back-to-back), every trial in order with why it was run and whether it was
// valid, the checks and the verdict. procedures/ fills it; report/procedure_report.h prints
// and serialises it.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "result/checks.h"
#include "result/result.h"
#include "result/search_result.h"
#include "spec/procedure_spec.h"

namespace lr::result {

// Why a trial was invalid, for the procedure's summary ("3 of 41 trials invalid: 2 generator
// fell short, 1 ..."): the first reason that applied.
enum class InvalidKind { none, interrupted, invariant, link, nothing_sent, generator, stalled, host_egress, host_rx };
const char* invalid_kind_text(InvalidKind k);  // "the generator fell short", ...

struct TrialPlan {
    unsigned frame_size = 64;
    double load_pps = 0;     // 0: as fast as possible
    double duration_s = 1;
    std::optional<uint64_t> count;  // a fixed number of frames (back-to-back bursts, sweeps with --count)
    std::string why;         // why this trial: "initial", "bisect between ...", "repeat 3 of 20"
    bool probe = false;      // measures the generator (its capacity), not the device: never counted invalid
    // > 0: the senders may fall at most this far behind their schedule (s), else the trial is
    // invalid (stalled): a back-to-back burst with a hole in it is not back to back, and lets
    // the device drain its buffer in the middle of it (its catch-up afterwards does not undo
    // that). 0: stalls within the catch-up window are made up for and do not count.
    double max_stall_s = 0;
};

// What the report lists of every trial, so a user can audit a procedure.
struct TrialLog {
    unsigned index = 0;  // in the session, 0-based
    TrialPlan plan;
    double offered_pps = 0;
    double tx_seconds = 0;
    uint64_t sent = 0, received = 0;  // test frames the devices accepted; distinct ones that arrived
    uint64_t host_drops = 0;          // frames the instrument's own receive path dropped
    double loss_ratio = 0;            // (sent - received) / sent
    uint64_t stalls = 0;              // the senders' stalls (made up for within the catch-up window)
    double longest_stall_s = 0;
    uint64_t skipped = 0;             // departure slots given up beyond the window
    double sender_cpu_wait_s = 0;     // the longest a sender was runnable but off its CPU, in all
    bool valid = true;
    bool instrument_limited = false;  // invalid because this host could not carry the load
    InvalidKind invalid_kind = InvalidKind::none;
    std::string invalid_reason;
};

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
    LatencySummary latency;
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
    std::vector<LatencySummary> per_trial;
    LatencySummary all;                    // every trial's frames merged
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
    // Over a stream mix the rows have size 0: the mix, named by mix_label ("--size imix",
    // "the mix of 3 streams"), its rates in bits/s at mix_mean_size (FCS included).
    std::string mix_label;
    double mix_mean_size = 0;
    double frame_bytes(unsigned size) const { return size ? size : mix_mean_size; }
    std::string size_text(unsigned size) const;   // "64 B" or the mix's label
    std::string size_short(unsigned size) const;  // "64B" or "mix": a table's first column
    std::vector<SweepRow> sweep;
    std::vector<ThroughputRow> throughput;
    std::vector<LatencyRow> latency;
    std::vector<FrameLossRow> frame_loss;
    std::vector<BackToBackRow> back_to_back;
    std::vector<TrialLog> trials;          // every trial, in order
    std::vector<Check> checks;
    std::vector<std::string> notes;
    bool invalid = false;                  // the procedure could not reach a trustworthy answer
    std::string invalid_reason;
    bool interrupted = false;
    double seconds = 0;                    // wall time
    Verdict verdict() const;
    // The trials that measured the device (not the generator's capacity probes) and were
    // invalid, though repeated or left out of the results: never hidden behind a bare pass.
    struct InvalidTrials {
        unsigned count = 0, of = 0;
        std::string summary;  // "2 of 17 trials invalid (2 the generator fell short), ..."; "" for none
    };
    InvalidTrials invalid_trials() const;
    // What the verdict line adds to pass or fail: the reason, then the invalid trials.
    std::string verdict_reason() const;
};

}  // namespace lr::result
