// The session, the trial controller and the queue engines on the in-memory backend: exact
// counts over many trials, loss and duplicates on the wire, the drain, the watchdog, failed
// workers, request/response, interruption, interval series, and frames that change between
// trials.
#include <gtest/gtest.h>

#include <chrono>
#include <dirent.h>
#include <thread>

#include "backend/loop/loop_backend.h"
#include "engine/interrupt.h"
#include "engine/session.h"
#include "result/sink.h"
#include "spec/options.h"
#include "util/error.h"

using namespace lr;

namespace {

spec::RunSpec make_spec(spec::OptionValues o) {
    auto s = spec::build_run_spec(o);
    s.backend = spec::BackendKind::loop;
    s.interval_s = 0.05;
    s.settle_s = 0;  // the in-memory wire needs no rest between trials (the rest itself: TrialsAreSettleApart)
    return s;
}

size_t count_entries(const char* dir) {
    size_t n = 0;
    if (DIR* d = opendir(dir)) {
        while (readdir(d)) ++n;
        closedir(d);
    }
    return n;
}

// The threads this process has once the trial's workers are gone. pthread_join returns when the
// kernel wakes the joiner, as the worker releases its memory, which is before its task is reaped:
// for a moment a joined worker is still listed in /proc/self/task. Waits, at most a second, for
// the count to come down to `expected`, and returns what it is then.
size_t threads_once_exited(size_t expected) {
    size_t n = count_entries("/proc/self/task");
    for (int i = 0; i < 100 && n > expected; ++i) {
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
        n = count_entries("/proc/self/task");
    }
    return n;
}

struct Rows final : result::Sink {
    std::vector<stats::IntervalRow> rows;
    unsigned started = 0, finished = 0;
    void trial_started(const result::TrialStart&) override { ++started; }
    void interval(const stats::IntervalRow& r) override { rows.push_back(r); }
    void trial_finished(const result::TrialResult&) override { ++finished; }
};

// Raises the interrupt flag (what SIGINT does) at the trial's first interval: the trial is running.
struct InterruptAtFirstInterval final : result::Sink {
    unsigned rows = 0;
    void interval(const stats::IntervalRow&) override {
        if (rows++ == 0) engine::request_interrupt();
    }
};

std::string all_violations(const result::TrialResult& r) {
    std::string s;
    for (const auto& v : r.violations) s += v + "; ";
    return s;
}

}  // namespace

TEST(Session, HundredTrialsCountExactlyAndLeaveNothingBehind) {
    const auto spec = make_spec({{"tx", {"a,queues=2"}}, {"rx", {"b,queues=2"}}, {"count", {"20000"}}});
    loop::WireCounts wire;
    engine::Session session(loop::make_loop_backend({}, &wire), spec);
    Rows sink;
    const size_t fds = count_entries("/proc/self/fd"), threads = count_entries("/proc/self/task");
    for (unsigned i = 0; i < 100; ++i) {
        const auto r = session.run_trial(spec.trial(), sink, 100);
        ASSERT_EQ(r.verdict, result::Verdict::pass) << "trial " << i << ": " << r.verdict_reason;
        EXPECT_EQ(r.index, i);
        EXPECT_EQ(r.tx.packets, 20000u) << i;
        EXPECT_EQ(r.rx.unique, 20000u) << i;
        EXPECT_EQ(r.rx.packets, 20000u) << i;
        EXPECT_EQ(r.lost, 0u) << i;
        EXPECT_EQ(r.flushed_before, 0u) << i;
        ASSERT_EQ(r.flows.size(), 2u);
        for (const auto& st : r.flows) {
            EXPECT_EQ(st.sent, 10000u) << i;
            EXPECT_EQ(st.received, 10000u) << i;
            EXPECT_EQ(st.lost, 0u) << i;
        }
        ASSERT_EQ(r.streams.size(), 1u) << "the one stream the options describe, its two flows added up";
        EXPECT_EQ(r.streams[0].sent, 20000u) << i;
        EXPECT_EQ(r.streams[0].received, 20000u) << i;
        EXPECT_EQ(r.ports[0].opackets, 20000u) << "port counters are per trial";
        EXPECT_EQ(r.ports[1].ipackets, 20000u);
        EXPECT_EQ(threads_once_exited(threads), threads) << "worker threads outlived trial " << i;
        EXPECT_EQ(count_entries("/proc/self/fd"), fds) << "descriptors leaked in trial " << i;
    }
    EXPECT_EQ(wire.delivered, 100u * 20000u);
    EXPECT_EQ(sink.started, 100u);
    EXPECT_EQ(sink.finished, 100u);
    EXPECT_EQ(session.trials_run(), 100u);
}

TEST(Session, WireLossIsExactAndTheThresholdJudgesIt) {
    auto spec = make_spec({{"tx", {"a"}}, {"rx", {"b"}}, {"count", {"10000"}}, {"max-loss", {"5"}}});
    spec.drain_s = 0.3;
    loop::LoopFaults f;
    f.drop_every = 10;
    engine::Session session(loop::make_loop_backend(f), spec);
    Rows sink;
    auto r = session.run_trial(spec.trial(), sink);
    EXPECT_EQ(r.tx.packets, 10000u);
    EXPECT_EQ(r.rx.unique, 9000u);
    EXPECT_EQ(r.lost, 1000u);
    ASSERT_EQ(r.flows.size(), 1u);
    EXPECT_EQ(r.flows[0].lost, 1000u);
    ASSERT_EQ(r.streams.size(), 1u);
    EXPECT_EQ(r.streams[0].lost, 1000u);
    EXPECT_EQ(r.verdict, result::Verdict::fail) << "10 % lost against --max-loss 5";
    EXPECT_NE(r.verdict_reason.find("loss: 10.000000 % (1000 of 10000) (threshold --max-loss 5 %)"), std::string::npos) << r.verdict_reason;
    auto lenient = spec;
    lenient.thresholds.max_loss_pct = 10;
    engine::Session s2(loop::make_loop_backend(f), lenient);
    r = s2.run_trial(lenient.trial(), sink);
    EXPECT_EQ(r.lost, 1000u);
    EXPECT_EQ(r.verdict, result::Verdict::pass);
}

TEST(Session, DuplicatesAreCountedApartAndNeverHideLoss) {
    const auto spec = make_spec({{"tx", {"a"}}, {"rx", {"b"}}, {"count", {"10000"}}});
    loop::LoopFaults f;
    f.dup_every = 100;
    loop::WireCounts wire;
    engine::Session session(loop::make_loop_backend(f, &wire), spec);
    Rows sink;
    const auto r = session.run_trial(spec.trial(), sink);
    EXPECT_EQ(r.rx.packets, 10100u);
    EXPECT_EQ(r.rx.unique, 10000u);
    EXPECT_EQ(r.rx.dup, 100u);
    EXPECT_EQ(r.lost, 0u);
    EXPECT_EQ(wire.duplicated, 100u);
    EXPECT_EQ(r.verdict, result::Verdict::pass) << r.verdict_reason;
}

TEST(Session, TheDrainWaitsForFramesStillOnTheWire) {
    auto spec = make_spec({{"tx", {"a"}}, {"rx", {"b"}}, {"count", {"1000"}}, {"rate", {"100k"}}});
    spec.drain_s = 2;
    loop::LoopFaults f;
    f.delay_ns = 300'000'000;  // longer than the quiet period that ends an idle drain
    engine::Session session(loop::make_loop_backend(f), spec);
    Rows sink;
    const auto r = session.run_trial(spec.trial(), sink);
    EXPECT_EQ(r.rx.unique, 1000u);
    EXPECT_EQ(r.lost, 0u);
    EXPECT_GE(r.drain_seconds, 0.2);
    EXPECT_EQ(r.verdict, result::Verdict::pass) << r.verdict_reason;
}

TEST(Session, AStuckDeviceMakesTheTrialInvalid) {
    auto spec = make_spec({{"tx", {"a"}}, {"rx", {"b"}}, {"count", {"1000"}}});
    spec.stall_s = 0.3;
    loop::LoopFaults f;
    f.stall_tx = true;
    engine::Session session(loop::make_loop_backend(f), spec);
    Rows sink;
    const auto r = session.run_trial(spec.trial(), sink);
    EXPECT_EQ(r.verdict, result::Verdict::invalid);
    EXPECT_NE(all_violations(r).find("the device accepted no packet"), std::string::npos) << all_violations(r);
    EXPECT_EQ(r.tx.packets, 0u);
    EXPECT_EQ(r.tx.unsent, 64u) << "frames built but never taken are unsent, not sent";
}

TEST(Session, AHungWorkerMakesTheTrialInvalid) {
    auto spec = make_spec({{"tx", {"a"}}, {"rx", {"b"}}, {"duration", {"5s"}}, {"rate", {"1k"}}});
    spec.stall_s = 0.3;
    loop::LoopFaults f;
    f.freeze_rx = true;
    engine::Session session(loop::make_loop_backend(f), spec);
    Rows sink;
    const auto r = session.run_trial(spec.trial(), sink);
    EXPECT_EQ(r.verdict, result::Verdict::invalid);
    EXPECT_NE(all_violations(r).find("rx b queue 0 made no progress"), std::string::npos) << all_violations(r);
    // How soon the watchdog ended the 5 s trial is timing_session.cpp's.
}

TEST(Session, AFailedWorkerMakesTheTrialInvalid) {
    const auto spec = make_spec({{"tx", {"a"}}, {"rx", {"b"}}, {"count", {"1000"}}});
    loop::LoopFaults f;
    f.fail_workers = true;
    engine::Session session(loop::make_loop_backend(f), spec);
    Rows sink;
    const auto r = session.run_trial(spec.trial(), sink);
    EXPECT_EQ(r.verdict, result::Verdict::invalid);
    EXPECT_NE(all_violations(r).find("worker tx a queue 0 failed"), std::string::npos) << all_violations(r);
}

TEST(Session, RequestResponseAnswersEveryRequest) {
    const auto spec =
        make_spec({{"tx", {"a"}}, {"rx", {"a"}}, {"count", {"20000"}}, {"outstanding", {"8"}}});
    loop::LoopFaults f;
    f.reflect = true;
    engine::Session session(loop::make_loop_backend(f), spec);
    Rows sink;
    const auto r = session.run_trial(spec.trial(), sink);
    EXPECT_EQ(r.verdict, result::Verdict::pass) << r.verdict_reason;
    EXPECT_TRUE(r.round_trip);
    EXPECT_EQ(r.tx.packets, 20000u);
    EXPECT_EQ(r.rx.unique, 20000u);
    EXPECT_EQ(r.timeouts, 0u);
    EXPECT_EQ(r.latency.count(), 20000u) << "every response carries its request's timestamp";
    EXPECT_GT(r.transactions_per_s, 0);
}

TEST(Session, LostResponsesBecomeTimeoutsAndTheWindowKeepsMoving) {
    auto spec = make_spec({{"tx", {"a"}}, {"rx", {"a"}}, {"count", {"2000"}}, {"outstanding", {"1"}}});
    spec.response_timeout_s = 0.002;
    loop::LoopFaults f;
    f.reflect = true;
    f.drop_every = 100;
    engine::Session session(loop::make_loop_backend(f), spec);
    Rows sink;
    const auto r = session.run_trial(spec.trial(), sink);
    EXPECT_EQ(r.tx.packets, 2000u);
    EXPECT_EQ(r.rx.unique, 1980u);
    EXPECT_EQ(r.timeouts, 20u) << "one timeout per lost request, never counted twice";
}

TEST(Session, AnInterruptEndsTheTrialCleanlyAndStopsTheSession) {
    const auto spec = make_spec({{"tx", {"a"}}, {"rx", {"b"}}, {"duration", {"30s"}}, {"rate", {"100k"}}});
    engine::Session session(loop::make_loop_backend(), spec);
    EXPECT_FALSE(session.interrupted());
    InterruptAtFirstInterval sink;
    const auto r = session.run_trial(spec.trial(), sink);
    EXPECT_TRUE(r.interrupted);
    EXPECT_TRUE(session.interrupted());
    EXPECT_EQ(r.verdict, result::Verdict::pass) << r.verdict_reason;
    EXPECT_EQ(r.lost, 0u) << "the trial drains before its counters are read";
    // That it ends long before its 30 s is timing_session.cpp's.
    // A new session does not inherit it.
    engine::Session next(loop::make_loop_backend(), spec);
    EXPECT_FALSE(next.interrupted());
}

// --settle: a trial after the session's first starts no sooner than the rest after the last
// one ended, so that the device under test recovers (RFC 2544 section 23).
TEST(Session, TrialsAreSettleApart) {
    struct Times final : result::Sink {
        std::vector<std::chrono::steady_clock::time_point> started, finished;
        void trial_started(const result::TrialStart&) override { started.push_back(std::chrono::steady_clock::now()); }
        void trial_finished(const result::TrialResult&) override {
            finished.push_back(std::chrono::steady_clock::now());
        }
    };
    auto spec = make_spec({{"tx", {"a"}}, {"rx", {"b"}}, {"count", {"1000"}}});
    spec.settle_s = 0.2;
    engine::Session session(loop::make_loop_backend(), spec);
    Times sink;
    for (int i = 0; i < 3; ++i) EXPECT_EQ(session.run_trial(spec.trial(), sink).rx.unique, 1000u);
    ASSERT_EQ(sink.started.size(), 3u);
    for (size_t i = 1; i < 3; ++i)
        EXPECT_GE(std::chrono::duration<double>(sink.started[i] - sink.finished[i - 1]).count(), 0.19) << i;
}

TEST(Session, IntervalsAddUpToTheTotals) {
    const auto spec = make_spec({{"tx", {"a"}}, {"rx", {"b"}}, {"duration", {"400ms"}}, {"rate", {"50k"}}});
    engine::Session session(loop::make_loop_backend(), spec);
    Rows sink;
    const auto r = session.run_trial(spec.trial(), sink);
    ASSERT_GE(sink.rows.size(), 4u);
    uint64_t tx = 0, rx = 0, lat = 0;
    for (const auto& row : sink.rows) {
        tx += row.tx.packets;
        rx += row.rx.packets;
        lat += row.lat_count;
    }
    EXPECT_EQ(tx, r.tx.packets);
    EXPECT_EQ(rx, r.rx.packets);
    EXPECT_EQ(lat, r.latency.count());
    EXPECT_EQ(r.lost, 0u);
    EXPECT_EQ(r.intervals.size(), sink.rows.size());
}

TEST(Session, FramesThatChangeBetweenTrialsAreRewritten) {
    auto spec = make_spec({{"tx", {"a"}}, {"rx", {"b"}}, {"count", {"5000"}}});
    spec.max_frame_size = 1518;
    engine::Session session(loop::make_loop_backend(), spec);
    Rows sink;
    for (unsigned size : {64u, 1518u, 128u, 64u}) {
        auto t = spec.trial();
        t.frame_size = size;
        const auto r = session.run_trial(t, sink);
        EXPECT_EQ(r.verdict, result::Verdict::pass) << size << ": " << r.verdict_reason;
        EXPECT_EQ(r.rx.unique, 5000u) << size;
        EXPECT_EQ(r.rx.bytes, 5000ull * size) << size;
        EXPECT_EQ(r.trial.frame_size, size);
    }
    auto t = spec.trial();
    t.frame_size = 2000;
    EXPECT_THROW(session.run_trial(t, sink), lr::UsageError) << "larger than the session was opened for";
}

TEST(Session, StragglersOfAnEarlierTrialAreFlushedNotCounted) {
    // The wire delays frames past the drain: the next trial finds them waiting and drops them.
    auto spec = make_spec({{"tx", {"a"}}, {"rx", {"b"}}, {"count", {"1000"}}});
    spec.drain_s = 0.05;
    loop::LoopFaults f;
    f.delay_ns = 400'000'000;
    engine::Session session(loop::make_loop_backend(f), spec);
    Rows sink;
    const auto first = session.run_trial(spec.trial(), sink);
    const auto sent_by = std::chrono::steady_clock::now();  // every frame was on the wire before run_trial returned
    EXPECT_EQ(first.lost, 1000u) << "nothing arrived within the drain";
    // Not a guess: the wire makes each frame visible delay_ns after it was sent.
    std::this_thread::sleep_until(sent_by + std::chrono::nanoseconds(f.delay_ns));
    const auto second = session.run_trial(spec.trial(), sink);
    EXPECT_EQ(second.flushed_before, 1000u);
    EXPECT_EQ(second.rx.packets, 0u) << "the first trial's frames never count in the second";
}

TEST(Session, APacedSenderNeverCatchesUpAfterAnOutage) {
    // 200 kpps for 3 s; the device takes nothing from 0.5 s to 2.5 s after the sender starts.
    // What this asserts holds however loaded the host is; the rates and times themselves are
    // timing_session.cpp's (the `timing` suite).
    auto spec = make_spec({{"tx", {"a"}}, {"rx", {"b"}}, {"duration", {"3s"}}, {"rate", {"200kpps"}}});
    spec.interval_s = 0.25;
    loop::LoopFaults f;
    f.outage_from_ns = 500'000'000;
    f.outage_to_ns = 2'500'000'000;
    engine::Session session(loop::make_loop_backend(f), spec);
    Rows sink;
    const auto r = session.run_trial(spec.trial(), sink);
    EXPECT_LT(r.tx.packets, 3 * 200'000u) << "the 2 s of the outage are never sent late";
    EXPECT_GT(r.rate.skipped, 0u);
    EXPECT_TRUE(r.generator_limited);
    EXPECT_EQ(r.lost, 0u);
    EXPECT_EQ(r.rx.unique, r.tx.packets);
    bool noted = false;
    for (const auto& n : r.notes) noted |= n.find("gave up") != std::string::npos;
    EXPECT_TRUE(noted);
}

TEST(Session, TheRateIsResolvedPerTrialFromEveryUnit) {
    auto spec = make_spec({{"tx", {"a"}}, {"rx", {"b"}}, {"count", {"20000"}}, {"rate", {"10%"}},
                           {"line-rate", {"1G"}}});
    spec.max_frame_size = 1518;
    engine::Session session(loop::make_loop_backend(), spec);
    EXPECT_DOUBLE_EQ(session.line_rate_bps(), 1e9);
    Rows sink;
    auto t = spec.trial();
    for (unsigned size : {64u, 1518u}) {
        t.frame_size = size;
        const auto r = session.run_trial(t, sink);
        EXPECT_NEAR(r.rate.requested_pps, 0.1 * 1e9 / ((size + 20) * 8.0), 1e-6) << size;
        EXPECT_EQ(r.tx.packets, 20000u) << size;  // the offered rate's tolerance: timing_session.cpp
        EXPECT_EQ(r.rate.requested, "10 % of line rate");
        EXPECT_TRUE(r.rate.departures.measured);
    }
    auto no_line = make_spec({{"tx", {"a"}}, {"rx", {"b"}}, {"count", {"1000"}}, {"rate", {"10%"}}});
    EXPECT_THROW(engine::Session(loop::make_loop_backend(), no_line), lr::UsageError)
        << "% without a line rate: refused when the session opens";
}
