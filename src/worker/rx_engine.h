// The RX engine, written once for every backend: receive bursts (worker/rx_step.h) until told
// to stop, yielding the core when it is shared and the queue stays empty; then a last sweep of
// what already waits in the queue.
#pragma once
#include "worker/engine_common.h"
#include "worker/queue_ops.h"
#include "worker/rx_step.h"

namespace lr::worker {

// The most bursts the last sweep takes: more than a ring holds at any burst size, so a queue
// that keeps filling cannot hold the stop back.
inline constexpr uint32_t kFinalSweepBursts = 1024;

template <RxQueueOps Ops>
bool rx_engine(Ops& ops, const WorkerConfig& w) {
    LoopFrame loop(w.ctl->stop_rx, w.yield_when_idle);
    RxQueue q(w);
    auto& c = *w.rx_counters;
    while (loop.running()) {
        stats::publish(c.polls, loop.poll());
        if (q.template step<true>(ops)) loop.busy();
        else loop.idle();
    }
    // Told to stop: frames already in the queue arrived before the end (a worker that waited
    // for its core when the drain ended finds them there) and are counted, not left for the
    // next trial's flush. Until the queue is empty, at most kFinalSweepBursts bursts.
    for (uint32_t b = 0; b < kFinalSweepBursts && q.template step<true>(ops); ++b) {
    }
    q.finish_held(ops);  // the burst taken ahead, if the sweep ended with one
    q.finish();
    return true;
}

}  // namespace lr::worker
