// What `linerate impair` did to the frames of one direction: every decision, counted by its
// forwarding worker's impairer (worker/impairer.h), and published once per burst for the
// control thread (ImpairCounters).
#pragma once
#include <atomic>
#include <cstdint>
#include <utility>

namespace lr::stats {

// Every decision, counted. What the impairer holds at the end of a run is not sent. They add
// up: received + duplicated = dropped + oversize + overflowed + forwarded + held.
struct ImpairCounts {
    uint64_t received = 0;    // frames that arrived
    uint64_t dropped = 0;     // lost by the loss model
    uint64_t overflowed = 0;  // arrived with `limit` frames held (a duplicate that finds none free is not made)
    uint64_t duplicated = 0;  // extra copies sent
    uint64_t reordered = 0;   // left after a frame that arrived later: what an in-order receiver counts reordered
    uint64_t early = 0;       // skipped the delay (reorder)
    uint64_t corrupted = 0;   // one payload bit flipped
    uint64_t shaped = 0;      // waited for the link's rate
    uint64_t forwarded = 0;   // handed to the egress device
    uint64_t held = 0;        // in the delay line or the link's queue now
    uint64_t oversize = 0;    // larger than a slot: dropped (cannot happen with ports of one MTU)
    uint64_t drop_digest = 0xcbf29ce484222325ull;  // FNV-1a over the arrival numbers of the frames the loss model dropped
};

// The counts as the control thread reads them while the worker runs: one relaxed store per
// field per burst, by the worker alone.
struct alignas(64) ImpairCounters {
    std::atomic<uint64_t> received{0}, dropped{0}, overflowed{0}, duplicated{0}, reordered{0}, early{0},
        corrupted{0}, shaped{0}, forwarded{0}, held{0}, oversize{0}, drop_digest{0};
    void publish(const ImpairCounts& c) {
        const std::pair<std::atomic<uint64_t>*, uint64_t> fields[] = {
            {&received, c.received},   {&dropped, c.dropped}, {&overflowed, c.overflowed}, {&duplicated, c.duplicated},
            {&reordered, c.reordered}, {&early, c.early},     {&corrupted, c.corrupted},   {&shaped, c.shaped},
            {&forwarded, c.forwarded}, {&held, c.held},       {&oversize, c.oversize},     {&drop_digest, c.drop_digest}};
        for (const auto& [a, v] : fields) a->store(v, std::memory_order_relaxed);
    }
    ImpairCounts read() const {
        ImpairCounts c;
        c.received = received.load(std::memory_order_relaxed);
        c.dropped = dropped.load(std::memory_order_relaxed);
        c.overflowed = overflowed.load(std::memory_order_relaxed);
        c.duplicated = duplicated.load(std::memory_order_relaxed);
        c.reordered = reordered.load(std::memory_order_relaxed);
        c.early = early.load(std::memory_order_relaxed);
        c.corrupted = corrupted.load(std::memory_order_relaxed);
        c.shaped = shaped.load(std::memory_order_relaxed);
        c.forwarded = forwarded.load(std::memory_order_relaxed);
        c.held = held.load(std::memory_order_relaxed);
        c.oversize = oversize.load(std::memory_order_relaxed);
        c.drop_digest = drop_digest.load(std::memory_order_relaxed);
        return c;
    }
};

}  // namespace lr::stats
