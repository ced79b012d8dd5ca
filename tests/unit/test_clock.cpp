// The burst clock (TSC re-anchored to CLOCK_MONOTONIC): its calibrated rate. Its error against
// clock_gettime (every reading between two taken around it, within 200 ns, across many anchors)
// is a timing bound: timing_clock.cpp, in the `timing` suite.
#include <gtest/gtest.h>

#include <string>

#include "stats/tsc_clock.h"

TEST(BurstClock, RateIsPlausibleWhenUsed) {
    const auto& r = lr::stats::tsc_rate();
    if (!r.usable) {
        EXPECT_FALSE(r.why.empty());  // the fallback always says why
        EXPECT_NE(lr::stats::clock_source_name().find("CLOCK_MONOTONIC"), std::string::npos);
        return;
    }
    // 100 MHz .. 10 GHz, and one anchor period is 1 ms of ticks.
    EXPECT_GT(r.anchor_ticks, 100'000u);
    EXPECT_LT(r.anchor_ticks, 10'000'000u);
    const double ns_per_tick = static_cast<double>(r.mult) / 4294967296.0;
    EXPECT_NEAR(ns_per_tick * static_cast<double>(r.anchor_ticks), 1e6, 1e6 * 1e-4);
}
