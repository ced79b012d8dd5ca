// The procedures engineers run, over a session: a frame-size sweep, and the RFC 2544
// throughput (MLRsearch or binary search), latency, frame loss rate and back-to-back tests.
// Each returns plain data (result/procedure_result.h: one row per frame size, every trial in
// order, the checks); report/procedure_report.h prints and serialises it.
#pragma once
#include <string>
#include <vector>

#include "engine/session.h"
#include "procedures/search.h"
#include "procedures/trial_runner.h"
#include "result/checks.h"
#include "result/procedure_result.h"
#include "result/result.h"

namespace lr::procedures {

// The rows and the whole result are plain data (result/procedure_result.h).
using result::BackToBackRow;
using result::FrameLossRow;
using result::FrameLossStep;
using result::LatencyRow;
using result::LoadRange;
using result::ProcedureResult;
using result::SweepRow;
using result::ThroughputRow;

// Runs the session's procedure (spec().procedure) to the end. progress: one line per trial;
// sink: every trial's intervals and result (nullptr: none).
ProcedureResult run_procedure(engine::Session& s, std::FILE* progress, result::Sink* sink = nullptr);
// The same on any runner (its spec().procedure).
ProcedureResult run_procedure(TrialRunner& run);

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

void run_latency(TrialRunner& run, ProcedureResult& out);
void run_frame_loss(TrialRunner& run, ProcedureResult& out);
void run_back_to_back(TrialRunner& run, ProcedureResult& out);

}  // namespace lr::procedures
