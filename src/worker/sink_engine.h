// The counting-sink engine: a receiving queue counted in the driver (--rx-mode xdp), whose
// frames never reach user space. The worker publishes the program's counts for its queue into
// the queue's counters (their single writer) every 2 ms, and hands the per-stream counts over
// when it ends. Written once over its own small operations, like the other engines.
#pragma once
#include <chrono>
#include <concepts>
#include <cstdint>
#include <thread>
#include <utility>
#include <vector>

#include "stats/tsc_clock.h"
#include "worker/engine_common.h"

namespace lr::worker {

// What the program counted on the queue since the trial started.
struct SinkTotals {
    uint64_t frames = 0;      // every frame it saw
    uint64_t ours = 0;        // this run's test frames (counted and dropped)
    uint64_t ours_bytes = 0;  // their bytes, FCS included
    uint64_t foreign = 0;     // passed to the kernel
    uint64_t malformed = 0;
    uint64_t stale = 0;       // of the foreign, another run's
};

//   totals()   the queue's counts since the trial started
//   streams()  per stream: {frames received, highest sequence + 1} (the port's, for its first queue)
template <class T>
concept SinkQueueOps = requires(const T c) {
    { c.totals() } -> std::same_as<SinkTotals>;
    { c.streams() } -> std::same_as<std::vector<std::pair<uint64_t, uint64_t>>>;
};

template <SinkQueueOps Ops>
bool sink_engine(const Ops& ops, const WorkerConfig& w) {
    using stats::publish;
    auto& c = *w.rx_counters;
    uint64_t polls = 0, seen = 0, first = 0, last = 0;
    auto publish_all = [&] {
        const SinkTotals s = ops.totals();
        const uint64_t now = stats::now_ns();
        if (s.ours != seen) {
            if (!first) first = now;
            last = now;
            seen = s.ours;
        }
        publish(c.packets, s.frames);
        publish(c.bytes, s.ours_bytes);
        publish(c.rx_ours, s.ours);
        publish(c.rx_unique, s.ours);  // the sink cannot tell duplicates apart
        publish(c.rx_foreign, s.foreign);
        publish(c.rx_malformed, s.malformed);
        publish(c.rx_stale, s.stale);
        publish(c.polls, ++polls);
    };
    while (!w.ctl->stop_rx.load(std::memory_order_relaxed)) {
        publish_all();
        std::this_thread::sleep_for(std::chrono::milliseconds(2));
    }
    publish_all();
    if (w.queue == 0 && w.rx.result) w.rx.result->sink = ops.streams();  // per port, once
    publish(c.first_pkt_ns, first);
    publish(c.last_pkt_ns, last);
    return true;
}

}  // namespace lr::worker
