// One DPDK worker: its configuration and the device resources of its queue.
#pragma once
#include <cstdint>

#include "backend/dpdk/dpdk_queues.h"
#include "worker/worker_config.h"

namespace lr::dpdk {

struct DpdkWorker {
    worker::WorkerConfig cfg;
    uint16_t port_id = 0;
    rte_mempool* tx_pool = nullptr;  // roles that send: mbufs holding the frame templates
    uint16_t tx_port_id = 0;         // the port it sends on (a forwarder's peer; else port_id)
};

// rte_eal_remote_launch entry point; `arg` is a DpdkWorker*.
int worker_main(void* arg);

}  // namespace lr::dpdk
