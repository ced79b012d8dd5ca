// The procedures on the in-memory backend (exact counts per row, frame loss that follows the
// wire's loss, invalid trials never counted as the device's loss), the checks behind every
// verdict, and the JUnit file.
#include <gtest/gtest.h>

#include "backend/loop/loop_backend.h"
#include "procedures/procedures.h"
#include "report/checks_report.h"
#include "result/checks.h"
#include "spec/options.h"
#include "spec/rate.h"

using namespace lr;

namespace {

spec::RunSpec make_spec(spec::OptionValues o, spec::Procedure kind) {
    auto s = spec::build_run_spec(o, kind);
    s.backend = spec::BackendKind::loop;
    s.interval_s = 0.05;
    s.settle_s = 0;  // the in-memory wire needs no rest between trials
    return s;
}

}  // namespace

TEST(Procedures, ASweepHasARowPerSizeWithExactCounts) {
    const auto spec = make_spec({{"tx", {"a"}}, {"rx", {"b"}}, {"sizes", {"64,512,1518"}}, {"count", {"5000"}},
                                 {"max-loss", {"0"}}},
                                spec::Procedure::sweep);
    engine::Session s(loop::make_loop_backend(), spec);
    const auto r = procedures::run_procedure(s, nullptr);
    ASSERT_EQ(r.sweep.size(), 3u);
    for (size_t i = 0; i < 3; ++i) {
        EXPECT_EQ(r.sweep[i].size, (std::vector<unsigned>{64, 512, 1518})[i]);
        EXPECT_EQ(r.sweep[i].trial.sent, 5000u);
        EXPECT_EQ(r.sweep[i].trial.received, 5000u);
    }
    ASSERT_EQ(r.checks.size(), 3u);
    EXPECT_EQ(r.checks[2].name, "loss 1518B");
    EXPECT_EQ(r.verdict(), result::Verdict::pass);
    EXPECT_EQ(r.trials.size(), 3u);
}

// These tests check the procedures' logic, not pacing: on a busy shared host the loop
// backend's sender can fall far behind its load (it was seen 58 % short), which the
// validity checks would rightly call an invalid trial. No offered rate or stretch is too far off.
constexpr double kAnyPace = 1e6;

TEST(Procedures, FrameLossFollowsTheWireAndAThresholdJudgesTheTopLoad) {
    // The wire loses every 100th frame: 1 % at every load, so the procedure never sees two
    // clean trials and walks down to the last step above 0 %.
    auto spec = make_spec({{"tx", {"a"}}, {"rx", {"b"}}, {"max-rate", {"200k"}}, {"step", {"25"}},
                           {"trial-duration", {"100ms"}}, {"max-loss", {"0.5"}}},
                          spec::Procedure::frame_loss);
    spec.procedure.rate_tolerance = kAnyPace;
    engine::Session s(loop::make_loop_backend({.drop_every = 100}), spec);
    const auto r = procedures::run_procedure(s, nullptr);
    ASSERT_FALSE(r.invalid) << r.invalid_reason;
    ASSERT_EQ(r.frame_loss.size(), 1u);
    const auto& steps = r.frame_loss[0].steps;
    ASSERT_EQ(steps.size(), 4u) << "100, 75, 50, 25 %";
    for (const auto& st : steps) {
        EXPECT_EQ(st.sent, static_cast<uint64_t>(st.load_pps * 0.1 + 0.5));
        EXPECT_NEAR(st.loss_pct, 1.0, 0.05);
    }
    ASSERT_EQ(r.checks.size(), 1u);
    EXPECT_FALSE(r.checks[0].pass);
    EXPECT_EQ(r.verdict(), result::Verdict::fail);
}

TEST(Procedures, FrameLossStopsAfterTwoCleanTrials) {
    auto spec = make_spec({{"tx", {"a"}}, {"rx", {"b"}}, {"max-rate", {"100k"}}, {"trial-duration", {"100ms"}}},
                          spec::Procedure::frame_loss);
    spec.procedure.rate_tolerance = kAnyPace;
    engine::Session s(loop::make_loop_backend(), spec);
    const auto r = procedures::run_procedure(s, nullptr);
    ASSERT_EQ(r.frame_loss.size(), 1u);
    EXPECT_EQ(r.frame_loss[0].steps.size(), 2u) << "100 % and 90 % lost nothing";
}

// A generator that cannot hold any load: every sender stops for 50 ms of each 100 ms trial,
// longer than the 20 ms catch-up window, so each trial falls short of its load (instrument-
// limited). Back-to-back and frame loss lower their load three times by 10 %, each with a
// note, then end invalid, never counting a short trial as the device's loss.
TEST(Procedures, ALoadTheGeneratorCannotHoldIsLoweredThreeTimesThenInvalid) {
    loop::LoopFaults stalls{.outage_from_ns = 20'000'000, .outage_to_ns = 70'000'000};
    for (auto kind : {spec::Procedure::back_to_back, spec::Procedure::frame_loss}) {
        auto spec = make_spec({{"tx", {"a"}}, {"rx", {"b"}}, {"max-rate", {"100k"}}, {"trial-duration", {"100ms"}},
                               {"repeat", {"1"}}},
                              kind);
        engine::Session s(loop::make_loop_backend(stalls), spec);
        const auto r = procedures::run_procedure(s, nullptr);
        ASSERT_TRUE(r.invalid) << "every trial was short";
        EXPECT_NE(r.invalid_reason.find("the generator offered"), std::string::npos) << r.invalid_reason;
        std::vector<std::string> lowered;
        for (const auto& n : r.notes)
            if (n.find("lowered to") != std::string::npos) lowered.push_back(n);
        ASSERT_EQ(lowered.size(), 3u) << ::testing::PrintToString(r.notes);
        double first = 0, last = 0;
        for (const auto& t : r.trials)
            if (!t.plan.probe) {
                if (first == 0) first = t.plan.load_pps;
                last = t.plan.load_pps;
                EXPECT_FALSE(t.valid);
            }
        EXPECT_NE(lowered[0].find("could not hold " + spec::format_pps(first)), std::string::npos) << lowered[0];
        EXPECT_NEAR(last, first * 0.729, first * 1e-9) << "the last trials ran at the third lowering";
        EXPECT_TRUE(r.frame_loss.empty() && r.back_to_back.empty()) << "no row from short trials";
    }
}

// A burst whose sender stopped for 4 ms: made up for (the load is exact) but not back to
// back. Back-to-back judges a burst only if its senders never fell further behind than 5 % of
// it, repeats the stalled ones, and ends invalid saying why; it lowers nothing (a lower load
// would not close the hole).
TEST(Procedures, BackToBackJudgesNoBurstWithAHole) {
    loop::LoopFaults stall{.outage_from_ns = 5'000'000, .outage_to_ns = 9'000'000};
    auto spec = make_spec({{"tx", {"a"}}, {"rx", {"b"}}, {"max-rate", {"100k"}}, {"trial-duration", {"40ms"}},
                           {"repeat", {"1"}}, {"settle", {"0"}}},
                          spec::Procedure::back_to_back);
    engine::Session s(loop::make_loop_backend(stall), spec);
    const auto r = procedures::run_procedure(s, nullptr);
    ASSERT_TRUE(r.invalid) << "every 40 ms burst had a 4 ms hole, more than its 2 ms";
    EXPECT_NE(r.invalid_reason.find("the sender stalled"), std::string::npos) << r.invalid_reason;
    EXPECT_NE(r.invalid_reason.find("not back to back"), std::string::npos) << r.invalid_reason;
    unsigned bursts = 0;
    for (const auto& t : r.trials)
        if (t.plan.count) {
            ++bursts;
            EXPECT_EQ(t.invalid_kind, procedures::InvalidKind::stalled) << t.invalid_reason;
            EXPECT_GT(t.longest_stall_s, 0.002);
            EXPECT_EQ(t.plan.load_pps, 100e3) << "not lowered";
        }
    EXPECT_EQ(bursts, 1 + procedures::kInvalidRetries) << "the burst, then its repeats";
    EXPECT_TRUE(r.back_to_back.empty());
}

TEST(Procedures, AnInvalidTrialIsNeverTheDevicesLoss) {
    using procedures::InvalidKind;
    result::TrialResult r;
    r.tx.packets = 1000;
    r.rx.unique = 900;
    r.rate.offered_pps = 1000;
    procedures::TrialPlan p{64, 1000, 1, std::nullopt, ""};
    EXPECT_TRUE(procedures::judge_trial(p, r, 0).valid());
    auto j = procedures::judge_trial(p, r, 100);
    EXPECT_EQ(j.kind, InvalidKind::host_rx);
    EXPECT_TRUE(j.instrument_limited());
    EXPECT_NE(j.invalid_reason.find("instrument's own receive path dropped 100"), std::string::npos);
    r.rate.offered_pps = 998;
    r.rate.skipped = 2;
    j = procedures::judge_trial(p, r, 0);
    EXPECT_EQ(j.kind, InvalidKind::generator);
    EXPECT_TRUE(j.instrument_limited()) << "a load the generator cannot hold: the searches lower their maximum";
    EXPECT_NE(j.invalid_reason.find("more than 0.1 % off: it gave up 2 departure slots"), std::string::npos)
        << j.invalid_reason;
    r.rate.offered_pps = 1000;
    r.rate.stretch_pct = 1.5;  // late frames made up for within the catch-up window: still the exact load
    r.rate.stalls = 3;
    EXPECT_TRUE(procedures::judge_trial(p, r, 0).valid());
    p.max_stall_s = 0.002;  // a burst: a hole longer than 2 ms breaks it
    r.rate.longest_stall_s = 0.0015;
    EXPECT_TRUE(procedures::judge_trial(p, r, 0).valid());
    r.rate.longest_stall_s = 0.004;
    j = procedures::judge_trial(p, r, 0);
    EXPECT_EQ(j.kind, InvalidKind::stalled);
    EXPECT_FALSE(j.instrument_limited()) << "a lower load would not close the hole";
    EXPECT_NE(j.invalid_reason.find("the sender stalled 4.000 ms"), std::string::npos) << j.invalid_reason;
    r.rate.longest_stall_s = 0;
    r.violations = {"RX exceeded TX"};
    j = procedures::judge_trial(p, r, 0);
    EXPECT_EQ(j.invalid_reason, "RX exceeded TX");
    EXPECT_FALSE(j.instrument_limited());
}

TEST(Checks, EveryThresholdIsJudgedAndAnUnmeasuredOneFails) {
    result::TrialResult r;
    r.trial.frame_size = 64;
    r.tx.packets = 1000;
    r.rx.unique = 990;
    r.lost = 10;
    r.tx_seconds = 1;
    spec::Thresholds th;
    th.max_loss_pct = 1;
    th.min_throughput = spec::parse_rate("1kpps", "t");
    th.max_latency_p99_s = 1e-3;
    const auto c = result::trial_checks(th, r, 0, "64B");
    ASSERT_EQ(c.size(), 3u);
    EXPECT_TRUE(c[0].pass) << "1 % lost, 1 % allowed";
    EXPECT_FALSE(c[1].pass) << "990 pps received, 1 kpps asked";
    EXPECT_FALSE(c[2].pass) << "no latency was measured: never a silent pass";
    EXPECT_NE(c[2].measured_text.find("not measured"), std::string::npos);
    EXPECT_EQ(result::first_failure(c).rfind("received rate 64B: 990 pps", 0), 0u) << result::first_failure(c);
}

TEST(Junit, OneTestcasePerCheckFailuresCarryTheMeasuredValue) {
    report::JunitSuite s;
    s.name = "a <profile> & more";
    s.classname = "linerate.sweep";
    s.checks = {{"loss 64B", "max-loss", true, 0, 0, "%", "0 %", "0 %"},
                {"latency p99 64B", "max-latency-p99", false, 2e-3, 1e-3, "s", "2.000 ms", "1.000 ms"}};
    s.invalid = true;
    s.invalid_reason = "a trial's \"rate\" was off";
    const auto x = report::junit_xml(s);
    EXPECT_NE(x.find("<testsuites name=\"linerate\" tests=\"3\" failures=\"1\" errors=\"1\""), std::string::npos) << x;
    EXPECT_NE(x.find("name=\"a &lt;profile&gt; &amp; more\""), std::string::npos) << x;
    EXPECT_NE(x.find("<failure type=\"threshold\" message=\"measured 2.000 ms &lt;= threshold 1.000 ms"),
              std::string::npos)
        << x;
    EXPECT_NE(x.find("threshold: &lt;= 1.000 ms"), std::string::npos) << "escaped in the text too: " << x;
    EXPECT_EQ(x.find("<="), std::string::npos) << x;
    EXPECT_NE(x.find("<error type=\"invalid\" message=\"a trial&apos;s &quot;rate&quot; was off\""), std::string::npos)
        << x;
}
