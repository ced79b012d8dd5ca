// Starting, pausing and stopping streams while a trial runs (`linerate serve`: OTG's
// flow_transmit). The controlling thread writes a command per stream of the mix and bumps
// `generation`; each sending worker reads `generation` once per burst and, only when it
// changed, applies the streams' commands to its shares (worker/stream_scheduler.h). A share
// that sent its count records the start it finished, so the controller knows when every
// queue carrying the stream is done with it.
//
// A command is a start number and a state. Each start of a stream gets a new number: a share
// that sees a number it has not applied yet begins the stream again (its count, its bursts,
// its delay), and the counts of its frames go on from where they were (the receiver's
// sequence tracking goes on too). Pausing keeps the stream's place; resuming continues from
// it, with no catch-up for the time paused.
#pragma once
#include <atomic>
#include <cstdint>
#include <memory>

namespace lr::worker {

enum class GateState : uint32_t { held = 0, open = 1, paused = 2, stopped = 3 };

class FlowGates {
public:
    explicit FlowGates(size_t streams)
        : n_(streams), cmd_(std::make_unique<std::atomic<uint32_t>[]>(streams)),
          done_(std::make_unique<std::atomic<uint64_t>[]>(streams)) {
        for (size_t s = 0; s < n_; ++s) {
            cmd_[s].store(0, std::memory_order_relaxed);
            done_[s].store(0, std::memory_order_relaxed);
        }
    }
    size_t streams() const { return n_; }

    // The controller: a stream's new command (then publish() once for a batch of them).
    void set(size_t stream, uint32_t start, GateState st) {
        cmd_[stream].store(start << 2 | static_cast<uint32_t>(st), std::memory_order_relaxed);
    }
    void publish() { generation_.fetch_add(1, std::memory_order_release); }

    // The workers: once per burst, whether to look at the commands again.
    uint32_t generation() const { return generation_.load(std::memory_order_acquire); }
    uint32_t start_of(size_t stream) const { return cmd_[stream].load(std::memory_order_relaxed) >> 2; }
    GateState state_of(size_t stream) const {
        return static_cast<GateState>(cmd_[stream].load(std::memory_order_relaxed) & 3);
    }

    // A worker's share of `stream` sent everything start number `start` asked of it.
    void share_done(size_t stream, uint32_t start) {
        auto& d = done_[stream];
        uint64_t cur = d.load(std::memory_order_relaxed);
        for (;;) {
            const uint32_t at = static_cast<uint32_t>(cur >> 32);
            if (at > start) return;  // a later start already finished somewhere: this one is history
            const uint64_t next = at == start ? cur + 1 : (uint64_t{start} << 32 | 1);
            if (d.compare_exchange_weak(cur, next, std::memory_order_release, std::memory_order_relaxed)) return;
        }
    }
    // The controller: how many shares finished start number `start` of `stream`.
    uint32_t shares_done(size_t stream, uint32_t start) const {
        const uint64_t d = done_[stream].load(std::memory_order_acquire);
        return static_cast<uint32_t>(d >> 32) == start ? static_cast<uint32_t>(d) : 0;
    }

private:
    size_t n_;
    std::unique_ptr<std::atomic<uint32_t>[]> cmd_;   // per stream: start << 2 | GateState
    std::unique_ptr<std::atomic<uint64_t>[]> done_;  // per stream: start << 32 | shares done
    alignas(64) std::atomic<uint32_t> generation_{0};
};

}  // namespace lr::worker
