// The reflect engine, written once for every backend: each received linerate test frame goes
// back out from its own buffer with addresses and ports swapped (packet::reflect_swap);
// anything else is freed. Received counts on the RX counters, reflected on the TX counters
// as the device confirmed it; test frames the device refused are `unsent` (dropped).
#pragma once
#include "packet/signature.h"
#include "worker/engine_common.h"
#include "worker/queue_ops.h"

namespace lr::worker {

template <ReflectQueueOps Ops>
bool reflect_engine(Ops& ops, const WorkerConfig& w) {
    using stats::publish;
    auto& tc = *w.tx_counters;
    auto& rc = *w.rx_counters;
    LoopFrame loop(w.ctl->stop_rx, w.yield_when_idle);
    uint64_t rpkts = 0, rbytes = 0, foreign = 0, backpressure = 0, first = 0, last = 0;
    auto publish_tx = [&] {
        publish(tc.packets, ops.confirmed());
        publish(tc.bytes, ops.confirmed_bytes());
        publish(tc.backpressure, backpressure);
        publish(tc.unsent, ops.dropped());
        publish(tc.tx_errors, ops.errors());
        publish(tc.polls, loop.polls());
        publish(rc.polls, loop.polls());
    };
    while (loop.running() && !w.ctl->stop_tx.load(std::memory_order_relaxed)) {
        loop.poll();
        ops.reclaim();
        const uint32_t n = ops.receive(w.rx.burst);
        if (n == 0) {
            ops.idle();
            loop.idle();
            publish_tx();
            continue;
        }
        loop.busy();
        last = stats::now_ns();
        if (!first) first = last;
        uint32_t others = 0;
        for (uint32_t i = 0; i < n; ++i) {
            rbytes += ops.wire_bytes(i);
            if (packet::reflect_swap(ops.data(i), ops.len(i))) ops.keep(i);
            else ++others;  // not linerate's: freed (a DPDK port has no kernel to pass it to)
        }
        backpressure += ops.send_back().partial;
        rpkts += n;
        foreign += others;
        publish(rc.packets, rpkts);
        publish(rc.bytes, rbytes);
        publish(rc.rx_ours, rpkts - foreign);
        publish(rc.rx_unique, rpkts - foreign);
        publish(rc.rx_foreign, foreign);
        publish_tx();
    }
    ops.finish();
    publish_tx();
    if (first) {
        publish(rc.first_pkt_ns, first);
        publish(rc.last_pkt_ns, last);
    }
    return true;
}

}  // namespace lr::worker
