// The throughput searches: RFC 9971's own worked example for load classification and
// conditional throughput, then MLRsearch and the RFC 2544 binary search on simulated devices.
#include <gtest/gtest.h>

#include <functional>
#include <vector>

#include "procedures/search.h"
#include "sim_device.h"

using namespace lr::procedures;

namespace {

// The four goals of RFC 9971 appendix C.1.
const Goal kRfc2544{"RFC2544", 0, 0, 60, 60, 0.005, 1};
const Goal kTst009{"TST009", 0, 0.5, 60, 120, 0.005, 1};
const Goal k1sFinal{"1s final", 0.005, 0.5, 1, 120, 0.005, 1};
const Goal k20Exceed{"20% exceed", 0.005, 0.2, 60, 60, 0.005, 1};

std::vector<TrialRecord> trials(int n, double seconds, double loss) {
    std::vector<TrialRecord> v(n);
    for (auto& t : v) {
        t.load = 1e6;
        t.duration_s = seconds;
        t.outcome.loss_ratio = loss;
        t.outcome.effective_s = seconds;
    }
    return v;
}

std::vector<const TrialRecord*> ptrs(const std::vector<TrialRecord>& v) {
    std::vector<const TrialRecord*> p;
    for (const auto& t : v) p.push_back(&t);
    return p;
}

std::vector<TrialRecord> concat(std::initializer_list<std::vector<TrialRecord>> parts) {
    std::vector<TrialRecord> v;
    for (const auto& p : parts) v.insert(v.end(), p.begin(), p.end());
    return v;
}

}  // namespace

// RFC 9971 appendix C.3: the classification of the example load at the six points in time.
// For the "20% exceed" goal at points 5 and 6 the RFC's tables say Lower Bound, but their own
// rows give exceed ratios of 42.857 % and 27.273 %, above the goal's 20 %: its normative code
// (appendix A), which this implements, and FD.io CSIT's classify that load as an Upper Bound.
TEST(LoadClassification, Rfc9971Example) {
    using C = LoadClass;
    struct Point {
        std::vector<TrialRecord> trials;
        C rfc2544, tst009, one_s, exceed20;
    };
    const std::vector<Point> points = {
        {trials(59, 1, 0), C::undecided, C::undecided, C::undecided, C::undecided},
        {concat({trials(59, 1, 0), trials(1, 1, 0.01)}), C::upper, C::undecided, C::undecided, C::undecided},
        {concat({trials(59, 1, 0), trials(60, 1, 0.01)}), C::upper, C::undecided, C::undecided, C::upper},
        {concat({trials(60, 1, 0), trials(60, 1, 0.01)}), C::upper, C::undecided, C::lower, C::upper},
        {concat({trials(60, 1, 0), trials(60, 1, 0.01), trials(1, 60, 0.001)}), C::upper, C::undecided, C::lower,
         C::upper},
        {concat({trials(60, 1, 0), trials(60, 1, 0.01), trials(1, 60, 0.001), trials(1, 60, 0)}), C::upper, C::lower,
         C::lower, C::upper},
    };
    for (size_t i = 0; i < points.size(); ++i) {
        const auto p = ptrs(points[i].trials);
        EXPECT_EQ(classify(kRfc2544, p), points[i].rfc2544) << "point " << i + 1;
        EXPECT_EQ(classify(kTst009, p), points[i].tst009) << "point " << i + 1;
        EXPECT_EQ(classify(k1sFinal, p), points[i].one_s) << "point " << i + 1;
        EXPECT_EQ(classify(k20Exceed, p), points[i].exceed20) << "point " << i + 1;
    }
}

// RFC 9971 appendix C.4: conditional throughput at point 6 for goals 2 to 4 (the load is 1 Mpps).
TEST(ConditionalThroughput, Rfc9971Example) {
    const auto all = concat({trials(60, 1, 0), trials(60, 1, 0.01), trials(1, 60, 0.001), trials(1, 60, 0)});
    const auto p = ptrs(all);
    EXPECT_DOUBLE_EQ(conditional_throughput(kTst009, 1e6, p), 1e6);
    EXPECT_DOUBLE_EQ(conditional_throughput(k1sFinal, 1e6, p), 1e6);
    EXPECT_NEAR(conditional_throughput(k20Exceed, 1e6, p), 999e3, 1e-6);
}

namespace {

SearchLimits limits(double max_load) {
    SearchLimits l;
    l.min_load = max_load / 1000;
    l.max_load = max_load;
    return l;
}

void expect_within_width(const GoalResult& r, double truth) {
    ASSERT_TRUE(r.regular) << r.goal.name << ": " << r.irregular_reason;
    ASSERT_TRUE(r.lower && r.upper);
    EXPECT_LE(*r.lower, truth * (1 + 1e-6)) << r.goal.name;
    EXPECT_GE(*r.upper, truth * (1 - 1e-6)) << r.goal.name;
    EXPECT_LE((*r.upper - *r.lower) / *r.upper, r.goal.width * (1 + 1e-9)) << r.goal.name;
}


// `dev` measured by a generator that holds every load, except that a trial at or below the
// highest load carried so far falls short whenever `stall()` says so (a stall beyond the
// catch-up window), counted in `missed`.
Measurer stalling_at_carried_loads(sim::Clean& dev, std::function<bool()> stall, unsigned& missed) {
    return [&dev, stall, &missed, held = 0.0](double load, double duration, const std::string&) mutable {
        TrialOutcome o;
        o.effective_s = duration;
        if (held > 0 && load <= held && stall()) {
            ++missed;
            o.valid = false;
            o.instrument_limited = true;
            o.offered_pps = load * 0.99;
            o.invalid_reason = "a stall longer than the catch-up window";
            return o;
        }
        held = std::max(held, load);
        o.loss_ratio = dev.loss(load);
        o.offered_pps = load;
        return o;
    };
}
}  // namespace

TEST(MlrSearch, ACleanDeviceIsFoundWithinTheWidthForEveryGoal) {
    sim::Clean dev{3.7e6};
    const auto r = mlr_search(preset_goals("csit"), limits(14.88e6), sim::measurer(dev));
    ASSERT_FALSE(r.ended_early) << r.end_reason;
    ASSERT_EQ(r.goals.size(), 2u);
    expect_within_width(r.goals[0], 3.7e6);               // NDR: no loss up to the capacity
    expect_within_width(r.goals[1], 3.7e6 / (1 - 0.005));  // PDR: loss 0.5 % at capacity / 0.995
    EXPECT_NEAR(*r.goals[0].conditional, *r.goals[0].lower, 1e-6) << "zero-loss lower bound";
    EXPECT_LT(r.trials.size(), 200u) << "within a trial budget";
    for (const auto& t : r.trials) EXPECT_FALSE(t.why.empty());
}

TEST(MlrSearch, ARisingLossCurveGivesEachGoalItsOwnLoad) {
    sim::Rising dev{2e6};
    std::vector<Goal> goals = {{"NDR", 0, 0, 5, 5, 0.005, 1}, {"1%", 0.01, 0, 5, 5, 0.005, 1}};
    const auto r = mlr_search(goals, limits(10e6), sim::measurer(dev));
    ASSERT_FALSE(r.ended_early) << r.end_reason;
    expect_within_width(r.goals[0], 2e6);
    expect_within_width(r.goals[1], 2.2e6);  // 0.1 * (load - knee) / knee = 1 %
}

TEST(MlrSearch, ANoisyDeviceIsToleratedByTheExceedRatioAndIsReproducible) {
    // In 20 % of its trials the device loses a little below capacity. With a 50 % exceed
    // ratio the search still finds the capacity; with none (RFC 2544) noise counts as loss.
    sim::Noisy dev(5e6, 0.2, 7);
    const auto r = mlr_search(preset_goals("csit"), limits(14.88e6), sim::measurer(dev));
    ASSERT_FALSE(r.ended_early) << r.end_reason;
    expect_within_width(r.goals[0], 5e6);
    sim::Noisy again(5e6, 0.2, 7);
    const auto r2 = mlr_search(preset_goals("csit"), limits(14.88e6), sim::measurer(again));
    ASSERT_EQ(r.trials.size(), r2.trials.size()) << "the same seed, the same search";
    for (size_t i = 0; i < r.trials.size(); ++i) EXPECT_DOUBLE_EQ(r.trials[i].load, r2.trials[i].load);
}

TEST(MlrSearch, ShortTrialsFirstAndFullLengthOnlyToConfirm) {
    sim::Clean dev{1e6};
    const auto r = mlr_search(preset_goals("rfc2544"), limits(10e6), sim::measurer(dev));
    expect_within_width(r.goals[0], 1e6);
    ASSERT_GT(r.trials.size(), 2u);
    EXPECT_DOUBLE_EQ(r.trials.front().duration_s, 1) << "the search starts with the initial duration";
    EXPECT_DOUBLE_EQ(r.trials.back().duration_s, 60) << "and decides with full-length trials";
    size_t full = 0;
    for (const auto& t : r.trials) full += t.duration_s >= 60;
    EXPECT_LE(full, 6u);
}

TEST(MlrSearch, IrregularEndsAreSaid) {
    sim::Clean fast{20e6};
    auto r = mlr_search(preset_goals("rfc2544"), limits(10e6), sim::measurer(fast));
    EXPECT_FALSE(r.goals[0].regular);
    EXPECT_DOUBLE_EQ(*r.goals[0].lower, 10e6);
    EXPECT_NE(r.goals[0].irregular_reason.find("maximum load is a lower bound"), std::string::npos);
    // Trials that keep failing for a reason a lower load would not cure (a link down) end the
    // search with the reason.
    Measurer broken = [](double, double d, const std::string&) {
        TrialOutcome o;
        o.valid = false;
        o.invalid_reason = "link lr0 down at 0.100 s for 0.500 s";
        o.effective_s = d;
        return o;
    };
    r = mlr_search(preset_goals("rfc2544"), limits(10e6), broken);
    EXPECT_TRUE(r.ended_early);
    EXPECT_NE(r.end_reason.find("invalid 3 times in a row: link lr0 down"), std::string::npos) << r.end_reason;
    EXPECT_EQ(r.trials.size(), 3u);
}

// The generator holds 120 kpps; --max-rate asked for 200 kpps. A load it cannot hold is tried
// twice, then the maximum drops below it, and the search answers: never "invalid 5 times".
TEST(MlrSearch, ALoadTheGeneratorCannotHoldLowersTheMaximumAndTheSearchStillAnswers) {
    sim::Clean dev{50e3};
    int flukes = 0;
    const auto r = mlr_search(preset_goals("csit"), limits(200e3), sim::limited_measurer(dev, 120e3, flukes));
    ASSERT_FALSE(r.ended_early) << r.end_reason;
    expect_within_width(r.goals[0], 50e3);
    EXPECT_FALSE(r.goals[0].at_least);
    EXPECT_LE(r.max_load, 120e3 * 0.97 * kLimitedBackoff + 1);
    ASSERT_EQ(r.notes.size(), 1u);
    EXPECT_NE(r.notes[0].find("could not carry 200000 pps in 2 trials"), std::string::npos) << r.notes[0];
    EXPECT_EQ(r.trials[0].load, r.trials[1].load) << "tried twice before the maximum drops";
}

TEST(MlrSearch, ADeviceFasterThanTheGeneratorIsAtLeastTheGeneratorsCeiling) {
    sim::Clean dev{1e6};
    int flukes = 0;
    auto lim = limits(200e3);
    auto r = mlr_search(preset_goals("csit"), lim, sim::limited_measurer(dev, 120e3, flukes));
    ASSERT_FALSE(r.ended_early) << r.end_reason;
    for (const auto& g : r.goals) {
        EXPECT_TRUE(g.at_least) << g.goal.name;
        EXPECT_FALSE(g.regular);
        ASSERT_TRUE(g.lower);
        EXPECT_DOUBLE_EQ(*g.lower, r.max_load);
        EXPECT_NE(g.irregular_reason.find("generator-limited"), std::string::npos) << g.irregular_reason;
    }
    // A maximum that is the generator's measured ceiling says so from the start.
    lim.max_load = 100e3;
    lim.max_is_generator = true;
    r = mlr_search(preset_goals("csit"), lim, sim::measurer(dev));
    EXPECT_TRUE(r.goals[0].at_least);
    EXPECT_TRUE(r.notes.empty());
}

TEST(MlrSearch, OneStallBeyondTheCatchUpWindowDoesNotLowerTheMaximum) {
    sim::Clean dev{50e3};
    int flukes = 1;  // the first trial falls short once, then the generator holds
    const auto r = mlr_search(preset_goals("csit"), limits(100e3), sim::limited_measurer(dev, 120e3, flukes));
    ASSERT_FALSE(r.ended_early) << r.end_reason;
    EXPECT_TRUE(r.notes.empty());
    EXPECT_DOUBLE_EQ(r.max_load, 100e3);
    expect_within_width(r.goals[0], 50e3);
}

TEST(MlrSearch, MissesAtALoadTheInstrumentCarriedBeforeAreStallsNotItsLimit) {
    // After the first valid trial, the next trial at or below the highest load carried so far
    // falls short three times in a row (a host busy for a while), then holds again.
    sim::Clean dev{50e3};
    int misses = 3;
    unsigned missed = 0;
    const auto m = stalling_at_carried_loads(dev, [&] { return misses > 0 && misses--; }, missed);
    const auto r = mlr_search(preset_goals("csit"), limits(100e3), m);
    ASSERT_FALSE(r.ended_early) << r.end_reason;
    EXPECT_EQ(misses, 0);
    EXPECT_TRUE(r.notes.empty()) << r.notes.front();
    EXPECT_DOUBLE_EQ(r.max_load, 100e3);
    expect_within_width(r.goals[0], 50e3);
}

TEST(MlrSearch, SevenMissesInARowAtACarriedLoadAreStillStalls) {
    // Half the trials at loads already carried fall short, in runs of up to seven (a sender
    // slowed by the device it shares its cores with): the maximum stays, the answer is regular.
    sim::Clean dev{50e3};
    unsigned trial = 0, missed = 0;
    const auto m = stalling_at_carried_loads(dev, [&] { return trial++ % 8 != 7; }, missed);  // seven, then one valid
    const auto r = mlr_search(preset_goals("csit"), limits(100e3), m);
    ASSERT_FALSE(r.ended_early) << r.end_reason;
    EXPECT_GT(missed, 7u);
    EXPECT_TRUE(r.notes.empty()) << r.notes.front();
    EXPECT_DOUBLE_EQ(r.max_load, 100e3);
    EXPECT_FALSE(r.goals[0].at_least);
    expect_within_width(r.goals[0], 50e3);
}

TEST(BinarySearch, ALoadTheGeneratorCannotHoldLowersTheMaximum) {
    sim::Clean dev{50e3}, fast{1e6};
    int flukes = 0;
    auto r = binary_search(preset_goals("rfc2544"), limits(200e3), sim::limited_measurer(dev, 120e3, flukes));
    ASSERT_FALSE(r.ended_early) << r.end_reason;
    expect_within_width(r.goals[0], 50e3);
    EXPECT_EQ(r.notes.size(), 1u);
    r = binary_search(preset_goals("rfc2544"), limits(200e3), sim::limited_measurer(fast, 120e3, flukes));
    ASSERT_FALSE(r.ended_early) << r.end_reason;
    EXPECT_TRUE(r.goals[0].at_least);
    EXPECT_DOUBLE_EQ(*r.goals[0].lower, r.max_load);
}

TEST(BinarySearch, FindsTheSameAnswerWithFullLengthTrialsOnly) {
    sim::Clean dev{3.7e6};
    const auto r = binary_search(preset_goals("rfc2544"), limits(14.88e6), sim::measurer(dev));
    expect_within_width(r.goals[0], 3.7e6);
    for (const auto& t : r.trials) EXPECT_DOUBLE_EQ(t.duration_s, 60);
}

TEST(Searches, MlrSearchNeedsLessTrialTimeThanBinarySearchForTheSameAnswer) {
    sim::Clean a{3.7e6}, b{3.7e6};
    const auto goals = preset_goals("rfc2544");
    const auto mlr = mlr_search(goals, limits(14.88e6), sim::measurer(a));
    const auto bin = binary_search(goals, limits(14.88e6), sim::measurer(b));
    expect_within_width(mlr.goals[0], 3.7e6);
    expect_within_width(bin.goals[0], 3.7e6);
    EXPECT_LT(mlr.trial_seconds, bin.trial_seconds);
}
