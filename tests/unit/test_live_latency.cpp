// Live latency: an RX worker (a thread running RxMeasure) hands a histogram per interval to
// the control side (LatencyTaker) while it keeps measuring. Every sample must land in
// exactly one interval and in the total; none is lost or counted twice. Also each stream's
// latency in a mix of streams, which the worker completes when it ends.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <thread>
#include <vector>

#include "packet/frame.h"
#include "packet/signature.h"
#include "stats/rx_measure.h"

using namespace lr;

namespace {

packet::FrameSpec spec64() {
    packet::FrameSpec s;
    s.frame_size = 64;
    s.l4 = packet::L4::udp;
    s.src_ip = packet::parse_ip("198.18.0.1", "src");
    s.dst_ip = packet::parse_ip("198.18.0.2", "dst");
    return s;
}

std::vector<uint8_t> signed64(uint16_t nonce) {
    const auto s = spec64();
    auto f = packet::build_frame(s);
    packet::sig_init(f, packet::sig_layout(s), nonce, 0);
    return f;
}

}  // namespace

TEST(LiveLatency, EverySampleLandsInExactlyOneInterval) {
    const uint16_t nonce = 0x4242;
    const auto tpl = signed64(nonce);
    const auto layout = packet::sig_layout(spec64());

    stats::RxResult out;
    out.live = std::make_unique<stats::LatencyExchange>();
    constexpr uint64_t kFrames = 400000;
    uint64_t produced = 0;  // read after join
    std::atomic<bool> finished{false};
    std::thread worker([&] {
        stats::RxMeasure meas(true, nonce, 1, &out);
        auto f = tpl;
        // At least kFrames, and on until 5 hand-overs happened (a loaded machine may not run
        // the control side at once).
        uint64_t k = 0;
        for (; k < kFrames || out.live->done.load(std::memory_order_relaxed) < 5; ++k) {
            const uint64_t tx = 1'000'000 + k * 10;
            packet::sig_stamp(f.data(), layout, k, tx);
            meas.poll();
            meas.burst_time(tx + 500 + k % 1000);  // latency 500..1499 ns
            meas.frame(f.data(), static_cast<uint32_t>(f.size()));
        }
        produced = k;
        finished.store(true, std::memory_order_release);
    });
    stats::LatencyTaker taker;
    stats::LatencyHistogram total;
    uint64_t in_intervals = 0, intervals_with_samples = 0;
    while (!finished.load(std::memory_order_acquire)) {
        stats::LatencyHistogram iv;
        taker.collect(*out.live, total, iv);
        taker.request(*out.live);
        for (int spin = 0; spin < 2000 && taker.pending(); ++spin) {
            if (taker.collect(*out.live, total, iv)) break;
            std::this_thread::yield();
        }
        in_intervals += iv.count();
        if (iv.count()) {
            ++intervals_with_samples;
            EXPECT_GE(iv.min(), 500u);
            EXPECT_LE(iv.max(), 1499u);
        }
    }
    worker.join();
    stats::LatencyHistogram last;
    taker.final(*out.live, total, last);
    in_intervals += last.count();
    EXPECT_GE(produced, kFrames);
    EXPECT_EQ(in_intervals, produced);
    EXPECT_EQ(total.count(), produced);
    EXPECT_EQ(out.latency.count(), 0u);  // with `live`, the worker never writes the total itself
    EXPECT_GT(intervals_with_samples, 1u) << "the hand-over never happened while the worker ran";
    EXPECT_EQ(total.min(), 500u);
    EXPECT_EQ(total.max(), 1499u);
}

TEST(LiveLatency, WithoutAnExchangeTheWorkerWritesTheTotal) {
    const uint16_t nonce = 7;
    auto f = signed64(nonce);
    const auto s = spec64();
    stats::RxResult out;
    stats::RxMeasure meas(true, nonce, 1, &out);
    packet::sig_stamp(f.data(), packet::sig_layout(s), 0, 1000);
    meas.poll();  // no exchange: nothing to do
    meas.burst_time(3000);
    meas.frame(f.data(), static_cast<uint32_t>(f.size()));
    EXPECT_EQ(out.latency.count(), 1u);
    EXPECT_EQ(out.latency.min(), 2000u);
}

// A stream stamped by another host's clock: the receiver reads each stamp through the shift
// its controller gave it (RxResult::tx_clock_shift), on flow totals, jitter and the histogram alike.
TEST(LiveLatency, AnotherHostsStampsReadThroughTheShift) {
    const uint16_t nonce = 9;
    const auto s = spec64();
    const auto layout = packet::sig_layout(s);
    auto f = signed64(nonce);
    // The sender's clock reads 7 s (+ 48-bit wrap) where this host's reads 1 s: a stamp of
    // 7 s + 1000 ns is this host's 1 s + 1000 ns, shift -6 s modulo 2^48.
    constexpr uint64_t kMask = (uint64_t(1) << 48) - 1;
    const int64_t shift = -6'000'000'000LL;
    for (const bool totals : {true, false}) {
        stats::RxResult out;
        out.tx_clock_shift = {static_cast<uint64_t>(shift) & kMask};
        stats::RxMeasure meas(true, nonce, 1, &out, totals);
        packet::sig_stamp(f.data(), layout, 0, 7'000'001'000);
        meas.burst_time(1'000'003'500);
        meas.frame(f.data(), static_cast<uint32_t>(f.size()));
        if (totals) {
            ASSERT_EQ(out.latency.count(), 1u);
            EXPECT_EQ(out.latency.min(), 2500u);
            ASSERT_EQ(out.flow_totals.size(), 1u);
            EXPECT_EQ(out.flow_totals[0].lat_n, 1u);
            EXPECT_EQ(out.flow_totals[0].lat_min, 2500u);
        } else {
            // Without flow totals (not a controlled trial) the shift is not read: a stamp from
            // the receiver's future is left out.
            EXPECT_EQ(out.latency.count(), 0u);
        }
        EXPECT_EQ(out.streams[0].seq.counts().received, 1u);
    }
}

// A mix of streams: each keeps a latency histogram of its own (several signature ids may map to
// one stream), whose totals the receiver adds when it ends. Count, sum, minimum and maximum
// are exact, every bucket holds what the stream's own histogram would (each flow adds runs of
// latencies in one bucket: stats::LatencyRun), latencies over 4 s keep their exact extremes,
// and a second finish adds nothing. Both ways frames are accounted: one at a time (frame()),
// and in a burst, each frame's flow state asked for first, as a receive queue with many
// flows does (RxMeasure::prefetch_flow, account_frames).
class StreamLatencyOfAMix : public ::testing::TestWithParam<bool> {};

TEST_P(StreamLatencyOfAMix, EachStreamGetsExactTotalsWhenTheReceiverEnds) {
    const bool burst = GetParam();
    const uint16_t nonce = 0x5151;
    const auto layout = packet::sig_layout(spec64());
    constexpr uint16_t kIds = 40;  // more than one pass takes
    static_assert(kIds > stats::RxMeasure::kFetchFlowsAbove);
    stats::RxResult out;
    for (uint16_t id = 0; id < kIds; ++id) out.stream_of.push_back(id < 4 ? id % 3 : 3 + id % 5);  // flows of 8 streams
    out.stream_latency.assign(8, {});
    std::vector<std::vector<uint8_t>> frames(kIds);
    for (uint16_t id = 0; id < kIds; ++id) {
        frames[id] = packet::build_frame(spec64());
        packet::sig_init(frames[id], layout, nonce, id);
    }
    struct Expected {
        uint64_t count = 0, sum = 0, min = UINT64_MAX, max = 0;
        stats::StreamLatency buckets;
    };
    std::vector<Expected> want(8);
    {
        stats::RxMeasure meas(true, nonce, kIds, &out);
        std::vector<uint64_t> seq(kIds);
        constexpr uint32_t kBurst = 16;
        std::array<uint16_t, kBurst> ids;
        for (uint64_t k = 0; k < 20000; k += kBurst) {
            const uint64_t rx = 50'000'000'000 + k * 100;
            meas.burst_time(rx);
            for (uint32_t i = 0; i < kBurst; ++i) {
                const uint16_t id = static_cast<uint16_t>((k + i) * 7 % kIds);
                // Runs of one latency in a flow, latencies that change bucket, and some over 2^32 ns.
                const uint64_t x = k + i;
                const uint64_t lat = x % 3 == 0   ? 300 + (x * 7919) % 90000
                                     : x % 97 == 5 ? (uint64_t(1) << 32) - 1 + (x * 104729) % 9'000'000'000
                                                   : 5000 + id;
                const bool future = (k + i) % 1000 == 999;  // a timestamp ahead of the receiver: no latency
                auto& f = frames[id];
                packet::sig_stamp(f.data(), layout, seq[id]++, future ? rx + 5 : rx - lat);
                if (burst) {
                    ids[i] = id;
                } else {
                    meas.frame(f.data(), static_cast<uint32_t>(f.size()));
                }
                if (future) continue;
                auto& w = want[out.stream_of[id]];
                ++w.count;
                w.sum += lat;
                w.min = std::min(w.min, lat);
                w.max = std::max(w.max, lat);
                w.buckets.add(lat);
            }
            if (!burst) continue;
            // Each frame was stamped in place: the burst's frames are distinct ids (7 is prime to kIds).
            // As a receive queue with many flows does it: each frame's flow fetched ahead.
            for (uint32_t i = 0; i < kBurst; ++i) {
                const auto& f = frames[ids[i]];
                meas.prefetch_flow(f.data(), static_cast<uint32_t>(f.size()));
            }
            meas.account_frames<false>(kBurst, [&](uint32_t i, lr_wire_sig& s, uint32_t& wire) {
                const auto& f = frames[ids[i]];
                wire = static_cast<uint32_t>(f.size() + 4);
                const int cls = meas.classify_or_account(f.data(), static_cast<uint32_t>(f.size()), false, s, wire);
                EXPECT_EQ(cls, LR_OURS);
                return cls;
            });
        }
        meas.finish();
        meas.finish();  // a second time adds nothing
    }
    uint64_t all = 0;
    for (size_t m = 0; m < want.size(); ++m) {
        const auto& h = out.stream_latency[m];
        EXPECT_EQ(h.count(), want[m].count) << "stream " << m;
        EXPECT_EQ(h.sum(), want[m].sum) << "stream " << m;
        EXPECT_EQ(h.min(), want[m].min) << "stream " << m;
        EXPECT_EQ(h.max(), want[m].max) << "stream " << m;
        uint64_t in_buckets = 0;
        for (unsigned b = 0; b < stats::StreamLatency::kBuckets; ++b) {
            in_buckets += h.bucket_count(b);
            ASSERT_EQ(h.bucket_count(b), want[m].buckets.bucket_count(b)) << "stream " << m << ", bucket " << b;
        }
        EXPECT_EQ(in_buckets, want[m].count) << "stream " << m;
        EXPECT_GT(want[m].max, uint64_t(1) << 32) << "stream " << m;
        all += want[m].count;
    }
    EXPECT_EQ(all, 20000u - 20u);
    EXPECT_EQ(out.latency.count(), all);
}

INSTANTIATE_TEST_SUITE_P(FrameByFrameAndInBursts, StreamLatencyOfAMix, ::testing::Bool());
