// Turning a trial's final counters into its result: totals, per-queue and per-stream
// results, timings, loss, the generator-limited flag, invariants, and the verdict.
#pragma once
#include <string>
#include <vector>

#include "result/result.h"
#include "spec/run_spec.h"
#include "stats/rx_measure.h"
#include "stats/snapshot.h"

namespace lr::engine {

// What one sending queue reports per flow slot: the flows' stream ids and the frames sent;
// and the gaps between its departures.
struct TxStreams {
    const std::vector<uint16_t>* streams = nullptr;
    const std::vector<uint64_t>* sent = nullptr;  // same order; empty when not handed over
    const stats::GapStats* departures = nullptr;
    const stats::FrameCapture* capture = nullptr;  // --capture-filter sent
};

// Per-stream totals from the senders' and the receivers' per-stream results. With the sender
// in this run (`sender_known`), loss is sent - received and received > sent is a broken
// invariant; otherwise loss is the receivers' sequence gaps.
std::vector<result::StreamResult> merge_streams(const std::vector<TxStreams>& tx,
                                                const std::vector<const stats::RxResult*>& rx, bool sender_known,
                                                std::vector<std::string>& violations);

// Fills `r` (whose ids and intervals are set) from the final snapshot and the receivers'
// results; `tx` and `rx` as for merge_streams. `ended_early`: the trial was interrupted or
// aborted, so a short count is not a violation.
void aggregate(result::TrialResult& r, const spec::RunSpec& spec, const stats::Snapshot& fin,
               const std::vector<TxStreams>& tx, const std::vector<const stats::RxResult*>& rx, bool ended_early);

// The verdict: invalid on any violation; fail when a threshold failed; pass otherwise.
void decide(result::TrialResult& r, const spec::RunSpec& spec);

}  // namespace lr::engine
