// DPDK worker loops. One per (port, queue), launched on its own lcore.
#pragma once
#include <cstdint>

#include "engine/loop_config.h"
#include "stats/counters.h"

struct rte_mempool;

namespace lr::dpdk {

inline constexpr uint32_t kMaxBurst = 512;

struct WorkerCtx : engine::LoopConfig {
    stats::Dir dir = stats::Dir::tx;
    uint16_t port = 0;
    uint16_t queue = 0;
    rte_mempool* pool = nullptr;  // TX: pre-initialised frames; RX: receive buffers
    // Request/response and reflector: the TX worker also serves the paired RX context, which
    // is then not launched on its own.
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
