// The live-frames engine: a sending queue whose frames never pass through user space. The
// kernel runs a program over copies of a template and sends them (XDP live frames); the engine
// paces the calls, counts what the program produced, and publishes it while the worker is
// inside the kernel. Written once over its own small operations, like the other engines.
#pragma once
#include <algorithm>
#include <atomic>
#include <chrono>
#include <climits>
#include <concepts>
#include <cstdint>
#include <sys/prctl.h>
#include <thread>

#include "stats/tsc_clock.h"
#include "worker/engine_common.h"
#include "worker/pacer.h"

namespace lr::worker {

// The operations of one live-frames queue.
//   send(flow, n)   the kernel sends n copies of the queue's template `flow` and returns; it
//                   returns early when interrupt() is called; false on an error that ends sending
//   interrupt()     makes a send() in progress return (called from another thread)
//   produced()      frames the program produced for the queue so far (any thread may read it)
//   produced_of(k)  of those, flow k's (signed frames; 0 otherwise)
//   flows()         templates the queue takes turns with
template <class T>
concept LiveTxOps = requires(T o, const T c, size_t k, uint64_t n) {
    { o.send(k, n) } -> std::same_as<bool>;
    { o.interrupt() } -> std::same_as<void>;
    { c.produced() } -> std::convertible_to<uint64_t>;
    { c.produced_of(k) } -> std::convertible_to<uint64_t>;
    { c.flows() } -> std::convertible_to<size_t>;
};

template <LiveTxOps Ops>
bool live_engine(Ops& ops, const WorkerConfig& w) {
    using stats::publish;
    const TxSetup& t = w.tx;
    auto& c = *w.tx_counters;
    const size_t nflows = std::max<size_t>(ops.flows(), 1);
    // Each call ends in an RCU grace period in the kernel (its page pool is torn down), so
    // calls are long: unpaced, as long as the trial (interrupted to stop); paced, 50 ms of frames
    // sent back to back (the granularity of live-frames pacing: docs/afxdp.md). With several
    // flows per queue the flows take turns, 65536 frames (or a paced call) each.
    auto plan = t.pacing;
    uint32_t chunk = nflows > 1 ? 65536u : (1u << 30);
    if (plan.pps > 0) {
        chunk = std::clamp<uint32_t>(static_cast<uint32_t>(plan.pps * 0.05), 1, chunk);
        plan.max_burst = chunk;  // a call's frames leave together: the tolerance spans two calls
    }
    LoopFrame loop(w.ctl->stop_tx, w.yield_when_idle);
    Pacer pacer(plan);
    stats::BurstClock clk;
    const bool timed = pacer.limited() || t.departures;
    if (pacer.limited()) prctl(PR_SET_TIMERSLACK, 1UL);
    if (timed) pacer.start(clk.now());
    // The watcher publishes what the program produced while the worker is inside the kernel,
    // and turns the stop flag into an interruption of the call in progress.
    std::atomic<bool> done{false};
    std::thread watcher([&] {
        while (!done.load(std::memory_order_relaxed)) {
            const uint64_t n = ops.produced();
            publish(c.packets, n);
            publish(c.bytes, n * t.wire_bytes);
            if (w.ctl->stop_tx.load(std::memory_order_relaxed)) ops.interrupt();
            std::this_thread::sleep_for(std::chrono::milliseconds(1));
        }
    });
    uint64_t errors = 0, sent = 0;
    PacingPublisher publish_pacing;
    bool failed = false;
    size_t flow = 0;
    while (loop.running()) {
        loop.poll();
        uint64_t want = chunk;
        if (t.count) want = std::min<uint64_t>(want, t.count > sent ? t.count - sent : 0);
        if (want == 0) break;
        const uint64_t now = timed ? clk.now() : 0;
        if (pacer.limited()) {
            // Wait until a whole call's frames are due, then take them from the schedule.
            const uint64_t at = pacer.nth_due(static_cast<uint32_t>(want));
            if (now < at) {
                detail::wait_for_departure(static_cast<int64_t>(at - now), w.yield_when_idle);
                continue;
            }
            want = pacer.due(now, static_cast<uint32_t>(want));
            if (want == 0) continue;
        }
        if (!ops.send(flow, std::min<uint64_t>(want, INT32_MAX))) {
            ++errors;
            failed = true;
        }
        flow = flow + 1 == nflows ? 0 : flow + 1;
        const uint64_t now_sent = ops.produced();
        if (timed && t.departures && now_sent > sent) t.departures->burst(now, static_cast<uint32_t>(now_sent - sent));
        sent = now_sent;
        publish(c.tx_errors, errors);
        publish(c.polls, loop.polls());
        publish_pacing(c, pacer);
        if (failed) break;
    }
    done.store(true, std::memory_order_relaxed);
    watcher.join();
    sent = ops.produced();
    if (t.sent_per_stream) {
        t.sent_per_stream->assign(t.streams.size(), 0);
        for (size_t k = 0; k < t.streams.size(); ++k) (*t.sent_per_stream)[k] = ops.produced_of(k);
    }
    publish(c.packets, sent);
    publish(c.bytes, sent * t.wire_bytes);
    publish(c.tx_errors, errors);
    publish(c.unsent, 0);
    return !failed;
}

}  // namespace lr::worker
