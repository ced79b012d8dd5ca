// Link events on the in-memory backend: a port whose link goes down mid-trial is recorded
// with its times and what happened meanwhile, and fails the trial unless tolerated.
#include <gtest/gtest.h>

#include "backend/loop/loop_backend.h"
#include "engine/session.h"
#include "report/json_report.h"
#include "result/checks.h"
#include "result/sink.h"
#include "spec/options.h"

using namespace lr;

namespace {

struct NoOutput final : result::Sink {};

spec::RunSpec outage_spec(const char* policy) {
    spec::OptionValues o{{"tx", {"a"}}, {"rx", {"b"}}, {"duration", {"1s"}}, {"rate", {"100kpps"}}};
    if (policy) o["link-outage"] = {policy};
    auto s = spec::build_run_spec(o);
    s.backend = spec::BackendKind::loop;
    s.interval_s = 0.1;
    return s;
}

result::TrialResult run_with_outage(const spec::RunSpec& spec) {
    loop::LoopFaults f;  // the devices take nothing, and report no link, 300-600 ms in
    f.outage_from_ns = 300'000'000;
    f.outage_to_ns = 600'000'000;
    f.link_down_in_outage = true;
    engine::Session session(loop::make_loop_backend(f), spec);
    NoOutput sink;
    return session.run_trial(spec.trial(), sink);
}

}  // namespace

TEST(LinkEvents, AnOutageIsRecordedWithItsTimesAndFailsTheTrialByDefault) {
    const auto spec = outage_spec(nullptr);
    EXPECT_EQ(spec.thresholds.link_outage, spec::LinkOutage::fail);
    const auto r = run_with_outage(spec);
    // Both ports went down and came back: two events each, down before up.
    ASSERT_EQ(r.link_events.size(), 4u);
    for (const auto& port : {"a", "b"}) {
        std::vector<result::LinkEvent> ev;
        for (const auto& e : r.link_events)
            if (e.port == port) ev.push_back(e);
        ASSERT_EQ(ev.size(), 2u) << port;
        EXPECT_FALSE(ev[0].up);
        EXPECT_TRUE(ev[1].up);
        EXPECT_LT(ev[0].t, ev[1].t);
    }
    ASSERT_EQ(r.outages.size(), 2u);
    for (const auto& o : r.outages) {
        EXPECT_GE(o.to, o.from);
        EXPECT_DOUBLE_EQ(o.seconds, o.to - o.from);
        // The sending port's device took nothing while its link was down: what is counted in
        // the outage is what the edges' sampling (every 10 ms) caught, at most a few ms of the
        // 100 kpps and the catch-up burst when the link came back (the 20 ms window: 2000
        // frames), never the 30000 frames of 300 ms.
        if (o.port == "a") {
            EXPECT_LT(o.handed, 3000u + 2000u);
        }
    }
    EXPECT_EQ(r.verdict, result::Verdict::fail);
    EXPECT_NE(r.verdict_reason.find("link a down at"), std::string::npos) << r.verdict_reason;
    EXPECT_NE(r.verdict_reason.find("--link-outage fail"), std::string::npos) << r.verdict_reason;
    bool noted = false;
    for (const auto& n : r.notes) noted |= n.rfind("link b down at", 0) == 0;
    EXPECT_TRUE(noted) << "every outage is a note";
    // In the JSON report, as events and outages.
    const auto j = report::make_report(spec, {}, {r});
    ASSERT_EQ(j["link_events"].size(), 4u);
    EXPECT_EQ(j["link_events"][0]["link"], "down");
    ASSERT_EQ(j["link_outages"].size(), 2u);
    EXPECT_TRUE(j["link_outages"][0]["to"].is_number());
}

TEST(LinkEvents, ToleratedOutagesAreReportedButJudgedByTheThresholdsOnly) {
    const auto r = run_with_outage(outage_spec("tolerate"));
    EXPECT_EQ(r.outages.size(), 2u);
    EXPECT_EQ(r.verdict, result::Verdict::pass) << r.verdict_reason;
    EXPECT_FALSE(r.notes.empty());
}

TEST(LinkEvents, ALinkThatStaysUpGivesNoEventAndNoCheck) {
    const auto spec = outage_spec(nullptr);
    engine::Session session(loop::make_loop_backend(), spec);
    NoOutput sink;
    const auto r = session.run_trial(spec.trial(), sink);
    EXPECT_TRUE(r.link_events.empty());
    EXPECT_TRUE(r.outages.empty());
    EXPECT_EQ(r.verdict, result::Verdict::pass) << r.verdict_reason;
    EXPECT_TRUE(result::trial_checks(spec.thresholds, r, 0, "").empty());
}

TEST(LinkEvents, AnOutageStillInProgressAtTheEndIsCountedToTheEnd) {
    auto spec = outage_spec(nullptr);
    loop::LoopFaults f;
    f.outage_from_ns = 500'000'000;
    f.outage_to_ns = 60'000'000'000;
    f.link_down_in_outage = true;
    spec.stall_s = 30;  // the watchdog would end it first otherwise
    engine::Session session(loop::make_loop_backend(f), spec);
    NoOutput sink;
    const auto r = session.run_trial(spec.trial(), sink);
    ASSERT_EQ(r.outages.size(), 2u);
    for (const auto& o : r.outages) {
        EXPECT_LT(o.to, 0) << "still down";
        EXPECT_GT(o.seconds, 0);
    }
    EXPECT_EQ(r.verdict, result::Verdict::fail);
    EXPECT_NE(r.verdict_reason.find("to the end of the trial"), std::string::npos) << r.verdict_reason;
}
