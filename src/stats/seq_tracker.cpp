#include "stats/seq_tracker.h"

namespace lr::stats {

uint64_t SeqTracker::extend_slow(uint64_t wire, unsigned bits) const {
    const uint64_t mod = bits >= 64 ? 0 : (uint64_t(1) << bits);
    if (!mod) return wire;
    wire &= mod - 1;
    if (!any()) return wire;  // streams start at 0
    // The value nearest to the highest seen: within half the wire space either side.
    const uint64_t base = highest_;
    const uint64_t d = (wire - base) & (mod - 1);
    const int64_t sd = d >= mod / 2 ? static_cast<int64_t>(d) - static_cast<int64_t>(mod) : static_cast<int64_t>(d);
    const int64_t r = static_cast<int64_t>(base) + sd;
    return r < 0 ? wire : static_cast<uint64_t>(r);
}

void SeqTracker::clear_range(uint64_t from, uint64_t to) {
    if (to - from >= kWords * 64) {
        bits_.clear();
        return;
    }
    for (uint64_t s = from; s < to; ++s) {
        if (s % 64 == 0 && to - s >= 64) {
            bits_[(s / 64) % kWords] = 0;
            s += 63;
            continue;
        }
        bits_[(s / 64) % kWords] &= ~(uint64_t(1) << (s % 64));
    }
}

SeqTracker::Arrival SeqTracker::add_slow(uint64_t s) {
    store_word();
    const Arrival a = add_to_ring(s);
    load_word();
    return a;
}

SeqTracker::Arrival SeqTracker::add_to_ring(uint64_t s) {
    if (!any()) {
        highest_ = s;
        clear_range(s >= kWindow ? s - kWindow : 0, s + 1);
        mark(s);
        ++received_;
        return Arrival::in_order;
    }
    if (s > highest_) {
        clear_range(highest_ + 1, s + 1);  // forget what fell out of the ring
        highest_ = s;
        mark(s);
        ++received_;
        return Arrival::in_order;
    }
    if (highest_ - s >= kWindow) {
        ++rare_.late;
        return Arrival::late;
    }
    if (seen(s)) {
        ++rare_.duplicates;
        return Arrival::duplicate;
    }
    mark(s);
    ++received_;
    ++rare_.reordered;
    return Arrival::reordered;
}

SeqTracker::Arrived SeqTracker::arrive_slow(uint64_t wire, unsigned bits) {
    const uint64_t s = extend(wire, bits);
    const uint64_t next = any() ? highest_ + 1 : 0;  // the sequence expected in order
    const Arrival a = add(s);
    return {a, a == Arrival::in_order ? s - next : 0};
}

}  // namespace lr::stats
