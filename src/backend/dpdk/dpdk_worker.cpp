// The DPDK worker: an EAL lcore running one queue engine over the DPDK burst operations.
// The engines' hot loops are instantiated here, in a file built with -falign-loops=64.
#include "backend/dpdk/dpdk_worker.h"

#include "util/privileges.h"
#include "worker/connect_engine.h"
#include "worker/forward_engine.h"
#include "worker/reflect_engine.h"
#include "worker/rr_engine.h"
#include "worker/rx_engine.h"
#include "worker/tx_engine.h"

namespace lr::dpdk {

int worker_main(void* arg) {
    const auto& w = *static_cast<const DpdkWorker*>(arg);
    const auto& c = w.cfg;
    // EAL created this lcore thread before the capabilities were dropped: drop them here too.
    util::adopt_dropped();
    rte_mbuf* held[kMaxBurst];  // frames taken for sending that the device has not accepted yet
    HeldMeta meta[kMaxBurst];   // their lengths and tags (queues that carry streams)
    worker::run_worker(c, [&] {
        switch (c.role) {
            case worker::Role::tx: {
                DpdkTxOps tx(w.port_id, c.queue, w.tx_pool, held, meta);
                return worker::tx_engine(tx, c);
            }
            case worker::Role::rx: {
                DpdkRxOps rx(w.port_id, c.queue);
                return worker::rx_engine(rx, c);
            }
            case worker::Role::request_response: {
                DpdkTxOps tx(w.port_id, c.queue, w.tx_pool, held, meta);
                DpdkRxOps rx(w.port_id, c.queue);
                return worker::rr_engine(tx, rx, c);
            }
            case worker::Role::reflect: {
                DpdkReflectOps r(w.port_id, c.queue);
                return worker::reflect_engine(r, c);
            }
            case worker::Role::forward: {
                DpdkRxOps rx(w.port_id, c.queue);
                DpdkTxOps tx(w.tx_port_id, c.queue, w.tx_pool, held, meta);
                return worker::forward_engine(rx, tx, c);
            }
            case worker::Role::connect: {
                DpdkTxOps tx(w.port_id, c.queue, w.tx_pool, held, meta);
                DpdkRxOps rx(w.port_id, c.queue);
                return worker::connect_engine(tx, rx, c);
            }
        }
        return false;
    });
    return 0;
}

}  // namespace lr::dpdk
