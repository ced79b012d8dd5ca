// The burst clock's error against CLOCK_MONOTONIC: a timing bound, in the `timing` suite, not
// in unit_tests. An interrupt or a preempted vCPU between a TSC read and its anchor's clock
// read shows up as clock error, so one noisy moment on a shared host can break the bound with
// nothing wrong in the clock. The measurement (60 ms of reads, about 60 re-anchors) therefore
// runs up to 3 times, 1 s then 2 s apart (a burst of load can pass); each miss is printed with
// its values, and the test fails only when all 3 miss (docs/reliability.md, "Timing checks").
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <thread>

#include "stats/tsc_clock.h"

using lr::stats::BurstClock;
using lr::stats::now_ns;

namespace {

struct ClockError {
    uint64_t reads = 0;
    int64_t worst_early = 0, worst_late = 0;
    uint64_t backwards = 0;
};

// docs/measurement.md states the TSC path's error as "tens of ns"; allow 200 ns for a loaded
// VM (an interrupt between the TSC read and the anchor's clock read).
constexpr int64_t kBoundNs = 200;
constexpr int kAttempts = 3;

ClockError measure() {
    BurstClock clk;
    ClockError e;
    uint64_t prev = 0;
    const uint64_t end = now_ns() + 60'000'000;  // 60 ms: about 60 re-anchors
    while (true) {
        const uint64_t a = now_ns();
        const uint64_t t = clk.now();
        const uint64_t b = now_ns();
        ++e.reads;
        // t must lie in [a, b]; how far outside it falls is the clock's error.
        e.worst_early = std::max<int64_t>(e.worst_early, static_cast<int64_t>(a) - static_cast<int64_t>(t));
        e.worst_late = std::max<int64_t>(e.worst_late, static_cast<int64_t>(t) - static_cast<int64_t>(b));
        if (t < prev) e.backwards = std::max(e.backwards, prev - t);
        prev = t;
        if (b > end) break;
    }
    return e;
}

bool within(const ClockError& e) {
    return e.reads > 1000 && e.worst_early <= kBoundNs && e.worst_late <= kBoundNs &&
           e.backwards <= static_cast<uint64_t>(kBoundNs);
}

}  // namespace

TEST(BurstClockTiming, AgreesWithClockMonotonicAcrossAnchors) {
    ClockError e;
    for (int attempt = 1; attempt <= kAttempts; ++attempt) {
        e = measure();
        std::printf("attempt %d of %d, source: %s; %llu reads, worst early %lld ns, late %lld ns, step back %llu ns\n",
                    attempt, kAttempts, lr::stats::clock_source_name().c_str(),
                    static_cast<unsigned long long>(e.reads), static_cast<long long>(e.worst_early),
                    static_cast<long long>(e.worst_late), static_cast<unsigned long long>(e.backwards));
        if (within(e)) return;
        std::printf("timing miss (bound %lld ns, more than 1000 reads)%s\n", static_cast<long long>(kBoundNs),
                    attempt < kAttempts ? ", one more attempt" : "");
        if (attempt < kAttempts) std::this_thread::sleep_for(std::chrono::seconds(1 << (attempt - 1)));
    }
    // Every attempt missed: the last one's figures, each against its bound.
    EXPECT_GT(e.reads, 1000u);
    EXPECT_LE(e.worst_early, kBoundNs);
    EXPECT_LE(e.worst_late, kBoundNs);
    EXPECT_LE(e.backwards, static_cast<uint64_t>(kBoundNs));
}
