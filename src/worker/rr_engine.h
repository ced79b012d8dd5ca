// The request/response engine (the netperf RR figure), written once for every backend and
// built from the same bursts as the RX and TX engines (worker/rx_step.h, worker/tx_step.h):
// one worker receives the reflected responses on a queue and sends requests on it, keeping at
// most `outstanding` requests unanswered. Responses are matched by signature (distinct
// sequences of our streams), captured and timed like any received frame. When nothing was
// answered for the response timeout, every request the device took and nobody answered is
// written off as a timeout, so the window cannot stall; a response that comes after that is not
// counted twice.
#pragma once
#include <algorithm>

#include "stats/tsc_clock.h"
#include "worker/engine_common.h"
#include "worker/queue_ops.h"
#include "worker/rx_step.h"
#include "worker/tx_step.h"

namespace lr::worker {

template <TxQueueOps Tx, RxQueueOps Rx>
bool rr_engine(Tx& tx_ops, Rx& rx, const WorkerConfig& w) {
    using stats::publish;
    const TxSetup& t = w.tx;
    auto& tc = *w.tx_counters;
    auto& rc = *w.rx_counters;
    LoopFrame loop(w.ctl->stop_rx, w.yield_when_idle);
    RxQueue responses(w);
    TxQueue<Tx> requests(tx_ops, w);
    auto& tx = requests.ops();
    stats::BurstClock clk;
    const uint64_t timeout_ns = static_cast<uint64_t>(w.response_timeout_s * 1e9);
    uint64_t timeouts = 0, last_progress = stats::now_ns(), answered_seen = 0;
    bool tx_done = false;
    while (loop.running()) {
        publish(tc.polls, loop.poll());
        publish(rc.polls, loop.polls());
        const uint32_t n = responses.step(rx);
        tx.reclaim();
        const uint64_t now = n ? responses.last_ns() : clk.now();
        const uint64_t answered = responses.unique() + timeouts;
        if (answered != answered_seen) {
            answered_seen = answered;
            last_progress = now;
        }
        const uint64_t issued = tx.issued(), held = tx.held();
        const uint64_t unanswered = issued > answered ? issued - answered : 0;
        if (unanswered > held && now - last_progress > timeout_ns) {
            timeouts += unanswered - held;  // taken by the device, never answered: lost
            last_progress = now;
            publish(tc.timeouts, timeouts);
        }
        if (!tx_done && w.ctl->stop_tx.load(std::memory_order_relaxed)) tx_done = true;
        TxStepResult r;
        if (!tx_done) {
            uint64_t room = unanswered < w.outstanding ? w.outstanding - unanswered : 0;
            room = std::min<uint64_t>(room, tx.room(t.burst));
            if (t.count) room = std::min<uint64_t>(room, t.count - issued);
            r = requests.step(requests.now(), static_cast<uint32_t>(room));
            if (t.count && tx.confirmed() >= t.count) {
                tx_done = true;
                stats::set_state(tc, stats::WorkerState::finished);
            }
        }
        if (tx.failed()) break;
        if (n || r.got || r.taken) loop.busy();
        else loop.idle();
    }
    requests.finish();
    responses.finish();
    return !tx.failed();
}

}  // namespace lr::worker
