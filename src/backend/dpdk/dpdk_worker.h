// DPDK worker loops. One per (port, queue), launched on its own lcore.
#pragma once
#include <cstdint>

#include "engine/backend.h"
#include "packet/signature.h"
#include "stats/counters.h"

struct rte_mempool;

namespace lr::dpdk {

inline constexpr uint32_t kMaxBurst = 512;

struct WorkerCtx {
    stats::Dir dir = stats::Dir::tx;
    uint16_t port = 0;
    uint16_t queue = 0;
    rte_mempool* pool = nullptr;  // TX: pre-initialised frames; RX: receive buffers
    uint32_t burst = 32;
    uint64_t count = 0;           // TX: packets to send, 0 = until stop_tx
    double rate_pps = 0;          // TX: rate limit, 0 = unlimited
    uint32_t wire_bytes = 0;      // TX: frame size incl. FCS
    bool yield_when_idle = false; // share the core when lcores outnumber CPUs (RX idle, TX blocked)
    stats::QueueCounters* counters = nullptr;
    const engine::RunControl* ctl = nullptr;
    // Signatures: TX stamps sequence + timestamp per packet; RX classifies and tracks.
    bool signature = false;
    packet::SigLayout layout;
    std::vector<uint16_t> streams;       // TX: stream ids of this queue's flows
    std::vector<std::vector<uint8_t>> templates;  // TX: signed template of each flow
    uint16_t nonce = 0;
    uint32_t rx_streams = 0;
    std::vector<uint64_t>* tx_sent = nullptr;
    stats::RxResult* rx_result = nullptr;
    // Request/response: the TX worker also receives on the paired RX queue, keeping at most
    // `outstanding` requests unanswered. The paired RX context is then not launched.
    WorkerCtx* rr_rx = nullptr;
    bool launched_by_pair = false;
    uint32_t outstanding = 0;
    double response_timeout_s = 0.1;
    bool reflect = false;  // with rr_rx: receive, swap addresses and ports, send back
};

// rte_eal_remote_launch entry point; `arg` is a WorkerCtx*.
int worker_main(void* arg);
// Request/response loop of a TX context paired with its RX context (dpdk_rr.cpp).
void rr_loop(const WorkerCtx& w);
// User-space reflector loop of a TX context paired with its RX context (dpdk_rr.cpp).
void reflect_loop(const WorkerCtx& w);

}  // namespace lr::dpdk
