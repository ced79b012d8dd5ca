// Rates in every unit, and the pacer's schedule on a synthetic clock.
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "spec/rate.h"
#include "util/error.h"
#include "worker/pacer.h"

using namespace lr;
using spec::RateSpec;

namespace {

std::string usage_error(const std::string& s) {
    try {
        spec::parse_rate(s, "--rate");
    } catch (const UsageError& e) {
        return e.what();
    }
    return "(accepted)";
}

}  // namespace

TEST(Rate, EveryUnitParses) {
    auto r = spec::parse_rate("10Mpps", "--rate");
    EXPECT_EQ(r.unit, RateSpec::Unit::pps);
    EXPECT_DOUBLE_EQ(r.value, 10e6);
    EXPECT_DOUBLE_EQ(spec::parse_rate("250kpps", "--rate").value, 250e3);
    EXPECT_DOUBLE_EQ(spec::parse_rate("1000", "--rate").value, 1000);
    EXPECT_DOUBLE_EQ(spec::parse_rate("10k", "--rate").value, 10e3);  // as before: a count of packets/s
    EXPECT_DOUBLE_EQ(spec::parse_rate("2.5M", "--rate").value, 2.5e6);
    r = spec::parse_rate("9.5Gbps", "--rate");
    EXPECT_EQ(r.unit, RateSpec::Unit::l1_bps);
    EXPECT_DOUBLE_EQ(r.value, 9.5e9);
    EXPECT_EQ(spec::parse_rate("9.5Gbps-l2", "--rate").unit, RateSpec::Unit::l2_bps);
    EXPECT_EQ(spec::parse_rate("9.5Gbps-l1", "--rate").unit, RateSpec::Unit::l1_bps);
    r = spec::parse_rate("100%", "--rate");
    EXPECT_EQ(r.unit, RateSpec::Unit::percent);
    EXPECT_DOUBLE_EQ(r.value, 100);
    EXPECT_FALSE(spec::parse_rate("max", "--rate").limited());
    EXPECT_EQ(spec::parse_rate("9.5Gbps", "--rate").str(), "9.5 Gbit/s L1");
    EXPECT_EQ(spec::parse_rate("250kpps", "--rate").str(), "250 kpps");
}

TEST(Rate, BadRatesNameTheValue) {
    EXPECT_NE(usage_error("fast").find("invalid --rate \"fast\": expected packets/s"), std::string::npos);
    EXPECT_NE(usage_error("0").find("invalid --rate \"0\": must be greater than zero"), std::string::npos);
    EXPECT_NE(usage_error("-5Mpps").find("\"-5Mpps\""), std::string::npos);
    EXPECT_NE(usage_error("150%").find("at most 100"), std::string::npos);
    EXPECT_NE(usage_error("10Mbit").find("invalid --rate \"10Mbit\""), std::string::npos);
    EXPECT_NE(usage_error("nan").find("invalid --rate \"nan\""), std::string::npos);
}

TEST(Rate, ConversionsFollowRfc2544Counting) {
    // 64-byte frames at 10 Gbit/s L1: 14.88 Mpps (84 bytes on the wire each).
    EXPECT_NEAR(spec::to_pps(spec::parse_rate("10Gbps", "r"), 64, 0), 14880952.38, 0.01);
    EXPECT_NEAR(spec::to_pps(spec::parse_rate("100%", "r"), 64, 10e9), 14880952.38, 0.01);
    EXPECT_NEAR(spec::to_pps(spec::parse_rate("50%", "r"), 1518, 10e9), 406371.91, 0.01);  // 5e9 / (1538 * 8)
    EXPECT_NEAR(spec::to_pps(spec::parse_rate("10Gbps-l2", "r"), 64, 0), 19531250, 0.01);
    EXPECT_DOUBLE_EQ(spec::to_pps(spec::parse_rate("max", "r"), 64, 10e9), 0);
    EXPECT_THROW(spec::to_pps(spec::parse_rate("50%", "r"), 64, 0), UsageError) << "no line rate";
    EXPECT_THROW(spec::to_pps(spec::parse_rate("20Mpps", "r"), 64, 10e9), UsageError) << "above the line rate";
    EXPECT_DOUBLE_EQ(spec::parse_bits_per_second("10G", "--line-rate"), 10e9);
    EXPECT_DOUBLE_EQ(spec::parse_bits_per_second("25Gbps", "--line-rate"), 25e9);
    EXPECT_DOUBLE_EQ(spec::parse_bits_per_second("100M", "--line-rate"), 100e6);
    EXPECT_THROW(spec::parse_bits_per_second("fast", "--line-rate"), UsageError);
    EXPECT_EQ(spec::describe_rate(14880952.38, 64, 10e9),
              "14.881 Mpps = 10 Gbit/s L1 = 7.619 Gbit/s L2 = 100 % of 10 Gbit/s");
}

namespace {

// Runs the pacer on a synthetic clock advancing `step_ns` per poll, asking for up to `burst`
// frames each time; returns the departure time of every frame.
std::vector<uint64_t> departures(worker::PacingPlan p, uint64_t step_ns, uint64_t until_ns, uint32_t burst = 64) {
    worker::Pacer pacer(p);
    pacer.start(0);
    std::vector<uint64_t> t;
    for (uint64_t now = 0; now < until_ns; now += step_ns)
        for (uint32_t n = pacer.due(now, burst); n; --n) t.push_back(now);
    return t;
}

}  // namespace

TEST(Pacer, ConstantRateSendsEachFrameAtItsDueTime) {
    const auto t = departures({.pps = 1e6, .max_burst = 64}, 100, 10'000'000);
    ASSERT_EQ(t.size(), 10000u);  // 10 ms at 1 Mpps
    for (size_t i = 1; i < t.size(); ++i) EXPECT_EQ(t[i] - t[i - 1], 1000u) << i;  // one per microsecond
}

TEST(Pacer, ShortBurstsAtHighRates) {
    // Polled every 10 us at 10 Mpps: 100 frames per poll would be due, but at most a burst.
    const auto t = departures({.pps = 10e6, .max_burst = 32}, 10'000, 1'000'000, 32);
    EXPECT_LE(t.size(), 10000u) << "never more than asked";
}

TEST(Pacer, BurstsKeepTheAverage) {
    const auto t = departures({.pps = 1e6, .kind = worker::PacingPlan::Kind::burst, .burst = 8}, 100, 8'000'000);
    ASSERT_EQ(t.size(), 8000u);
    for (size_t i = 0; i < t.size(); ++i) EXPECT_EQ(t[i], (i / 8) * 8000) << i;  // 8 together every 8 us
}

TEST(Pacer, PoissonGapsAreExponentialAndReproducible) {
    const worker::PacingPlan p{.pps = 1e5, .kind = worker::PacingPlan::Kind::poisson, .seed = 42};
    const auto t = departures(p, 100, 2'000'000'000);
    EXPECT_EQ(t, departures(p, 100, 2'000'000'000)) << "the same seed, the same departures";
    auto q = p;
    q.seed = 43;
    EXPECT_NE(t, departures(q, 100, 2'000'000'000));
    ASSERT_GT(t.size(), 190000u);
    double sum = 0, sumsq = 0;
    size_t above_mean = 0;
    for (size_t i = 1; i < t.size(); ++i) {
        const double g = static_cast<double>(t[i] - t[i - 1]);
        sum += g;
        sumsq += g * g;
        above_mean += g > 10'000;
    }
    const double n = static_cast<double>(t.size() - 1), mean = sum / n, sd = std::sqrt(sumsq / n - mean * mean);
    EXPECT_NEAR(mean, 10'000, 100);                 // 1 / rate
    EXPECT_NEAR(sd / mean, 1.0, 0.02);              // an exponential's coefficient of variation
    EXPECT_NEAR(above_mean / n, std::exp(-1.0), 0.01);  // P(gap > mean) = 1/e
}

TEST(Pacer, BeyondTheCatchUpWindowItGivesUpTheOldestSlots) {
    worker::Pacer pacer({.pps = 200e3, .max_burst = 32});  // the default window: 20 ms
    pacer.start(0);
    uint64_t sent = 0;
    for (uint64_t now = 0; now < 1'000'000'000; now += 1000) sent += pacer.due(now, 32);  // 1 s
    EXPECT_NEAR(static_cast<double>(sent), 200e3, 2);
    EXPECT_EQ(pacer.record().stalls, 0u);
    // Nothing for 2 s (a link outage), then 1 s more.
    uint64_t after = 0;
    for (uint64_t now = 3'000'000'000; now < 4'000'000'000; now += 1000) after += pacer.due(now, 32);
    EXPECT_NEAR(static_cast<double>(after), 200e3 + 4000, 40) << "a second's frames and the window's 20 ms, never the 2 s";
    const auto& r = pacer.record();
    EXPECT_NEAR(static_cast<double>(r.skipped), 400e3 - 4000, 2);
    EXPECT_NEAR(r.behind_ns / 1e9, 1.98, 0.001);
    EXPECT_EQ(r.stalls, 1u);
    EXPECT_NEAR(r.longest_stall_ns / 1e9, 2.0, 0.001);
    EXPECT_NEAR(static_cast<double>(r.largest_catch_up), 4000, 2) << "the window's worth, sent late at once";
}

TEST(Pacer, AStallWithinTheCatchUpWindowIsMadeUpSoTheTrialOffersItsExactRate) {
    for (const uint64_t stall_us : {800, 15'000}) {
        worker::Pacer pacer({.pps = 100e3, .max_burst = 32});
        pacer.start(0);
        uint64_t sent = 0;
        for (uint64_t now = 0; now < 1'000'000'000; now += 1000) {
            if (now >= 400'000'000 && now < 400'000'000 + stall_us * 1000) continue;  // preempted
            sent += pacer.due(now, 32);
        }
        const auto& r = pacer.record();
        EXPECT_EQ(r.skipped, 0u) << stall_us;
        EXPECT_NEAR(static_cast<double>(sent), 100e3, 1) << "the late frames left at once";
        EXPECT_EQ(r.stalls, 1u);
        EXPECT_NEAR(r.longest_stall_ns / 1e3, static_cast<double>(stall_us), 2);
        EXPECT_NEAR(static_cast<double>(r.largest_catch_up), stall_us / 10.0, 2) << "100 kpps: one frame per 10 us";
    }
}

TEST(Pacer, WithoutCatchUpOnlyTwoBurstsOfLatenessAreMadeUp) {
    worker::Pacer pacer({.pps = 100e3, .max_burst = 32, .catch_up_ns = 0});  // --catch-up none
    pacer.start(0);
    uint64_t sent = 0;
    for (uint64_t now = 0; now < 1'000'000'000; now += 1000) {
        if (now >= 400'000'000 && now < 415'000'000) continue;  // 15 ms
        sent += pacer.due(now, 32);
    }
    // Two bursts of 32 at 100 kpps: 640 us are made up, the other 14.36 ms given up.
    EXPECT_NEAR(static_cast<double>(pacer.record().skipped), 1436, 2);
    EXPECT_NEAR(static_cast<double>(sent), 100e3 - 1436, 2);
}

TEST(Pacer, EachStallIsCountedOnceAndTheLongestKept) {
    worker::Pacer pacer({.pps = 100e3, .max_burst = 32});
    pacer.start(0);
    uint64_t version = pacer.record_version();
    for (uint64_t now = 0; now < 1'000'000'000; now += 1000) {
        const bool stalled = (now >= 100'000'000 && now < 102'000'000) || (now >= 500'000'000 && now < 505'000'000) ||
                             (now >= 800'000'000 && now < 800'050'000);  // 2 ms, 5 ms, 50 us (not a stall)
        if (!stalled) pacer.due(now, 32);
    }
    EXPECT_EQ(pacer.record().stalls, 2u);
    EXPECT_NEAR(pacer.record().longest_stall_ns / 1e6, 5.0, 0.01);
    EXPECT_NE(pacer.record_version(), version) << "a worker publishes the record when it changes";
}
