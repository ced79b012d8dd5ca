// Per-queue counters: one cache line each, written by exactly one worker (relaxed store
// once per burst), read by the control thread (relaxed loads). The control thread keeps
// its own previous values; nothing reader-side lives on the writer's cache line.
#pragma once
#include <atomic>
#include <cstdint>
#include <chrono>

namespace lr::stats {

enum class WorkerState : uint32_t { starting = 0, running = 1, finished = 2, failed = 3 };

struct alignas(64) QueueCounters {
    std::atomic<uint64_t> packets{0};       // TX: accepted by the device; RX: received
    std::atomic<uint64_t> bytes{0};         // L2 bytes including the 4-byte FCS
    std::atomic<uint64_t> backpressure{0};  // TX: bursts the device accepted only partly
    std::atomic<uint64_t> no_buffer{0};     // TX: bursts with the mempool empty
    std::atomic<uint64_t> polls{0};         // loop iterations: the watchdog's heartbeat
    std::atomic<uint64_t> unsent{0};        // TX: built but never accepted when the worker stopped
    std::atomic<uint64_t> tx_errors{0};     // TX: transient send errors (AF_XDP kick: ENOBUFS, EAGAIN...)
    std::atomic<uint64_t> timeouts{0};      // TX, request/response mode: requests never answered
    std::atomic<uint64_t> tx_skipped{0};    // TX, paced: departure slots given up, the worker being too far behind
    std::atomic<uint64_t> tx_behind_ns{0};  // TX, paced: the time those slots spanned
    std::atomic<uint64_t> tx_stalls{0};     // TX, paced: times the worker fell behind its schedule (worker/pacer.h)
    std::atomic<uint64_t> tx_longest_stall_ns{0};  // TX, paced: the furthest behind it was
    std::atomic<uint64_t> tx_catch_up_max{0};      // TX, paced: the most frames owed at once, sent late together
    std::atomic<uint64_t> start_ns{0};      // steady clock when the loop started
    std::atomic<uint64_t> end_ns{0};        // steady clock when the loop returned
    std::atomic<uint64_t> first_pkt_ns{0};  // RX: steady clock of the first/last non-empty
    std::atomic<uint64_t> last_pkt_ns{0};   //     burst (written when the loop returns)
    // RX classification (signatures): ours + foreign + malformed = packets.
    std::atomic<uint64_t> rx_ours{0}, rx_unique{0}, rx_foreign{0}, rx_stale{0}, rx_malformed{0};
    std::atomic<uint64_t> rx_dup{0}, rx_reordered{0}, rx_late{0};
    std::atomic<uint64_t> rx_gaps{0};  // sequences skipped and not (yet) filled by reordered arrivals
    std::atomic<uint64_t> cpu_wait_ns{0};  // the worker's time runnable but off its CPU (written when it ends)
    std::atomic<uint32_t> state{0};         // WorkerState (release on change)
    // Paced senders: the nice value the worker runs at, and the errno of raising it (0: raised
    // as asked, or not asked). Written once, before the loop starts.
    std::atomic<int32_t> nice{0}, nice_errno{0};
};
static_assert(sizeof(QueueCounters) % 64 == 0, "QueueCounters must fill whole cache lines");

// Single-writer update: no read-modify-write needed, the writer owns the value.
inline uint64_t now_ns() {
    return static_cast<uint64_t>(std::chrono::duration_cast<std::chrono::nanoseconds>(
                                     std::chrono::steady_clock::now().time_since_epoch())
                                     .count());
}

inline void set_state(QueueCounters& c, WorkerState s) {
    if (s == WorkerState::running) c.start_ns.store(now_ns(), std::memory_order_relaxed);
    if (s == WorkerState::finished || s == WorkerState::failed)
        c.end_ns.store(now_ns(), std::memory_order_relaxed);
    c.state.store(static_cast<uint32_t>(s), std::memory_order_release);
}

inline void publish(std::atomic<uint64_t>& c, uint64_t v) { c.store(v, std::memory_order_relaxed); }
inline void publish(std::atomic<int32_t>& c, int32_t v) { c.store(v, std::memory_order_relaxed); }

}  // namespace lr::stats
