// The TX engine, written once for every backend: send bursts (worker/tx_step.h) until the
// queue's share of the count is confirmed or it is told to stop; a paced queue with nothing due
// sleeps until shortly before its next departure. A queue that carries streams runs the
// streams' loop (worker/tx_streams_engine.h).
#pragma once
#include <algorithm>

#include "worker/engine_common.h"
#include "worker/queue_ops.h"
#include "worker/tx_step.h"
#include "worker/tx_streams_engine.h"

namespace lr::worker {

namespace detail {

// Limited: the queue sends a fixed share (--count); the unlimited loop has no count test.
template <bool Limited, TxQueueOps Ops>
bool tx_loop(Ops ops, const WorkerConfig& w) {
    const TxSetup& t = w.tx;
    auto& c = *w.tx_counters;
    LoopFrame loop(w.ctl->stop_tx, w.yield_when_idle);  // a receiver may share this core: let it run
    TxQueue<Ops> q(ops, w);
    auto& o = q.ops();
    while (loop.running()) {
        loop.poll();
        o.reclaim();
        const uint64_t now = q.now();
        uint32_t room = o.room(t.burst);
        if constexpr (Limited) {
            const uint64_t issued = o.issued();
            if (issued >= t.count) {
                if (o.confirmed() >= t.count) break;  // every frame of the share confirmed
                room = 0;
            } else {
                room = static_cast<uint32_t>(std::min<uint64_t>(room, t.count - issued));
            }
        }
        const TxStepResult r = q.step(now, room);
        stats::publish(c.polls, loop.polls());
        if (o.failed()) break;
        if (r.got == 0 && r.taken == 0) {
            if (q.paced() && o.held() == 0)
                wait_for_departure(static_cast<int64_t>(q.next_due() - now), w.yield_when_idle);
            else loop.idle();
        }
    }
    q.finish();
    return !o.failed();
}

}  // namespace detail

// `ops` is taken by value: a local object whose address never escapes keeps its scalars in
// registers across the driver calls of the loop.
template <TxQueueOps Ops>
bool tx_engine(Ops ops, const WorkerConfig& w) {
    if (w.tx.program) return tx_streams_loop(ops, w);
    return w.tx.count ? detail::tx_loop<true>(ops, w) : detail::tx_loop<false>(ops, w);
}

}  // namespace lr::worker
