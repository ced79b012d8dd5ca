// A cheap CLOCK_MONOTONIC for per-burst timestamps: the TSC, scaled to nanoseconds and
// re-anchored to CLOCK_MONOTONIC every millisecond.
//
// A vDSO clock_gettime costs ~23 ns here, a rdtsc ~10 ns; at 100 Mpps and 32 frames per
// burst the difference is 4 % of the TX budget. The TSC is used only when the kernel itself
// keeps time with it (clocksource "tsc", which implies a constant, non-stop, synchronised
// TSC); otherwise every read is a clock_gettime.
//
// Accuracy: each worker re-reads CLOCK_MONOTONIC once per anchor period (1 ms) and
// extrapolates in between with a rate calibrated once per process over >= 20 ms. The
// extrapolation error is the rate error times the time since the anchor: with a rate known
// to ~1 ppm, under 2 ns. Values from two processes (TX in one, RX in another) therefore
// agree to within a few ns, as two clock_gettime readers would.
#pragma once
#include <cstdint>
#include <string>

#include "stats/counters.h"

#if defined(__x86_64__) || defined(__i386__)
#include <x86intrin.h>
#define LR_HAVE_TSC 1
#endif

namespace lr::stats {

struct TscRate {
    bool usable = false;
    uint64_t mult = 0;         // nanoseconds per tick, 32.32 fixed point
    uint64_t anchor_ticks = 0;  // ticks per anchor period (1 ms)
    std::string why;           // why the TSC is not used (empty when it is)
};

// Calibrated once per process (thread-safe, first call takes ~20 ms).
const TscRate& tsc_rate();

// What the report calls the TX/RX timestamp source.
std::string clock_source_name();

// One per worker, not shared: its anchor and a copy of the rate live in the worker's own
// cache line.
class BurstClock {
public:
    BurstClock() {
        const TscRate& r = tsc_rate();
        usable_ = r.usable;
        mult_ = r.mult;
        anchor_ticks_ = r.anchor_ticks;
        if (usable_) anchor();
    }
    uint64_t now() {
#ifdef LR_HAVE_TSC
        if (usable_) {
            const uint64_t d = __rdtsc() - tsc0_;
            if (d < anchor_ticks_) return ns0_ + ((d * mult_) >> 32);
            anchor();
            return ns0_;
        }
#endif
        return now_ns();
    }

private:
    void anchor() {
#ifdef LR_HAVE_TSC
        // The clock read sits between two TSC reads: take their midpoint as its tick. An
        // interrupt or a preempted vCPU in between would blur the pair, so the tightest of up
        // to eight pairs is kept, stopping at the first within 100 ns (typically ~35 ns).
        // This runs once per millisecond.
        uint64_t best = ~uint64_t(0);
        for (int tries = 0; tries < 8 && best * 10'000 >= anchor_ticks_; ++tries) {
            const uint64_t a = __rdtsc();
            const uint64_t n = now_ns();
            const uint64_t b = __rdtsc();
            if (b - a < best) {
                best = b - a;
                ns0_ = n;
                tsc0_ = a + (b - a) / 2;
            }
        }
#endif
    }

    bool usable_ = false;
    uint64_t mult_ = 0, anchor_ticks_ = 0;
    uint64_t tsc0_ = 0, ns0_ = 0;
};

}  // namespace lr::stats
