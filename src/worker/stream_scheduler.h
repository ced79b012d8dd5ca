// The scheduler of one TX queue that carries streams: per burst, which stream's frames go,
// in which order, at which size and from which flow.
//
// - Paced shares each keep their own schedule (worker/pacer.h: rate, pattern, catch-up), so
//   every stream offers exactly its rate, and the sum exactly theirs.
// - Unpaced shares fill whatever room the paced ones leave, in a weighted round robin whose
//   table holds each share exactly as often as its weight per period.
// - A share starts after its delay or once the stream it follows is done on every queue,
//   sends `count` frames (or bursts of burst_frames frames, burst_gap apart), then is done.
// - Sizes follow the share's period table (every size exactly as often as its weight, in a
//   seeded shuffled order) or a seeded random draw; flows take turns.
//
// Per burst the work is O(active paced shares + frames); starts, ends and burst gaps rebuild
// the round robin's table (rare). No allocation after construction.
#pragma once
#include <algorithm>
#include <cstdint>
#include <vector>

#include "worker/pacer.h"
#include "packet/frame.h"
#include "worker/flow_gates.h"
#include "worker/tx_program.h"

namespace lr::worker {

// One frame of a burst: its template (TxProgram::templates), size and share.
struct PlannedFrame {
    uint32_t tmpl = 0;
    uint16_t len = 0;       // frame bytes without FCS
    uint16_t size_idx = 0;  // into the share's sizes
    uint32_t share = 0;
};

class StreamScheduler {
public:
    // `gates`: the streams start, pause and stop when a controller says (FlowGates); then no
    // share starts on its own, and the scheduler is never done (the controller ends the trial).
    StreamScheduler(const TxProgram& p, uint32_t max_burst, const FlowGates* gates = nullptr);

    // The trial starts at `now` (ns, the worker's burst clock).
    void start(uint64_t now);
    // Up to `room` frames due at `now`, into out[0..n); returns n.
    uint32_t next(uint64_t now, uint32_t room, PlannedFrame* out);
    // The same frames, `n` of them, where they lie: in `out`, or (a burst of the cycle, no
    // frame of a paced share before it) in the cycle's own table, not copied. Valid until the
    // next call.
    const PlannedFrame* plan(uint64_t now, uint32_t room, PlannedFrame* out, uint32_t& n);
    // Frames planned but not taken by the device's buffers: their shares send them later (in
    // reverse order of planning: the last planned first).
    void unplan(const PlannedFrame* f, uint32_t n);
    // Bursts are copies of the round robin's cycle (see build_cycle).
    bool cycling() const { return !cycle_.empty(); }
    // Every share that ends has ended, and none runs until the trial ends (never with gates).
    bool done() const { return !gates_ && active_ends_ == 0 && !continuous_; }
    // With gates: the start number a share last applied (FlowGates::share_done).
    uint32_t start_number(uint32_t share) const { return st_[share].start_no; }
    // Nothing is due before this (ns): paced departures and starts; `now` when an unpaced
    // share is sending.
    uint64_t next_due(uint64_t now) const;
    // Per share: frames planned, by flow and by size index (unplan() takes frames back out).
    uint64_t planned(uint32_t share) const { return st_[share].planned + from_cycle(share); }
    // Flows take turns and sizes follow their period from the trial's start, so both follow
    // from the frames planned (random sizes are counted one by one).
    uint64_t planned_flow(uint32_t share, uint32_t flow) const;
    uint64_t planned_size(uint32_t share, uint32_t size) const;
    // The flow and size index a template and length stand for in a share (for frames the
    // device never confirmed, found by their buffer's tag and length).
    void forget(uint32_t share, uint32_t tmpl, uint16_t len);
    // The shares that ended since the last call (for StreamProgress), appended to `out`.
    template <class F>
    void for_each_newly_done(F&& f) {
        for (; reported_done_ < done_order_.size(); ++reported_done_) f(done_order_[reported_done_]);
    }
    // Pacing records summed over the paced shares (skipped slots, stalls...).
    PacingRecord record() const;
    uint64_t record_version() const;

private:
    // held: not started by its gate yet; paused: by its gate (FlowGates).
    enum class State : uint8_t { waiting, active, gap, done, held, paused };
    // A share's state. What every frame it sends touches comes first, in one cache line:
    // with thousands of streams a frame's share is out of cache, and each line more a frame
    // reads was a line more to fetch (its definition, its vectors, its pacer: some 8 lines a
    // frame, where the sender ran at 40 % of its one-stream rate with 4096 streams).
    struct alignas(64) Share {
        const StreamShare* def = nullptr;
        uint64_t left = 0;        // frames still to plan (count shares)
        uint64_t planned = 0;
        uint32_t flow = 0;        // the next flow
        uint32_t size_pos = 0;    // position in the period, or the random draw's state
        uint32_t in_burst = 0;    // multi-burst: frames of the current burst planned
        // A share of one_template_row (one fixed size, not replayed, consecutive flows): its
        // first template (its frames need nothing else of `def`); kGeneral otherwise.
        uint32_t first_tmpl = kGeneral;
        uint32_t flows = 1;
        uint32_t burst_frames = 0;  // def->burst_frames
        uint16_t len = 0;           // with first_tmpl: its frames' length (without FCS)
        State state = State::waiting;
        bool paced = false;
        bool counted = false;  // it ends after `count` frames
        // The rest: starts, gaps, gates, random sizes, replays, pacing.
        uint64_t resume_at = 0;   // waiting (delay) or gap: when it starts again (UINT64_MAX: on its predecessor)
        uint64_t rng = 0;
        uint32_t record = 0;      // replay: the next record
        uint32_t size_at = 0;  // random sizes: its counters in counts_
        uint32_t start_no = 0;   // gates: the start number applied
        uint32_t cycle_first = 0;  // in the cycle: its positions are cycle_pos_[cycle_first, + cycle_slots)
        uint32_t cycle_slots = 0;  // 0: not in the cycle (its frames are counted in `planned`)
        State resume_state = State::active;  // paused: what it was doing (active, waiting or gap)
        uint64_t pause_left_ns = 0;          // paused while waiting or in a gap: the time that was left
        Pacer pacer;
    };
    static constexpr uint32_t kGeneral = UINT32_MAX;
    // Above this many slots in the round robin, the share a few turns ahead is fetched first.
    static constexpr size_t kFetchSharesAbove = 32;
    static constexpr size_t kFetchAhead = 8;

    // Per frame (inline): the share's next size, the frame itself, and whether the share stops.
    [[gnu::always_inline]] uint16_t next_size(Share& sh) {
        const auto& d = *sh.def;
        if (d.sizes.size() == 1) return 0;
        if (d.random_sizes) {  // xorshift64*, then a multiply-shift into [0, sizes)
            sh.rng ^= sh.rng >> 12;
            sh.rng ^= sh.rng << 25;
            sh.rng ^= sh.rng >> 27;
            const uint64_t r = (sh.rng * 0x2545F4914F6CDD1Dull) >> 32;
            return static_cast<uint16_t>((r * d.sizes.size()) >> 32);
        }
        const uint16_t v = d.period[sh.size_pos];
        if (++sh.size_pos == d.period.size()) sh.size_pos = 0;
        return v;
    }
    [[gnu::always_inline]] void emit(uint32_t s, PlannedFrame& f) {
        Share& sh = st_[s];
        f.share = s;
        if (sh.first_tmpl != kGeneral) [[likely]] {
            f.tmpl = sh.first_tmpl + sh.flow;
            if (++sh.flow == sh.flows) sh.flow = 0;
            f.len = sh.len;
            f.size_idx = 0;
        } else {
            emit_general(sh, f);
        }
        ++sh.planned;
        if (sh.counted) --sh.left;
        if (sh.burst_frames) ++sh.in_burst;
    }
    // Sizes that vary, a replay, flows whose templates are not consecutive.
    [[gnu::always_inline]] void emit_general(Share& sh, PlannedFrame& f) {
        const auto& d = *sh.def;
        if (d.replay) {
            f.tmpl = d.templates[sh.record];
            if (++sh.record == d.templates.size()) sh.record = 0;
            f.len = p_.templates[f.tmpl].len;
            f.size_idx = 0;
            return;
        }
        const uint16_t si = next_size(sh);
        f.tmpl = d.templates[d.size_row[si] * d.flows + sh.flow];
        if (++sh.flow == d.flows) sh.flow = 0;
        f.len = static_cast<uint16_t>(d.sizes[si] - packet::kFcsLen);
        f.size_idx = si;
        if (d.random_sizes) ++counts_[sh.size_at + f.size_idx];  // the others follow from `planned`
    }
    // Ends a burst or the share; true if it stopped.
    [[gnu::always_inline]] bool after_emit(uint32_t s, uint64_t now) {
        Share& sh = st_[s];
        if (sh.counted && sh.left == 0) {
            sh.state = State::done;
            --active_ends_;
            done_order_.push_back(s);
            return true;
        }
        if (sh.burst_frames && sh.in_burst == sh.burst_frames) {
            sh.in_burst = 0;
            sh.state = State::gap;
            sh.resume_at = now + sh.def->burst_gap_ns;
            next_event_ = std::min(next_event_, sh.resume_at);
            waiting_.push_back(s);
            return true;
        }
        return false;
    }
    void activate(uint64_t now);
    void go(uint32_t s, uint64_t now);  // starts (or resumes after a gap) sending
    void apply_gates(uint64_t now);     // the streams' commands changed (FlowGates)
    void leave_lists(uint32_t s);       // out of paced_, the round robin and waiting_
    void revive(uint32_t s);            // unplan(): back to sending
    void rebuild_fill();
    void rebuild_next_event();
    // The cycle: when every share of the round robin sends one template forever (no count, no
    // bursts, one flow, one size), the round robin's frames repeat with its table, so a burst
    // is a copy of the next stretch of a table of planned frames, and nothing per share is
    // touched per frame. Their frames are counted from the frames the cycle gave.
    void build_cycle();
    void settle_cycle();  // the cycle's counts into the shares' own (before the table changes)
    uint64_t from_cycle(uint32_t share) const;
    const PlannedFrame* take_cycle(uint32_t n);  // the cycle's next n (<= kMaxBurstFrames) frames

    const TxProgram& p_;
    std::vector<Share> st_;
    std::vector<uint32_t> paced_;   // active paced shares
    std::vector<uint32_t> quota_;   // per entry of paced_: frames due in this burst
    std::vector<uint32_t> fill_;    // the unpaced round robin: share per slot
    std::vector<std::pair<double, uint32_t>> fill_scratch_;  // its build (reserved: no allocation)
    std::vector<uint32_t> waiting_;  // shares waiting to start, or in a burst gap
    size_t fill_at_ = 0;
    // The cycle (when the round robin allows it): the table of planned frames (fill_ repeated
    // to at least kCycleMin), each share's positions in it (ascending), the frames it gave.
    static constexpr size_t kCycleMin = 256;
    std::vector<PlannedFrame> cycle_;  // the period, then its first kMaxBurstFrames frames again
    size_t cycle_period_ = 0;
    std::vector<uint32_t> cycle_pos_;
    std::vector<uint32_t> cycle_cursor_;  // its build (reserved: no allocation)
    uint64_t cycle_given_ = 0;
    std::vector<uint32_t> done_order_;
    std::vector<uint64_t> counts_;  // shares of random sizes: frames per size
    size_t reported_done_ = 0;
    uint64_t next_event_ = UINT64_MAX;  // the earliest resume_at of a waiting or gapped share
    bool waits_on_streams_ = false;     // some share waits for another stream
    uint32_t active_ends_ = 0;          // shares with a count not yet done
    bool continuous_ = false;           // some share never ends
    uint64_t t0_ = 0;
    const FlowGates* gates_ = nullptr;
    uint32_t gates_seen_ = ~0u;         // the generation applied last
};

}  // namespace lr::worker
