// The drain rule (engine/drain_rule.h): the quiet window's bounds, quiet counted from the last
// arrival and never from before the stop, and the --drain limit.
#include <gtest/gtest.h>

#include "engine/drain_rule.h"

using lr::engine::DrainRule;

TEST(DrainRule, WindowIsAtLeast100Ms) {
    EXPECT_DOUBLE_EQ(DrainRule(10.0, 2.0, 0.0).window_s, 0.1);
    EXPECT_DOUBLE_EQ(DrainRule(10.0, 2.0, 0.010).window_s, 0.1);  // 2 x 10 ms is shorter
}

TEST(DrainRule, WindowIsTwiceTheWorstLatency) {
    EXPECT_DOUBLE_EQ(DrainRule(10.0, 2.0, 0.3).window_s, 0.6);
}

TEST(DrainRule, WindowNeverLongerThanTheDrain) {
    EXPECT_DOUBLE_EQ(DrainRule(10.0, 0.5, 0.4).window_s, 0.5);
    EXPECT_DOUBLE_EQ(DrainRule(10.0, 0.05, 0.0).window_s, 0.05);  // --drain below 100 ms
}

// Times in binary fractions, so the comparisons are exact.
TEST(DrainRule, QuietCountsFromTheLastArrival) {
    const DrainRule rule(8.0, 2.0, 0.125);  // window 250 ms
    // Frames kept arriving until 8.5 s: quiet only 250 ms after that.
    EXPECT_FALSE(rule.quiet(8.5, 8.5));
    EXPECT_FALSE(rule.quiet(8.74, 8.5));
    EXPECT_TRUE(rule.quiet(8.75, 8.5));
}

TEST(DrainRule, QuietNeverCountsFromBeforeTheStop) {
    const DrainRule rule(8.0, 2.0, 0.125);
    // The last arrival came long before the stop: the window still starts at the stop.
    EXPECT_FALSE(rule.quiet(8.125, 3.0));
    EXPECT_TRUE(rule.quiet(8.25, 3.0));
}

TEST(DrainRule, ExpiresAfterTheDrainLimit) {
    const DrainRule rule(8.0, 2.0, 0.0);
    EXPECT_FALSE(rule.expired(9.999));
    EXPECT_TRUE(rule.expired(10.0));
    EXPECT_TRUE(rule.expired(30.0));
}
