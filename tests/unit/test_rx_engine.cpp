// The RX engine's end: frames already waiting in its queue when it is told to stop arrived
// before the end and are counted (a last sweep), and a queue that keeps filling does not hold
// the stop back.
#include <gtest/gtest.h>

#include <array>
#include <cstdint>

#include "stats/counters.h"
#include "stats/rx_measure.h"
#include "worker/rx_engine.h"
#include "worker/worker_config.h"

using namespace lr;

namespace {

// A queue holding `waiting` 64-byte frames (or an endless supply), handed out in bursts.
struct FakeQueue {
    uint64_t waiting = 0;
    bool endless = false;
    uint32_t got = 0;
    uint64_t bursts = 0;
    std::array<uint8_t, 60> frame{};
    uint32_t receive(uint32_t most) {
        got = endless ? most : static_cast<uint32_t>(std::min<uint64_t>(most, waiting));
        if (!endless) waiting -= got;
        bursts += got > 0;
        return got;
    }
    const uint8_t* data(uint32_t) const { return frame.data(); }
    uint32_t len(uint32_t) const { return static_cast<uint32_t>(frame.size()); }
    uint64_t wire_bytes(uint32_t) const { return frame.size() + 4; }
    bool csum_verified(uint32_t) const { return false; }
    void release() { got = 0; }
    void idle() {}
};

// The same queue, taken a burst ahead by a receiver that reads its frames (worker::HasLookahead).
struct FakeLookaheadQueue : FakeQueue {
    uint32_t ahead = 0;
    uint32_t receive_ahead(uint32_t most) {
        const uint32_t current = got;
        ahead = receive(most);
        got = current;
        return ahead;
    }
    void release() {
        got = ahead;
        ahead = 0;
    }
    uint32_t held() const { return got + ahead; }
};
static_assert(worker::HasLookahead<FakeLookaheadQueue>);

struct StoppedWorker {
    stats::RxResult result;
    stats::QueueCounters counters;
    worker::RunControl ctl;
    worker::WorkerConfig w;
    StoppedWorker() {
        ctl.stop_rx.store(true);  // told to stop before its first poll
        w.rx.burst = 32;
        w.rx.result = &result;  // plain frames: each one counted
        w.rx_counters = &counters;
        w.ctl = &ctl;
    }
    // A receiver that reads its frames: signed (the fake's frames are not test frames, and are
    // counted all the same), so it takes each burst before it measures the one before.
    void sign() {
        w.rx.sign = true;
        w.rx.nonce = 1;
        w.rx.streams = 1;
    }
};

}  // namespace

TEST(RxEngine, FramesWaitingAtTheStopAreCounted) {
    StoppedWorker sw;
    FakeQueue q;
    q.waiting = 1000;
    EXPECT_TRUE(worker::rx_engine(q, sw.w));
    EXPECT_EQ(q.waiting, 0u);
    EXPECT_EQ(sw.counters.packets.load(), 1000u);
    EXPECT_EQ(sw.counters.bytes.load(), 1000u * 64);
}

TEST(RxEngine, AQueueThatKeepsFillingDoesNotHoldTheStop) {
    StoppedWorker sw;
    FakeQueue q;
    q.endless = true;
    EXPECT_TRUE(worker::rx_engine(q, sw.w));
    EXPECT_EQ(q.bursts, worker::kFinalSweepBursts);
    EXPECT_EQ(sw.counters.packets.load(), uint64_t{worker::kFinalSweepBursts} * 32);
}

TEST(RxEngine, ABurstTakenAheadIsMeasuredBeforeTheEngineEnds) {
    StoppedWorker sw;
    sw.sign();
    FakeLookaheadQueue q;
    q.waiting = 1000;
    EXPECT_TRUE(worker::rx_engine(q, sw.w));
    EXPECT_EQ(q.waiting, 0u);
    EXPECT_EQ(q.held(), 0u);
    EXPECT_EQ(sw.counters.packets.load(), 1000u);
    EXPECT_EQ(sw.counters.bytes.load(), 1000u * 64);
}

TEST(RxEngine, AQueueThatKeepsFillingDoesNotHoldTheStopWhenTakenAhead) {
    StoppedWorker sw;
    sw.sign();
    FakeLookaheadQueue q;
    q.endless = true;
    EXPECT_TRUE(worker::rx_engine(q, sw.w));
    // The sweep's bursts, and the one its last step took ahead, measured after it.
    EXPECT_EQ(q.bursts, uint64_t{worker::kFinalSweepBursts} + 1);
    EXPECT_EQ(q.held(), 0u);
    EXPECT_EQ(sw.counters.packets.load(), q.bursts * 32);
}
