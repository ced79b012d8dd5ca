// The RX engine, written once for every backend: receive bursts (worker/rx_step.h) until told
// to stop, yielding the core when it is shared and the queue stays empty.
#pragma once
#include "worker/engine_common.h"
#include "worker/queue_ops.h"
#include "worker/rx_step.h"

namespace lr::worker {

template <RxQueueOps Ops>
bool rx_engine(Ops& ops, const WorkerConfig& w) {
    LoopFrame loop(w.ctl->stop_rx, w.yield_when_idle);
    RxQueue q(w);
    auto& c = *w.rx_counters;
    while (loop.running()) {
        stats::publish(c.polls, loop.poll());
        if (q.step(ops)) loop.busy();
        else loop.idle();
    }
    q.finish();
    return true;
}

}  // namespace lr::worker
