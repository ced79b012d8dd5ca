// Planning (workers, CPUs, counter slots, each worker's share) and the stream merge.
#include <gtest/gtest.h>

#include <numeric>
#include <thread>

#include "engine/aggregate.h"
#include "engine/planner.h"
#include "spec/options.h"
#include "util/cpus.h"
#include "util/error.h"

using namespace lr;
using worker::Role;

namespace {

spec::RunSpec make_spec(spec::OptionValues o) { return spec::build_run_spec(o); }

}  // namespace

TEST(Planner, OneWorkerPerQueueTxFirstThenRx) {
    const auto l = engine::plan_layout(make_spec({{"tx", {"a,queues=2"}}, {"rx", {"b,queues=3"}}}));
    ASSERT_EQ(l.ports, (std::vector<std::string>{"a", "b"}));
    ASSERT_EQ(l.workers.size(), 5u);
    for (int i = 0; i < 2; ++i) {
        EXPECT_EQ(l.workers[i].role, Role::tx);
        EXPECT_EQ(l.workers[i].port_index, 0u);
        EXPECT_EQ(l.workers[i].queue, i);
    }
    for (int i = 2; i < 5; ++i) {
        EXPECT_EQ(l.workers[i].role, Role::rx);
        EXPECT_EQ(l.workers[i].port, "b");
        EXPECT_EQ(l.workers[i].queue, i - 2);
    }
    const auto slots = engine::plan_counters(l);
    ASSERT_EQ(slots.ids.size(), 5u);
    EXPECT_EQ(slots.ids[0].dir, stats::Dir::tx);
    EXPECT_EQ(slots.ids[4].dir, stats::Dir::rx);
    EXPECT_EQ(slots.tx_slot[2], -1);
    EXPECT_EQ(slots.rx_slot[2], 2);
}

TEST(Planner, PairedRolesServeTxAndRxOfAQueueWithOneWorker) {
    for (bool reflect : {false, true}) {
        auto s = make_spec({{"tx", {"p"}}, {"rx", {"p"}}, {"outstanding", {"4"}}});
        s.reflect = reflect;
        const auto l = engine::plan_layout(s);
        ASSERT_EQ(l.ports.size(), 1u);
        ASSERT_EQ(l.workers.size(), 1u);
        EXPECT_EQ(l.workers[0].role, reflect ? Role::reflect : Role::request_response);
        const auto slots = engine::plan_counters(l);
        ASSERT_EQ(slots.ids.size(), 2u) << "a TX and an RX counter slot for the one worker";
        EXPECT_EQ(slots.tx_slot[0], 0);
        EXPECT_EQ(slots.rx_slot[0], 1);
    }
}

TEST(Planner, AThreadRestrictedLaterStillPlacesWorkersOnTheProcessesCpus) {
    // `serve` keeps its own threads on the first CPU; a session its HTTP thread opens places
    // workers on the CPUs the process started with, and takes --cpus among them.
    const auto allowed = util::allowed_cpus();
    if (allowed.size() < 2) GTEST_SKIP() << "needs two CPUs";
    std::vector<int> seen;
    int worker_cpu = -1;
    std::thread t([&] {
        ASSERT_TRUE(util::restrict_current_thread({allowed.front()}));
        seen = util::allowed_cpus();
        worker_cpu = engine::plan_layout(make_spec({{"tx", {"a"}}, {"cpus", {std::to_string(allowed.back())}}}))
                         .workers[0]
                         .cpu;
    });
    t.join();
    EXPECT_EQ(seen, allowed);
    EXPECT_EQ(worker_cpu, allowed.back());
}

TEST(Planner, CpusFollowTheListOrLeaveTheFirstToTheControlThread) {
    const auto allowed = util::allowed_cpus();
    const auto l = engine::plan_layout(make_spec({{"tx", {"a,queues=3"}}}));
    for (size_t i = 0; i < 3; ++i) EXPECT_EQ(l.workers[i].cpu, allowed[(i + 1) % allowed.size()]);
    const int c = allowed.back();
    const auto given = engine::plan_layout(make_spec({{"tx", {"a,queues=2"}}, {"cpus", {std::to_string(c)}}}));
    EXPECT_EQ(given.workers[0].cpu, c);
    EXPECT_EQ(given.workers[1].cpu, c);
    try {
        engine::plan_layout(make_spec({{"tx", {"a"}}, {"cpus", {"1023"}}}));
        FAIL() << "a CPU this process may not use was accepted";
    } catch (const UsageError& e) {
        EXPECT_NE(std::string(e.what()).find("--cpus: CPU 1023 is not available to this process"), std::string::npos)
            << e.what();
    }
}

TEST(Planner, CountAndFlowsAreSplitExactlyOverTheSendingQueues) {
    auto s = make_spec({{"tx", {"a,queues=3"}}, {"rx", {"b"}}, {"count", {"1000001"}}, {"flows", {"7"}},
                        {"rate", {"3Mpps"}}, {"pattern", {"burst:8"}}});
    s.rate_pps = spec::to_pps(s.rate, s.frame.frame_size, 0);  // the session's job
    const auto l = engine::plan_layout(s);
    const auto slots = engine::plan_counters(l);
    engine::TrialOutputs out(slots.ids.size());
    worker::RunControl ctl;
    const auto ws = engine::plan_workers(s, l, slots, out, ctl);
    ASSERT_EQ(ws.size(), 4u);
    uint64_t total = 0;
    std::vector<uint16_t> streams;
    for (int i = 0; i < 3; ++i) {
        total += ws[i].tx.count;
        EXPECT_DOUBLE_EQ(ws[i].tx.pacing.pps, 1e6);
        EXPECT_EQ(ws[i].tx.pacing.kind, worker::PacingPlan::Kind::burst);
        EXPECT_EQ(ws[i].tx.pacing.burst, 8u);
        EXPECT_EQ(ws[i].tx.templates.size(), ws[i].tx.streams.size());
        EXPECT_EQ(ws[i].tx.templates[0].size(), 60u);
        EXPECT_EQ(ws[i].tx_counters, &out.counters[i]);
        EXPECT_EQ(ws[i].ctl, &ctl);
        streams.insert(streams.end(), ws[i].tx.streams.begin(), ws[i].tx.streams.end());
    }
    EXPECT_EQ(total, 1000001u);
    EXPECT_EQ(ws[0].tx.count, 333334u) << "the remainder goes to the first queues";
    std::sort(streams.begin(), streams.end());
    std::vector<uint16_t> all(7);
    std::iota(all.begin(), all.end(), 0);
    EXPECT_EQ(streams, all) << "every flow is sent by exactly one queue";
    EXPECT_EQ(ws[3].role, Role::rx);
    EXPECT_EQ(ws[3].rx.result, &out.rx_results[3]);
    EXPECT_EQ(ws[3].rx.streams, 7u);
    EXPECT_TRUE(out.rx_results[3].live) << "a signed receiver hands latency over live";
}

TEST(MergeStreams, SenderKnownLossIsSentMinusReceived) {
    std::vector<uint16_t> ids0{0, 2}, ids1{1};
    std::vector<uint64_t> sent0{100, 50}, sent1{70};
    stats::RxResult rx0, rx1;
    rx0.streams.resize(3);
    rx1.streams.resize(3);
    for (uint64_t s = 0; s < 90; ++s) rx0.streams[0].seq.add(s);
    for (uint64_t s = 0; s < 70; ++s) rx0.streams[1].seq.add(s);
    for (uint64_t s = 0; s < 10; ++s) rx1.streams[2].seq.add(s);  // stream 2 spread over two queues
    for (uint64_t s = 10; s < 50; ++s) rx0.streams[2].seq.add(s);
    std::vector<std::string> v;
    const auto r = engine::merge_flows({{&ids0, &sent0}, {&ids1, &sent1}}, {&rx0, &rx1}, true, v);
    EXPECT_TRUE(v.empty());
    ASSERT_EQ(r.size(), 3u);
    EXPECT_EQ(r[0].sent, 100u);
    EXPECT_EQ(r[0].received, 90u);
    EXPECT_EQ(r[0].lost, 10u);
    EXPECT_EQ(r[1].lost, 0u);
    EXPECT_EQ(r[2].received, 50u);
    EXPECT_EQ(r[2].lost, 0u);
}

TEST(MergeStreams, ReceivingMoreThanWasSentIsAViolation) {
    std::vector<uint16_t> ids{0};
    std::vector<uint64_t> sent{10};
    stats::RxResult rx;
    rx.streams.resize(1);
    for (uint64_t s = 0; s < 11; ++s) rx.streams[0].seq.add(s);
    std::vector<std::string> v;
    engine::merge_flows({{&ids, &sent}}, {&rx}, true, v);
    ASSERT_EQ(v.size(), 1u);
    EXPECT_NE(v[0].find("stream 0: received 11 distinct packets but sent 10"), std::string::npos) << v[0];
}

TEST(MergeStreams, WithoutTheSenderLossIsSequenceGapsAndOnlyStreamsSeenAreListed) {
    stats::RxResult rx;
    rx.streams.resize(1024);
    for (uint64_t s = 0; s < 100; ++s)
        if (s % 10) rx.streams[5].seq.add(s);  // 90 of 0..99
    std::vector<std::string> v;
    const auto r = engine::merge_flows({}, {&rx}, false, v);
    ASSERT_EQ(r.size(), 1u);
    EXPECT_EQ(r[0].stream, 5u);
    EXPECT_FALSE(r[0].tx_known);
    EXPECT_EQ(r[0].received, 90u);
    EXPECT_EQ(r[0].lost, 10u) << "0, 10, 20 ... 90 never arrived";
}

TEST(SessionGroup, TheAutogroupLinesNiceValueIsReadAndAnythingElseIsNot) {
    EXPECT_EQ(util::parse_autogroup_nice("/autogroup-25 nice 0\n"), 0);
    EXPECT_EQ(util::parse_autogroup_nice("/autogroup-7 nice -20"), -20);
    EXPECT_EQ(util::parse_autogroup_nice("/autogroup-7 nice 19\n"), 19);
    EXPECT_EQ(util::parse_autogroup_nice("/autogroup-7 nice 20"), std::nullopt);     // beyond nice's range
    EXPECT_EQ(util::parse_autogroup_nice("/autogroup-7 nice -21"), std::nullopt);
    EXPECT_EQ(util::parse_autogroup_nice("/autogroup-7 nice x"), std::nullopt);
    EXPECT_EQ(util::parse_autogroup_nice("/autogroup-7 nice 3 4"), std::nullopt);
    EXPECT_EQ(util::parse_autogroup_nice("/autogroup-7"), std::nullopt);
    EXPECT_EQ(util::parse_autogroup_nice(""), std::nullopt);
    EXPECT_EQ(util::parse_autogroup_nice("nice 0"), std::nullopt);
}
