// What every queue engine's loop shares: the stop flag, the poll counter the watchdog
// watches, yielding the core when there is nothing to do, and the worker's state.
#pragma once
#include <atomic>
#include <cstdint>

#include "stats/counters.h"
#include "util/cpus.h"
#include "worker/idle_yield.h"
#include "worker/worker_config.h"

namespace lr::worker {

class LoopFrame {
public:
    LoopFrame(const std::atomic<bool>& stop, bool yield_when_idle) : stop_(stop), idle_(yield_when_idle) {}
    bool running() const { return !stop_.load(std::memory_order_relaxed); }
    // One per loop iteration: the heartbeat the watchdog reads.
    uint64_t poll() { return ++polls_; }
    uint64_t polls() const { return polls_; }
    void idle() { idle_.idle(); }
    void busy() { idle_.busy(); }

private:
    const std::atomic<bool>& stop_;
    IdleYield idle_;
    uint64_t polls_ = 0;
};

// A paced worker's schedule record into its counters: only when it changed (behind schedule,
// which is rare), so a worker on schedule stores nothing for it per burst.
class PacingPublisher {
public:
    void operator()(stats::QueueCounters& c, const Pacer& p, bool force = false) {
        if (!force && p.record_version() == seen_) return;
        seen_ = p.record_version();
        const PacingRecord& r = p.record();
        stats::publish(c.tx_skipped, r.skipped);
        stats::publish(c.tx_behind_ns, r.behind_ns);
        stats::publish(c.tx_stalls, r.stalls);
        stats::publish(c.tx_longest_stall_ns, r.longest_stall_ns);
        stats::publish(c.tx_catch_up_max, r.largest_catch_up);
    }

private:
    uint64_t seen_ = 0;
};

// Runs `body` as the worker of `w`: its counters say running, then finished (or failed
// when body returns false), and how long the worker waited for its CPU meanwhile.
template <class Body>
void run_worker(const WorkerConfig& w, Body&& body) {
    if (w.nice && w.tx_counters) {  // before the first departure: its timing depends on it
        const int refused = util::set_thread_nice(*w.nice);
        stats::publish(w.tx_counters->nice, util::thread_nice());
        stats::publish(w.tx_counters->nice_errno, refused);
    }
    const uint64_t wait0 = util::thread_cpu_wait_ns();
    for (auto* c : {w.tx_counters, w.rx_counters})
        if (c) stats::set_state(*c, stats::WorkerState::running);
    const bool ok = body();
    const uint64_t wait1 = util::thread_cpu_wait_ns();
    const uint64_t waited = wait1 > wait0 ? wait1 - wait0 : 0;  // 0 where the kernel keeps no run delay
    for (auto* c : {w.tx_counters, w.rx_counters}) {
        if (!c) continue;
        stats::publish(c->cpu_wait_ns, waited);
        if (c->state.load(std::memory_order_relaxed) != static_cast<uint32_t>(stats::WorkerState::finished))
            stats::set_state(*c, ok ? stats::WorkerState::finished : stats::WorkerState::failed);
    }
}

}  // namespace lr::worker
