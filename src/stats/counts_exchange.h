// Counts a worker keeps for itself (per flow, per stream share), copied out when the control
// thread asks, so the live views can show them without reading a worker's memory while it
// writes: the control thread raises `request`; at its next poll the worker copies its counts
// into `buf` and publishes `done = request` (release); once `done` equals its request, `buf`
// is the control thread's to read until it asks again. One relaxed load per worker poll.
#pragma once
#include <atomic>
#include <cstdint>
#include <vector>

#include "stats/flow_totals.h"

namespace lr::stats {

// A receiver's live counts of one flow.
struct FlowLive {
    uint64_t received = 0, gaps = 0, reordered = 0, duplicates = 0, late = 0;
    FlowRxTotals totals;  // when the receiver keeps them
};

// A sender's live counts of one stream share: frames and bytes (FCS included) planned so far.
struct ShareLive {
    uint64_t frames = 0, bytes = 0;
};

template <class T>
struct CountsExchange {
    std::vector<T> buf;  // sized before the trial
    alignas(64) std::atomic<uint32_t> request{0};
    alignas(64) std::atomic<uint32_t> done{0};

    // The worker: true (and `seen` updated) when a request is waiting.
    bool asked(uint32_t& seen) const {
        const uint32_t r = request.load(std::memory_order_acquire);
        if (r == seen) return false;
        seen = r;
        return true;
    }
    void answer(uint32_t r) { done.store(r, std::memory_order_release); }
};

// The control thread's side: asks, and reads what came back.
template <class T>
class CountsTaker {
public:
    // True when the worker answered the last request: `x.buf` may be read.
    bool ready(const CountsExchange<T>& x) const {
        return req_ && x.done.load(std::memory_order_acquire) == req_;
    }
    // Asks again (after reading), unless a request is unanswered.
    void ask(CountsExchange<T>& x) {
        if (req_ && x.done.load(std::memory_order_acquire) != req_) return;
        x.request.store(++req_, std::memory_order_release);
    }

private:
    uint32_t req_ = 0;
};

}  // namespace lr::stats
