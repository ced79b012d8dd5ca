// A `linerate impair` trial's result: the ports' and queues' counters, and per direction every
// decision its impairer made, checked to add up.
#pragma once
#include <vector>

#include "engine/planner.h"
#include "result/result.h"
#include "spec/run_spec.h"
#include "stats/snapshot.h"
#include "worker/worker_config.h"

namespace lr::engine {

void aggregate_impair(result::TrialResult& r, const spec::RunSpec& spec, const stats::Snapshot& fin,
                      const std::vector<worker::WorkerConfig>& workers, const CounterSlots& slots);

// Each direction's counts as its worker last published them (the live views).
std::vector<result::ImpairLive> impair_live(const std::vector<worker::WorkerConfig>& workers);

}  // namespace lr::engine
