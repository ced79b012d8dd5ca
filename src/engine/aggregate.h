// Turning a trial's final counters into its result: totals, per-queue and per-stream
// results, timings, loss, the generator-limited flag, invariants, and the verdict.
#pragma once
#include <string>
#include <vector>

#include "result/result.h"
#include "spec/run_spec.h"
#include "stats/rx_measure.h"
#include "stats/snapshot.h"
#include "worker/tx_program.h"

namespace lr::engine {

// What one sending queue reports per flow slot: the flows' stream ids and the frames sent;
// and the gaps between its departures.
struct TxStreams {
    const std::vector<uint16_t>* streams = nullptr;
    const std::vector<uint64_t>* sent = nullptr;  // same order; empty when not handed over
    const stats::GapStats* departures = nullptr;
    const stats::FrameCapture* capture = nullptr;  // --capture-filter sent
    // A queue that carries streams: its program and what each of its stream shares sent.
    const worker::TxProgram* program = nullptr;
    const std::vector<worker::ShareSent>* shares = nullptr;
    double planned_pps = 0;  // the rate its schedule asks (paced streams), for the offered rate
};

// Per-flow totals from the senders' and the receivers' per-flow results. With the sender
// in this run (`sender_known`), loss is sent - received and received > sent is a broken
// invariant; otherwise loss is the receivers' sequence gaps.
std::vector<result::FlowResult> merge_flows(const std::vector<TxStreams>& tx,
                                                const std::vector<const stats::RxResult*>& rx, bool sender_known,
                                                std::vector<std::string>& violations);

// The part every command's result shares: the counters' invariants (`loopback`: TX and RX
// counted against each other), the spec's notes, the ports, the totals and each queue's
// counters and active time.
void aggregate_counters(result::TrialResult& r, const spec::RunSpec& spec, const stats::Snapshot& fin, bool loopback);

// Fills `r` (whose ids and intervals are set) from the final snapshot and the receivers'
// results; `tx` and `rx` as for merge_flows. `ended_early`: the trial was interrupted or
// aborted, so a short count is not a violation.
void aggregate(result::TrialResult& r, const spec::RunSpec& spec, const stats::Snapshot& fin,
               const std::vector<TxStreams>& tx, const std::vector<const stats::RxResult*>& rx, bool ended_early);

// The verdict: invalid on any violation; fail when a threshold failed; pass otherwise.
void decide(result::TrialResult& r, const spec::RunSpec& spec);

}  // namespace lr::engine
