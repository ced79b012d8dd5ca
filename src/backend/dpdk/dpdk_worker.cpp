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

namespace {

// A queue that carries streams whose frames all have one length: the length its buffers were
// given when the trial started (DpdkBackend::start), which its ops then leave alone; else 0.
uint16_t every_len(const worker::TxSetup& t) {
    if (!t.program || t.templates.size() != 1) return 0;
    const uint16_t len = worker::one_frame_len(*t.program);
    return len == t.templates[0].size() ? len : 0;
}

}  // namespace

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
                DpdkTxOps tx(w.port_id, c.queue, w.tx_pool, held, meta, every_len(c.tx));
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
