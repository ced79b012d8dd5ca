// The control thread: plans workers, launches them through a Backend, aggregates the
// per-queue counters every interval, runs the watchdog, drains, and checks invariants.
#pragma once
#include <functional>
#include <string>
#include <vector>

#include "engine/backend.h"
#include "spec/run_spec.h"
#include "stats/snapshot.h"

namespace lr::engine {

enum class Verdict { pass, fail, invalid };
const char* verdict_str(Verdict v);

struct QueueResult {
    stats::QueueId id;
    stats::QueueSample final;
    double active_s = 0;  // TX: the worker's run time; RX: first to last received burst
};

struct RunResult {
    std::vector<stats::QueueId> ids;
    std::vector<stats::IntervalRow> intervals;
    std::vector<QueueResult> queues;
    std::vector<stats::PortSample> ports;  // final port counters
    stats::Totals tx, rx;
    double tx_seconds = 0;     // TX phase: first TX worker start to last TX worker end
    double rx_seconds = 0;     // first to last received burst over all RX queues
    double total_seconds = 0;  // launch to the end of the drain
    double drain_seconds = 0;
    bool loopback = false;     // TX and RX ports both in this process
    bool generator_limited = false;  // --rate was given and TX achieved less than 99 % of it
    uint64_t lost = 0;         // TX - RX when loopback
    std::vector<std::string> violations;  // broken invariants: the run is invalid
    std::vector<std::string> notes;       // informational
    Verdict verdict = Verdict::pass;
    std::string verdict_reason;
};

// Splits the spec into one plan per (port, queue), TX first then RX.
std::vector<WorkerPlan> plan_workers(const spec::RunSpec& spec, const Backend& be,
                                     stats::QueueCounters* counters);

// Async-signal-safe: asks a running control loop to end TX now, drain and report.
void request_stop() noexcept;

using IntervalSink = std::function<void(const stats::IntervalRow&)>;

// Runs the whole measurement on an opened backend. Never throws once workers run.
RunResult run_control(Backend& be, const spec::RunSpec& spec, const IntervalSink& on_interval);

}  // namespace lr::engine
