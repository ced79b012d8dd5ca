// Streams started, paused, resumed and stopped while a trial runs (worker::FlowGates): the
// scheduler alone, and whole controlled trials on the in-memory backend (engine::TrialControl).
#include <gtest/gtest.h>

#include <map>

#include "backend/loop/loop_backend.h"
#include "engine/session.h"
#include "result/sink.h"
#include "scheduler_program.h"
#include "spec/options.h"

using namespace lr;
using test_support::due_frames;
using worker::GateState;

namespace {

constexpr uint64_t kMs = 1'000'000;

// Frames each share sends from `from` to `to` (ns), asked every 0.1 ms.
std::map<uint32_t, int> sent_between(worker::StreamScheduler& s, uint64_t from, uint64_t to) {
    std::map<uint32_t, int> n;
    for (uint64_t t = from; t < to; t += kMs / 10)
        for (const auto& f : due_frames(s, t, 64)) ++n[f.share];
    return n;
}

}  // namespace

TEST(FlowGates, StreamsSendOnlyWhileTheirGateIsOpenAndResumeWithoutCatchingUp) {
    test_support::SchedulerProgram g;
    g.add(0).pacing.pps = 1000;  // one frame a millisecond
    worker::FlowGates gates(1);
    worker::StreamScheduler s(g.p, 64, &gates);
    s.start(0);
    EXPECT_TRUE(sent_between(s, 0, 10 * kMs).empty()) << "held: not started";
    EXPECT_FALSE(s.done()) << "under gates the controller ends the trial";
    gates.set(0, 1, GateState::open);
    gates.publish();
    EXPECT_EQ(sent_between(s, 10 * kMs, 20 * kMs)[0], 10);
    gates.set(0, 1, GateState::paused);
    gates.publish();
    EXPECT_TRUE(sent_between(s, 20 * kMs, 50 * kMs).empty()) << "paused";
    gates.set(0, 1, GateState::open);
    gates.publish();
    EXPECT_EQ(sent_between(s, 50 * kMs, 60 * kMs)[0], 10) << "resumed at its rate: the 30 ms paused are not made up";
    gates.set(0, 1, GateState::stopped);
    gates.publish();
    EXPECT_TRUE(sent_between(s, 60 * kMs, 70 * kMs).empty()) << "stopped";
    gates.set(0, 2, GateState::open);  // a new start
    gates.publish();
    EXPECT_EQ(sent_between(s, 70 * kMs, 80 * kMs)[0], 10);
    EXPECT_EQ(s.planned(0), 30u) << "its counts go on from start to start";
}

TEST(FlowGates, ACountedStreamEndsEachStartAndSaysWhichOneItFinished) {
    test_support::SchedulerProgram g;
    auto& a = g.add(0);
    a.weight = 1;
    a.count = 10;
    worker::FlowGates gates(1);
    worker::StreamScheduler s(g.p, 64, &gates);
    s.start(0);
    const auto finish = [&] {
        s.for_each_newly_done([&](uint32_t share) { gates.share_done(g.p.shares[share].stream, s.start_number(share)); });
    };
    gates.set(0, 1, GateState::open);
    gates.publish();
    EXPECT_EQ(due_frames(s, 0, 64).size(), 10u) << "its count, then nothing";
    EXPECT_TRUE(due_frames(s, kMs, 64).empty());
    finish();
    EXPECT_EQ(gates.shares_done(0, 1), 1u);
    EXPECT_EQ(gates.shares_done(0, 2), 0u);
    gates.set(0, 2, GateState::open);  // started again: its whole count again
    gates.publish();
    EXPECT_EQ(due_frames(s, 2 * kMs, 64).size(), 10u);
    finish();
    EXPECT_EQ(gates.shares_done(0, 2), 1u);
    EXPECT_EQ(gates.shares_done(0, 1), 0u) << "only the latest start is reported";
    EXPECT_EQ(s.planned(0), 20u);
}

TEST(FlowGates, APauseDuringTheStartDelayKeepsTheDelayThatWasLeft) {
    test_support::SchedulerProgram g;
    auto& a = g.add(0);
    a.weight = 1;
    a.count = 5;
    a.delay_ns = 5 * kMs;
    auto& b = g.add(1);
    b.weight = 1;
    b.count = 4;
    b.burst_frames = 2;
    b.burst_gap_ns = 10 * kMs;
    worker::FlowGates gates(2);
    worker::StreamScheduler s(g.p, 64, &gates);
    s.start(0);
    gates.set(0, 1, GateState::open);
    gates.set(1, 1, GateState::open);
    gates.publish();
    EXPECT_EQ(due_frames(s, 0, 64).size(), 2u) << "b's first burst; a waits 5 ms";
    gates.set(0, 1, GateState::paused);
    gates.set(1, 1, GateState::paused);
    gates.publish();
    EXPECT_TRUE(sent_between(s, 2 * kMs, 40 * kMs).empty());
    gates.set(0, 1, GateState::open);  // resumed at 40 ms: a had 3 ms of its delay left, b 8 ms of its gap
    gates.set(1, 1, GateState::open);
    gates.publish();
    EXPECT_TRUE(due_frames(s, 40 * kMs, 64).empty());
    auto n = sent_between(s, 40 * kMs + 1, 43 * kMs);
    EXPECT_EQ(n[0], 0);
    EXPECT_EQ(due_frames(s, 43 * kMs, 64).size(), 5u) << "a, 3 ms after the resume";
    n = sent_between(s, 43 * kMs + 1, 48 * kMs);
    EXPECT_EQ(n[1], 0) << "b still in its gap";
    EXPECT_EQ(due_frames(s, 48 * kMs, 64).size(), 2u) << "b's second burst, 8 ms after the resume";
}

namespace {

// Steers a controlled trial from its live views: stream 0 (continuous) from the start, stream
// 1 (a count) at 100 ms; once stream 1 finished, stream 0 stops and the TX phase ends.
struct Script final : result::Sink {
    engine::TrialControl& c;
    std::vector<std::vector<result::StreamLive>> seen;
    bool second = false;
    explicit Script(engine::TrialControl& control) : c(control) {}
    void live(const std::vector<stats::QueueId>&, const stats::Snapshot& s,
              const std::vector<result::StreamLive>& v) override {
        seen.push_back(v);
        if (!second && s.t >= 0.1) {
            c.gates->set(1, 1, GateState::open);
            c.gates->publish();
            second = true;
        }
        if (second && c.gates->shares_done(1, 1) == 1 && !c.end_tx) {
            c.gates->set(0, 1, GateState::stopped);
            c.gates->publish();
            c.end_tx = true;
        }
    }
};

}  // namespace

TEST(ControlledTrial, StreamsStartAndStopWhenToldAndEveryFrameIsCounted) {
    auto s = spec::build_run_spec({{"tx", {"a"}},
                                   {"rx", {"b"}},
                                   {"stream", {"name=steady,rate=2kpps,size=100", "name=once,count=500,rate=5kpps,size=200"}}});
    s.backend = spec::BackendKind::loop;
    s.drain_s = 0.5;
    engine::Session session(loop::make_loop_backend(), s);
    engine::TrialControl control(2);
    control.live_period_s = 0.02;
    control.gates->set(0, 1, GateState::open);  // before the trial starts
    control.gates->publish();
    Script script(control);
    const auto r = session.run_controlled_trial(control, script);
    EXPECT_EQ(r.verdict, result::Verdict::pass) << r.verdict_reason;
    ASSERT_EQ(r.streams.size(), 2u);
    const auto& steady = r.streams[0];
    const auto& once = r.streams[1];
    EXPECT_EQ(once.sent, 500u);
    EXPECT_EQ(once.received, 500u);
    EXPECT_EQ(once.sent_bytes, 500u * 200);
    EXPECT_EQ(once.rx.bytes, 500u * 200);
    EXPECT_GT(steady.sent, 200u) << "2 kpps for the 100 ms before the second stream, and its 100 ms";
    EXPECT_EQ(steady.received, steady.sent);
    EXPECT_EQ(steady.lost, 0u);
    EXPECT_EQ(steady.rx.bytes, steady.sent * 100);
    EXPECT_GT(once.rx.first_ns, steady.rx.first_ns) << "the second stream started later";
    EXPECT_GE(once.rx.last_ns, once.rx.first_ns);
    // The flows' latency totals: one per frame with a timestamp.
    uint64_t timed = 0;
    for (const auto& f : r.flows) {
        timed += f.rx.lat_n;
        if (f.rx.lat_n) {
            EXPECT_LE(f.rx.lat_min, f.rx.lat_max);
            EXPECT_GE(f.rx.lat_sum, f.rx.lat_n * f.rx.lat_min);
        }
    }
    EXPECT_EQ(timed, steady.received + once.received);
    // The live views came every 20 ms, and never counted more than was finally sent.
    ASSERT_GE(script.seen.size(), 5u);
    bool once_seen_sending = false, steady_seen_arriving = false;
    for (const auto& v : script.seen) {
        steady_seen_arriving |= v[0].received > 0 && v[0].rx.bytes == v[0].received * 100;
        ASSERT_EQ(v.size(), 2u);
        EXPECT_LE(v[1].sent, 500u);
        EXPECT_LE(v[1].received, v[1].sent);
        EXPECT_EQ(v[1].sent_bytes, v[1].sent * 200);
        once_seen_sending |= v[1].sent > 0 && v[1].sent < 500;
    }
    EXPECT_TRUE(once_seen_sending) << "5 kpps for 100 ms: the views saw it on its way";
    EXPECT_TRUE(steady_seen_arriving) << "the receivers' counts are live too";
}
