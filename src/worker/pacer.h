// TX pacing: the single place where a worker's sending rate is limited. Constant bit rate
// per queue, checked once per burst against the steady clock; no sleeping (the worker owns
// its core), no clock reads when unlimited.
#pragma once
#include <cstdint>

#include "stats/counters.h"

namespace lr::worker {

class Pacer {
public:
    // pps = 0: unlimited.
    explicit Pacer(double pps = 0) : pps_(pps) {}
    bool limited() const { return pps_ > 0; }
    void start() { t0_ = stats::now_ns(); }
    // Packets that may go now given `sent` so far, at most `want`.
    uint32_t allowance(uint64_t sent, uint32_t want) const {
        if (pps_ <= 0) return want;
        const double due = static_cast<double>(stats::now_ns() - t0_) * 1e-9 * pps_ + 1.0;
        if (due <= static_cast<double>(sent)) return 0;
        const double room = due - static_cast<double>(sent);
        return room >= want ? want : static_cast<uint32_t>(room);
    }

private:
    double pps_;
    uint64_t t0_ = 0;
};

}  // namespace lr::worker
