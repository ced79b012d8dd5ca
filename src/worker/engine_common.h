// What every queue engine's loop shares: the stop flag, the poll counter the watchdog
// watches, yielding the core when there is nothing to do, and the worker's state.
#pragma once
#include <algorithm>
#include <atomic>
#include <cstdint>
#include <sched.h>
#include <time.h>

#include "stats/counters.h"
#include "util/cpus.h"
#include "worker/idle_yield.h"
#include "worker/worker_config.h"

namespace lr::worker {

namespace detail {
// Nothing is due for `wait_ns`: sleep until shortly before the departure, then spin. A wait
// longer than kSleepAboveNs sleeps until kWakeEarlyNs before the due time (in slices of at
// most 10 ms, so a stop is seen); a shorter one spins, or yields when the worker shares its
// core. A wake-up later than planned is a stall the pacer makes up for (worker/pacer.h).
inline constexpr int64_t kWakeEarlyNs = 100'000, kSleepAboveNs = 150'000;
inline void wait_for_departure(int64_t wait_ns, bool shares_core) {
    if (wait_ns > kSleepAboveNs) {
        const int64_t ns = std::min<int64_t>(wait_ns - kWakeEarlyNs, 10'000'000);
        const timespec ts{0, static_cast<long>(ns)};
        nanosleep(&ts, nullptr);
    } else if (shares_core) {
        sched_yield();
    } else {
#if defined(__x86_64__) || defined(__i386__)
        __builtin_ia32_pause();
#endif
    }
}

}  // namespace detail

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

inline void publish_pacing_record(stats::QueueCounters& c, const PacingRecord& r) {
    stats::publish(c.tx_skipped, r.skipped);
    stats::publish(c.tx_behind_ns, r.behind_ns);
    stats::publish(c.tx_stalls, r.stalls);
    stats::publish(c.tx_longest_stall_ns, r.longest_stall_ns);
    stats::publish(c.tx_catch_up_max, r.largest_catch_up);
}

// A paced worker's schedule record into its counters: only when it changed (behind schedule,
// which is rare), so a worker on schedule stores nothing for it per burst.
class PacingPublisher {
public:
    void operator()(stats::QueueCounters& c, const Pacer& p, bool force = false) {
        if (!force && p.record_version() == seen_) return;
        seen_ = p.record_version();
        publish_pacing_record(c, p.record());
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
