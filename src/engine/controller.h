// One trial, run by the control thread: start the workers, read their counters every tick
// (relaxed loads into its own snapshots), feed the sink an interval row when due, run the
// watchdog, decide when TX ends and when the receivers have drained, stop the workers, and
// turn the final counters into a TrialResult.
#pragma once
#include "backend/backend.h"
#include "engine/planner.h"
#include "engine/trial_control.h"
#include "result/result.h"
#include "result/sink.h"
#include "spec/run_spec.h"

namespace lr::engine {

// `spec`: the session's spec with this trial's values in place. Never throws once workers
// run; throws lr::Error when the trial cannot start (nothing is left running then).
// `control`: a controlled trial (engine/trial_control.h); null for a trial that runs its course.
result::TrialResult run_trial(backend::Backend& be, const spec::RunSpec& spec, const backend::SessionLayout& layout,
                              const CounterSlots& slots, unsigned index, result::Sink& sink,
                              TrialControl* control = nullptr);

}  // namespace lr::engine
