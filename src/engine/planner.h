// Planning: which workers a session runs (role, port, queue, CPU), which counter slots its
// trials report, and each worker's configuration for one trial (its flows, its share of the
// count and rate, its frames built once).
#pragma once
#include <cstdint>
#include <memory>
#include <vector>

#include "backend/backend.h"
#include "spec/run_spec.h"
#include "stats/rx_measure.h"
#include "stats/snapshot.h"
#include "worker/worker_config.h"

namespace lr::engine {

// Ports in the order their names first appear (--tx, then --rx); one worker per TX queue,
// then one per RX queue, or one per queue for request/response and reflect. Worker i runs
// on --cpus[i mod n], or on the allowed CPU after the control thread's (automatic).
// Throws UsageError for a --cpus entry this process may not run on.
backend::SessionLayout plan_layout(const spec::RunSpec& spec);

// Counter slots of a session: every sending worker's TX queue, then every receiving
// worker's RX queue (a request/response or reflect worker has one of each).
struct CounterSlots {
    std::vector<stats::QueueId> ids;
    std::vector<int> tx_slot, rx_slot;  // per worker: its slot in ids, or -1
};
CounterSlots plan_counters(const backend::SessionLayout& layout);

// Where a trial's workers write what they hand over when they end.
struct TrialOutputs {
    std::unique_ptr<stats::QueueCounters[]> counters;  // one per counter slot
    std::vector<std::vector<uint64_t>> tx_sent;        // per counter slot (TX slots): sent per flow
    std::vector<stats::RxResult> rx_results;           // per counter slot (RX slots)
    std::vector<stats::GapStats> departures;           // per counter slot (TX slots)
    std::vector<stats::FrameCapture> tx_captures;      // per counter slot (TX slots): --capture-filter sent
    // Streams (queues that carry a TxProgram): per counter slot (TX slots) what each stream
    // share sent, the programs, and each TX slot's paced rate.
    std::vector<std::vector<worker::ShareSent>> shares_sent;
    std::vector<std::shared_ptr<const worker::TxProgram>> programs;
    std::vector<double> tx_pps;
    std::vector<uint32_t> first_flow;  // per stream of the mix: its first signed stream id
    // linerate impair: per worker its impairer, per counter slot (TX slots) the counts it publishes.
    std::vector<std::unique_ptr<worker::Impairer>> impairers;
    std::unique_ptr<stats::ImpairCounters[]> impair_counts;
    // linerate connect: per worker its handshake window and the handshakes' latency, the SYN
    // template they share, per counter slot (TX slots) the counts it publishes.
    std::vector<std::unique_ptr<worker::HandshakeWindow>> windows;
    std::vector<std::unique_ptr<stats::LatencyHistogram>> handshakes;
    std::unique_ptr<packet::SynTemplate> syn;
    std::unique_ptr<stats::ConnectCounters[]> connect_counts;
    // Streams: per counter slot (TX slots) each share's frames so far, for the live views.
    std::vector<std::unique_ptr<stats::CountsExchange<stats::ShareLive>>> shares_live;
    explicit TrialOutputs(size_t slots);
};

// The configuration of every worker for a trial of `spec` (the session's spec with the
// trial's values in place). Throws UsageError when the frame cannot be built.
std::vector<worker::WorkerConfig> plan_workers(const spec::RunSpec& spec, const backend::SessionLayout& layout,
                                               const CounterSlots& slots, TrialOutputs& out,
                                               const worker::RunControl& ctl);

}  // namespace lr::engine
