#include <gtest/gtest.h>

#include "stats/snapshot.h"

using namespace lr::stats;

namespace {

std::vector<QueueId> ids2() {
    return {{Dir::tx, 0, "p0", 0}, {Dir::tx, 0, "p0", 1}, {Dir::rx, 1, "p1", 0}};
}

Snapshot snap(double t, uint64_t tx0, uint64_t tx1, uint64_t rx0, unsigned size = 64) {
    Snapshot s;
    s.t = t;
    s.queues.resize(3);
    s.queues[0].packets = tx0;
    s.queues[0].bytes = tx0 * size;
    s.queues[1].packets = tx1;
    s.queues[1].bytes = tx1 * size;
    s.queues[2].packets = rx0;
    s.queues[2].rx_unique = rx0;
    s.queues[2].bytes = rx0 * size;
    return s;
}

}  // namespace

TEST(Counters, OneCacheLineAlignedAndSingleWriterPublish) {
    EXPECT_EQ(alignof(QueueCounters), 64u);
    EXPECT_EQ(sizeof(QueueCounters) % 64, 0u);
    QueueCounters c[2];
    EXPECT_EQ(reinterpret_cast<uintptr_t>(&c[1]) - reinterpret_cast<uintptr_t>(&c[0]), sizeof(QueueCounters));
    publish(c[0].packets, 42);
    publish(c[0].bytes, 42 * 64);
    set_state(c[0], WorkerState::running);
    set_state(c[0], WorkerState::finished);
    auto s = read(c[0]);
    EXPECT_EQ(s.packets, 42u);
    EXPECT_EQ(s.bytes, 42u * 64);
    EXPECT_EQ(s.state, WorkerState::finished);
    EXPECT_GE(s.end_ns, s.start_ns);
    EXPECT_GT(s.start_ns, 0u);
    EXPECT_EQ(read(c[1]).packets, 0u);
}

TEST(Rates, L1IsL2PlusTwentyBytesPerFrame) {
    // 14,880,952 64-byte frames per second is 10GbE line rate: 10 Gb/s at L1.
    Rates r{14880952, 14880952ull * 64, 1.0};
    EXPECT_NEAR(r.l1_bps(), 10e9, 1e3);
    EXPECT_NEAR(r.l2_bps(), 14880952.0 * 64 * 8, 1);
    EXPECT_NEAR(r.l1_bps() - r.l2_bps(), 14880952.0 * 20 * 8, 1);
    EXPECT_NEAR(r.pps(), 14880952, 1e-6);
    Rates big{812743, 812743ull * 1538 - 812743ull * 20, 1.0};  // 1518-byte frames at 10G
    EXPECT_NEAR(big.l1_bps(), 812743.0 * 1538 * 8, 1);
    Rates zero{100, 6400, 0};
    EXPECT_EQ(zero.pps(), 0);
    EXPECT_EQ(zero.l1_bps(), 0);
}

TEST(Aggregation, TotalsAreTheSumOfQueuesPerDirection) {
    auto ids = ids2();
    auto s = snap(1.0, 100, 250, 300);
    auto tx = total(ids, s, Dir::tx);
    auto rx = total(ids, s, Dir::rx);
    EXPECT_EQ(tx.packets, 350u);
    EXPECT_EQ(tx.bytes, 350u * 64);
    EXPECT_EQ(rx.packets, 300u);
}

TEST(Aggregation, IntervalDeltasAndRates) {
    auto ids = ids2();
    auto a = snap(1.0, 1000, 2000, 2500);
    auto b = snap(1.5, 3000, 5000, 7000);
    std::vector<std::string> v;
    auto row = interval(ids, a, b, v);
    EXPECT_TRUE(v.empty());
    EXPECT_EQ(row.tx.packets, 5000u);
    EXPECT_EQ(row.rx.packets, 4500u);
    EXPECT_DOUBLE_EQ(row.tx.seconds, 0.5);
    EXPECT_DOUBLE_EQ(row.tx.pps(), 10000.0);
    EXPECT_DOUBLE_EQ(row.rx.l2_bps(), 4500.0 * 64 * 8 / 0.5);
}

TEST(Aggregation, CounterGoingBackwardsIsAViolation) {
    auto ids = ids2();
    auto a = snap(1.0, 1000, 2000, 2500);
    auto b = snap(2.0, 999, 2000, 2500);
    std::vector<std::string> v;
    auto row = interval(ids, a, b, v);
    ASSERT_EQ(v.size(), 2u);  // packets and bytes of tx p0 queue 0
    EXPECT_NE(v[0].find("tx p0 queue 0"), std::string::npos);
    EXPECT_EQ(row.tx.packets, 0u);
}

TEST(Aggregation, PortDropsAreSummedAndDeltaed) {
    auto ids = ids2();
    auto a = snap(1.0, 0, 0, 0);
    auto b = snap(2.0, 0, 0, 0);
    a.ports.resize(2);
    b.ports.resize(2);
    a.ports[0].imissed = 5;
    b.ports[0].imissed = 7;
    b.ports[1].rx_nombuf = 3;
    b.ports[1].oerrors = 1;
    std::vector<std::string> v;
    auto row = interval(ids, a, b, v);
    EXPECT_EQ(row.drops, 6u);
    EXPECT_EQ(port_drops(b), 11u);
}

TEST(HostReceiveDrops, EachFrameCountedOnceBetweenTheDeviceAndItsSocket) {
    PortSample p;
    p.xsk_rx_ring_full = 40;  // the socket's ring was full: the device counted these too
    p.xsk_rx_dropped = 2;
    p.idropped = 42;
    EXPECT_EQ(p.host_rx_drops(), 42u);
    p.idropped = 50;  // and 8 more the device dropped before its program ran (a veth's ring)
    EXPECT_EQ(p.host_rx_drops(), 50u);
    p.idropped = 0;  // a device that does not count its socket's drops
    EXPECT_EQ(p.host_rx_drops(), 42u);
    p.imissed = 3;
    p.rx_nombuf = 4;
    p.xdp_redirect_failed = 5;  // no socket on the queue: the program dropped them itself
    EXPECT_EQ(p.host_rx_drops(), 54u);
    EXPECT_EQ(p.egress_drops(), 0u);
}

TEST(HostReceiveDrops, APeersRefusedRedirectsAreItsEgressDropsNotOurs) {
    PortSample p;
    p.idropped = 1000;            // the veth's rx_dropped: 700 its peer could not redirect in, 300 more
    p.ipeer_xmit_refused = 700;   // the peer (a sending port of the run) counts those as its tx_dropped
    p.xsk_rx_ring_full = 250;
    EXPECT_EQ(p.host_rx_drops(), 300u);
    p.ipeer_xmit_refused = 2000;  // never below zero: a counter read a moment apart
    EXPECT_EQ(p.host_rx_drops(), 250u);
    PortSample base;
    base.ipeer_xmit_refused = 100;
    EXPECT_EQ(since(base, p).ipeer_xmit_refused, 1900u);
}

TEST(Invariants, ReceivedMoreThanSentIsFlaggedOnlyForLoopback) {
    auto ids = ids2();
    std::vector<std::string> v;
    check_invariants(ids, snap(1, 10, 10, 20), true, v);
    EXPECT_TRUE(v.empty());
    check_invariants(ids, snap(1, 10, 10, 21), true, v);
    ASSERT_EQ(v.size(), 1u);
    EXPECT_NE(v[0].find("received 21 distinct test packets but sent only 20"), std::string::npos);
    v.clear();
    check_invariants(ids, snap(1, 10, 10, 21), false, v);
    EXPECT_TRUE(v.empty());
}
