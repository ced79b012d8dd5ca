// One direction of an emulated path (`linerate impair`): what happens to each frame between
// its arrival on one port and its departure from the other. A frame that arrives is counted,
// then dropped (the loss model, or a full emulator: `limit` frames held), or copied into a
// slot of the impairer's own store and held: in a timing wheel until its delay has passed
// (the delay, its jitter; `reorder` frames skip it), then in the link's queue until the link
// (its rate) has carried the frames before it. Duplicates get a slot of their own; a
// corrupted frame has one bit of its payload flipped. Every decision is counted, and the
// random ones come from seeded generators (the loss model's its own), so a seed decides the
// same frames again.
//
// Single-threaded: one forwarding worker owns it. No allocation after construction.
#pragma once
#include <cstdint>
#include <memory>
#include <vector>

#include "spec/impair_spec.h"
#include "stats/impair_counts.h"
#include "stats/latency.h"

namespace lr::worker {

using spec::ImpairPlan;
using spec::JitterDist;
using stats::ImpairCounts;

class Impairer {
public:
    explicit Impairer(const ImpairPlan& p);
    Impairer(const Impairer&) = delete;
    Impairer& operator=(const Impairer&) = delete;

    // A frame of `len` bytes (no FCS) arrived at `now` (ns, the worker's burst clock).
    void arrive(const uint8_t* data, uint32_t len, uint64_t now);
    // Moves what the delay line holds due by `now` to the link's queue; returns how many
    // frames may leave now (the link's queue, from its front), at most `most`.
    uint32_t ready(uint64_t now, uint32_t most = UINT32_MAX);
    // The frame at the front of the link's queue (ready() > 0).
    const uint8_t* front_data() const { return slot(queue_[qhead_]); }
    uint32_t front_len() const { return len_[queue_[qhead_]]; }
    // It left at `now`: counted, its time held recorded, its slot free.
    void pop_front(uint64_t now);
    // When something next becomes ready (ns); UINT64_MAX when nothing is held.
    uint64_t next_event(uint64_t now);
    const ImpairCounts& counts() const { return c_; }
    // How long each forwarded frame was held: arrival to departure.
    const stats::LatencyHistogram& residence() const { return residence_; }
    // How late each forwarded frame left: departure minus the time its delay and the link had
    // it due (the emulator's own lateness: its loop, the host's scheduling).
    const stats::LatencyHistogram& lateness() const { return lateness_; }
    const ImpairPlan& plan() const { return p_; }

private:
    static constexpr uint32_t kNone = UINT32_MAX;
    uint8_t* slot(uint32_t s) const { return store_.get() + static_cast<size_t>(s) * p_.slot_bytes; }
    static uint64_t next_random(uint64_t& state);
    static double uniform(uint64_t& state) {
        return static_cast<double>(next_random(state) >> 11) * (1.0 / 9007199254740992.0);
    }
    static bool chance(double p, uint64_t& state) { return p > 0 && (p >= 1 || uniform(state) < p); }
    uint64_t next_random() { return next_random(rng_); }
    double uniform() { return uniform(rng_); }
    bool chance(double p) { return chance(p, rng_); }
    bool lost();
    uint64_t sampled_delay();
    void corrupt(uint8_t* f, uint32_t len);
    uint32_t hold(const uint8_t* data, uint32_t len, uint64_t now, uint64_t index);
    void place(uint32_t s, uint64_t due, uint64_t now);  // the wheel, or the link when due
    void to_wheel(uint32_t s, uint64_t due);
    void to_link(uint32_t s, uint64_t due);
    void advance(uint64_t now);  // the wheel's buckets up to now into the link's queue
    void drain_bucket(uint64_t unit, uint64_t now, bool all);

    ImpairPlan p_;
    ImpairCounts c_;
    stats::LatencyHistogram residence_, lateness_;
    std::unique_ptr<uint8_t[]> store_;  // limit slots of slot_bytes (pages touched as used)
    std::vector<uint32_t> free_;        // free slots
    std::vector<uint32_t> len_, next_;  // per slot: frame length; next in its wheel bucket
    std::vector<uint64_t> arrival_, index_, due_;  // per slot: arrival time, arrival number, departure time
    std::vector<uint8_t> copy_;         // per slot: a duplicate's second copy
    // The delay line: a wheel of 2^unit_shift_ ns buckets, each a list of slots.
    unsigned unit_shift_ = 10;
    uint64_t mask_ = 0, cursor_ = 0;  // cursor_: the bucket (in units) not yet drained
    std::vector<uint32_t> head_, tail_;
    uint64_t in_wheel_ = 0, earliest_ = UINT64_MAX;  // a lower bound of the wheel's dues
    uint64_t advanced_to_ = UINT64_MAX;                // the last time advance() ran
    // The link: a ring of slots in departure order.
    std::vector<uint32_t> queue_;
    uint32_t qhead_ = 0, qsize_ = 0;
    double link_free_ = 0;    // when the link has carried the frames queued so far (ns)
    uint64_t last_due_ = 0;   // the delay line's last due (frames keep their order)
    uint64_t arrivals_ = 0, max_left_ = 0;  // arrival numbers; the highest that left
    bool any_left_ = false, bad_state_ = false;
    uint64_t rng_;
    // The loss model's own generator: it draws the same numbers for every frame whatever the
    // other decisions, so a seed loses the same arrival numbers whatever else the options ask.
    uint64_t loss_rng_;
};

}  // namespace lr::worker
