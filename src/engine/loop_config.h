// What every backend's worker loop needs, derived once from the spec and the worker's plan,
// so the backends only add their device specifics.
#pragma once
#include <cstdint>
#include <vector>

#include "engine/backend.h"
#include "packet/signature.h"

namespace lr::engine {

struct LoopConfig {
    uint32_t burst = 32;
    uint64_t count = 0;            // TX: packets to send, 0 = until stop_tx
    double rate_pps = 0;           // TX: rate limit, 0 = unlimited
    uint32_t frame_len = 60;       // TX: frame without FCS
    uint32_t wire_bytes = 64;      // TX: frame with FCS
    bool yield_when_idle = false;  // share the core when workers outnumber CPUs
    stats::QueueCounters* counters = nullptr;
    const RunControl* ctl = nullptr;
    // Signatures: TX stamps sequence and timestamp per packet; RX classifies and tracks.
    bool signature = false;
    packet::SigLayout layout;
    std::vector<uint16_t> streams;                // TX: stream ids of this queue's flows
    std::vector<std::vector<uint8_t>> templates;  // TX: the (signed) frame of each flow
    uint16_t nonce = 0;
    uint32_t rx_streams = 0;
    std::vector<uint64_t>* tx_sent = nullptr;     // TX: written once when the loop ends
    stats::RxResult* rx_result = nullptr;         // RX: written while running, read after join
};

// Fills the common part and, for TX plans, builds each flow's frame once (signed if the run is).
LoopConfig make_loop_config(const spec::RunSpec& spec, const WorkerPlan& plan, const RunControl& ctl,
                            bool oversubscribed);

// CPUs this process may run on.
std::vector<int> allowed_cpus();

}  // namespace lr::engine
