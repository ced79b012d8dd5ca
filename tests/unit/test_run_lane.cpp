// The receive path's eight-frame lanes (stats::account_run8 for a few flows, stats::classify_run8
// for many, then stats::account_flows8 for eight of eight flows, with or without each stream's
// own latency histogram): the same
// bursts, with the same clock, through a receive queue with the lane and one without it give
// the same counts, sequence outcomes, jitter and latency histogram, down to every bucket; and
// with the lane, a clean run's frames do go through it (where the CPU has its instructions).
#include <gtest/gtest.h>

#include <memory>
#include <random>
#include <vector>

#include "packet/signature.h"
#include "stats/counters.h"
#include "stats/run_lane.h"
#include "stats/rx_measure.h"
#include "worker/rx_step.h"
#include "worker/worker_config.h"
#include "wire_fixtures.h"

using namespace lr;

namespace {

constexpr uint64_t kMask48 = (uint64_t{1} << 48) - 1;

struct Burst {
    uint64_t rx_ns = 0;
    std::vector<std::vector<uint8_t>> frames;
    std::vector<bool> verified;
};

// Bursts handed out one at a time, each frame in a heap buffer of its exact size (a sanitizer
// or valgrind sees any read beyond it), with the burst's own receive time; each taken a burst
// ahead where the receiver asks (worker::HasLookahead): the frames of the burst taken ahead
// follow the current burst's until release().
struct ScriptedOps {
    explicit ScriptedOps(const std::vector<Burst>& b) : bursts(b) {}
    const std::vector<Burst>& bursts;
    size_t next = 0;
    struct Held {
        std::unique_ptr<uint8_t[]> data;
        uint32_t len;
        bool verified;
    };
    std::vector<Held> held;  // the current burst's frames, then those of the burst taken ahead
    uint32_t current = 0, ahead = 0;
    uint64_t time = 0;  // the receive time of the burst the last receive() or receive_ahead() brought
    uint64_t taken_ahead = 0;  // bursts receive_ahead() brought
    uint32_t take() {
        if (next == bursts.size()) return 0;
        const Burst& b = bursts[next++];
        time = b.rx_ns;
        for (size_t i = 0; i < b.frames.size(); ++i) {
            Held h{std::unique_ptr<uint8_t[]>(new uint8_t[b.frames[i].size()]), static_cast<uint32_t>(b.frames[i].size()),
                   b.verified[i]};
            std::copy(b.frames[i].begin(), b.frames[i].end(), h.data.get());
            held.push_back(std::move(h));
        }
        return static_cast<uint32_t>(b.frames.size());
    }
    uint32_t receive(uint32_t) {
        EXPECT_EQ(held.size(), 0u) << "a burst received over frames still held";
        current = take();
        return current;
    }
    uint32_t receive_ahead(uint32_t) {
        ahead = take();
        taken_ahead += ahead > 0;
        return ahead;
    }
    uint64_t burst_time_ns() const { return time; }
    const uint8_t* data(uint32_t i) const { return held.at(i).data.get(); }
    uint32_t len(uint32_t i) const { return held.at(i).len; }
    uint64_t wire_bytes(uint32_t i) const { return len(i) + uint64_t{packet::kFcsLen}; }
    bool csum_verified(uint32_t i) const { return held.at(i).verified; }
    void release() {
        held.erase(held.begin(), held.begin() + current);
        current = ahead;
        ahead = 0;
    }
    void idle() {}
};
static_assert(worker::HasLookahead<ScriptedOps>);

// What a receiver ended with.
struct Outcome {
    stats::RxResult result;
    stats::QueueCounters counters;
    uint64_t run_frames = 0, flows_frames = 0;
    uint64_t taken_ahead = 0;  // with lookahead: the bursts taken ahead
};

// mix: each stream is a stream of a mix, with its own latency histogram; mix_streams (not 0):
// the flows are the streams of a mix of that many, flow f of stream f % mix_streams.
// lookahead: each burst taken before the one before it is measured (RxQueue::step<true>).
std::unique_ptr<Outcome> receive(const std::vector<Burst>& bursts, uint32_t streams, bool lane, bool mix = false,
                                 uint32_t mix_streams = 0, bool lookahead = false) {
    stats::set_run_lane_enabled(lane);
    auto out = std::make_unique<Outcome>();
    if (mix) {
        if (!mix_streams) mix_streams = streams;
        out->result.stream_latency.resize(mix_streams);
        for (uint32_t i = 0; i < streams; ++i) out->result.stream_of.push_back(static_cast<uint16_t>(i % mix_streams));
    }
    worker::WorkerConfig w;
    w.rx.sign = true;
    w.rx.nonce = wire_fixtures::kNonce;
    w.rx.streams = streams;
    w.rx.result = &out->result;
    w.rx_counters = &out->counters;
    worker::RxQueue q(w);
    ScriptedOps ops(bursts);
    if (lookahead) {
        while (ops.next < bursts.size()) q.step<true>(ops);
        q.finish_held(ops);
        EXPECT_TRUE(ops.held.empty()) << "frames left held";
    } else {
        while (ops.next < bursts.size()) q.step(ops);
    }
    out->taken_ahead = ops.taken_ahead;
    q.finish();
    out->run_frames = q.run_frames();
    out->flows_frames = q.flows_frames();
    stats::set_run_lane_enabled(true);
    return out;
}

void expect_same(const Outcome& a, const Outcome& b) {
    const auto& ca = a.counters;
    const auto& cb = b.counters;
    EXPECT_EQ(ca.packets.load(), cb.packets.load());
    EXPECT_EQ(ca.bytes.load(), cb.bytes.load());
    EXPECT_EQ(ca.rx_ours.load(), cb.rx_ours.load());
    EXPECT_EQ(ca.rx_unique.load(), cb.rx_unique.load());
    EXPECT_EQ(ca.rx_foreign.load(), cb.rx_foreign.load());
    EXPECT_EQ(ca.rx_malformed.load(), cb.rx_malformed.load());
    EXPECT_EQ(ca.rx_dup.load(), cb.rx_dup.load());
    EXPECT_EQ(ca.rx_reordered.load(), cb.rx_reordered.load());
    EXPECT_EQ(ca.rx_late.load(), cb.rx_late.load());
    EXPECT_EQ(ca.rx_gaps.load(), cb.rx_gaps.load());
    ASSERT_EQ(a.result.streams.size(), b.result.streams.size());
    for (size_t s = 0; s < a.result.streams.size(); ++s) {
        const auto& x = a.result.streams[s];
        const auto& y = b.result.streams[s];
        const auto cx = x.seq.counts(), cy = y.seq.counts();
        EXPECT_EQ(cx.received, cy.received) << "stream " << s;
        EXPECT_EQ(cx.reordered, cy.reordered) << "stream " << s;
        EXPECT_EQ(cx.duplicates, cy.duplicates) << "stream " << s;
        EXPECT_EQ(cx.late, cy.late) << "stream " << s;
        EXPECT_EQ(cx.highest, cy.highest) << "stream " << s;
        EXPECT_EQ(x.seq.gaps(), y.seq.gaps()) << "stream " << s;
        EXPECT_EQ(x.jitter.ns(), y.jitter.ns()) << "stream " << s;
        EXPECT_EQ(x.jitter.last(), y.jitter.last()) << "stream " << s;
    }
    const auto& ha = a.result.latency;
    const auto& hb = b.result.latency;
    EXPECT_EQ(ha.count(), hb.count());
    EXPECT_EQ(ha.sum(), hb.sum());
    EXPECT_EQ(ha.min(), hb.min());
    EXPECT_EQ(ha.max(), hb.max());
    for (unsigned k = 0; k < stats::LatencyHistogram::kBuckets; ++k)
        ASSERT_EQ(ha.bucket_count(k), hb.bucket_count(k)) << "bucket " << k;
    ASSERT_EQ(a.result.stream_latency.size(), b.result.stream_latency.size());
    for (size_t s = 0; s < a.result.stream_latency.size(); ++s) {
        const auto& x = a.result.stream_latency[s];
        const auto& y = b.result.stream_latency[s];
        EXPECT_EQ(x.count(), y.count()) << "stream " << s;
        EXPECT_EQ(x.sum(), y.sum()) << "stream " << s;
        EXPECT_EQ(x.min(), y.min()) << "stream " << s;
        EXPECT_EQ(x.max(), y.max()) << "stream " << s;
        for (unsigned k = 0; k < stats::StreamLatency::kBuckets; ++k)
            ASSERT_EQ(x.bucket_count(k), y.bucket_count(k)) << "stream " << s << " bucket " << k;
    }
}

// What can happen to a frame on its way, each with its chance (per million frames).
struct Mishaps {
    uint32_t gap = 0, dup = 0, reorder = 0, bad_sum = 0, verified_bad_sum = 0, no_sum = 0, foreign = 0,
             other_size = 0, other_stream = 0, future = 0, huge_latency = 0, small_latency = 0;
};

// Every mishap at the same chance.
Mishaps every_mishap(uint32_t per_million) {
    Mishaps m;
    m.gap = m.dup = m.reorder = m.bad_sum = m.verified_bad_sum = m.no_sum = per_million;
    m.foreign = m.other_size = m.other_stream = m.future = m.huge_latency = m.small_latency = per_million;
    return m;
}

// `frames` frames in bursts of 1 to 32, of `flows` streams (each frame's stream drawn, or all of
// stream 0; round_robin: the streams in turn), starting at sequence `first_seq`, with latencies
// that move by up to `spread` ns.
std::vector<Burst> script(uint64_t seed, uint32_t frames, uint32_t flows, uint64_t first_seq, uint64_t spread,
                          const Mishaps& m, bool round_robin = false) {
    std::mt19937_64 rng(seed);
    auto chance = [&](uint32_t per_million) { return per_million && rng() % 1'000'000 < per_million; };
    const auto spec64 = wire_fixtures::spec(false, packet::L4::udp, 64);
    const auto spec65 = wire_fixtures::spec(false, packet::L4::udp, 65);
    std::vector<uint64_t> seq(flows + 1, first_seq);
    std::vector<Burst> bursts;
    uint64_t clock = (uint64_t{1} << 48) - 500'000;  // the 48-bit clock wraps during the run
    uint32_t made = 0;
    while (made < frames) {
        Burst b;
        clock += 1000 + rng() % 20'000;
        b.rx_ns = clock;
        const uint32_t n = std::min<uint32_t>(frames - made, 1 + static_cast<uint32_t>(rng() % 32));
        for (uint32_t i = 0; i < n; ++i) {
            uint16_t stream = flows > 1 ? static_cast<uint16_t>(round_robin ? (made + i) % flows : rng() % flows) : 0;
            if (chance(m.other_stream)) stream = static_cast<uint16_t>(flows);  // another flow
            const bool big = chance(m.other_size);
            const auto& sp = big ? spec65 : spec64;
            const uint32_t nonce = chance(m.foreign) ? wire_fixtures::kNonce ^ 0x10000 : wire_fixtures::kNonce;
            auto f = wire_fixtures::signed_frame(sp, stream, nonce);
            if (chance(m.gap)) seq[stream] += 1 + rng() % 5;
            uint64_t s = seq[stream]++;
            if (chance(m.dup) && s > 0) s -= 1;
            if (chance(m.reorder) && s > 3) s -= 3;
            uint64_t latency = 2000 + rng() % (spread + 1);
            if (chance(m.small_latency)) latency = rng() % 128;
            if (chance(m.huge_latency)) latency = (uint64_t{1} << 41) + rng() % 1000;  // beyond the histogram
            uint64_t ts = (clock - latency) & kMask48;
            if (chance(m.future)) ts = (clock + 1 + rng() % 1000) & kMask48;
            packet::sig_stamp(f.data(), packet::sig_layout(sp), s & kMask48, ts);
            bool verified = false;
            if (chance(m.bad_sum)) f[41] ^= 0x40;
            if (chance(m.verified_bad_sum)) {
                f[41] ^= 0x40;
                verified = true;
            }
            if (chance(m.no_sum)) f[40] = f[41] = 0;
            if (big) f.resize(61);  // a 65-byte frame, a byte longer than the lane's
            b.frames.push_back(std::move(f));
            b.verified.push_back(verified);
        }
        made += n;
        bursts.push_back(std::move(b));
    }
    return bursts;
}

// flows_at_least: of the frames the lane took, those account_flows8 took too.
void check(const std::vector<Burst>& bursts, uint32_t streams, uint64_t lane_at_least, bool mix = false,
           uint64_t flows_at_least = 0, uint32_t mix_streams = 0) {
    const auto with = receive(bursts, streams, true, mix, mix_streams);
    const auto without = receive(bursts, streams, false, mix, mix_streams);
    EXPECT_EQ(without->run_frames, 0u);
    expect_same(*with, *without);
    // Each burst taken a burst ahead: the same, down to every bucket.
    const auto ahead = receive(bursts, streams, true, mix, mix_streams, true);
    expect_same(*ahead, *without);
    EXPECT_EQ(ahead->run_frames, with->run_frames);
    EXPECT_GT(ahead->taken_ahead, bursts.size() / 2) << "too few bursts were taken ahead";
    if (stats::run_lane_supported()) {
        EXPECT_GE(with->run_frames, lane_at_least) << "the lane took too few of the frames";
        EXPECT_GE(with->flows_frames, flows_at_least) << "too few were accounted eight flows at a time";
    } else {
        EXPECT_EQ(with->run_frames, 0u);
    }
}

}  // namespace

TEST(RunLane, OneCleanStreamIsTakenEightAtATimeWithTheSameResults) {
    const auto bursts = script(1, 20'000, 1, 0, 300, {});
    check(bursts, 4, 15'000);
    const auto r = receive(bursts, 4, true);
    EXPECT_EQ(r->counters.rx_unique.load(), 20'000u);
    EXPECT_EQ(r->result.streams[0].seq.gaps(), 0u);
    EXPECT_EQ(r->result.latency.count(), 20'000u);
}

TEST(RunLane, SequencesAcrossWordsAnd48BitWrapAreTheSame) {
    check(script(2, 20'000, 1, (uint64_t{1} << 48) - 7'000, 50'000, {}), 4, 15'000);
}

TEST(RunLane, EveryMishapIsDeclinedToTheFrameByFramePathWithTheSameResults) {
    const Mishaps m = every_mishap(2'000);
    for (uint64_t seed = 10; seed < 16; ++seed) {
        SCOPED_TRACE(seed);
        check(script(seed, 30'000, 1, 100, 5'000, m), 4, 10'000);
    }
}

TEST(RunLane, FrequentMishapsAndSeveralFlowsGiveTheSameResults) {
    const Mishaps m = every_mishap(30'000);
    for (uint64_t seed = 20; seed < 24; ++seed) {
        SCOPED_TRACE(seed);
        check(script(seed, 20'000, 1, 0, 1'000'000, m), 4, 0);
        check(script(seed, 20'000, 3, 0, 1'000, m), 4, 0);
    }
}

TEST(RunLane, ADeviceCheckedChecksumIsNotSummedAgain) {
    Mishaps m;
    m.verified_bad_sum = 1'000'000;  // every frame's checksum wrong, and the device says it checked it
    const auto bursts = script(30, 4'000, 1, 0, 100, m);
    check(bursts, 4, 3'000);
    EXPECT_EQ(receive(bursts, 4, true)->counters.rx_unique.load(), 4'000u);
}

TEST(RunLane, ManyFlowsAreClassifiedEightAtATimeWithTheSameResults) {
    // More flows than the known-header lane keeps: the classifying lane, then frame by frame.
    const auto clean = script(40, 20'000, 40, 0, 3'000, {});
    check(clean, 64, 15'000);
    check(clean, 64, 15'000, true);  // a mix: each its own latency histogram
    const auto r = receive(clean, 64, true, true);
    EXPECT_EQ(r->counters.rx_unique.load(), 20'000u);
    EXPECT_EQ(r->result.latency.count(), 20'000u);
    const Mishaps m = every_mishap(3'000);
    for (uint64_t seed = 41; seed < 45; ++seed) {
        SCOPED_TRACE(seed);
        const auto bursts = script(seed, 20'000, 40, uint64_t{1} << 47, 100'000, m);
        check(bursts, 64, 5'000);
        check(bursts, 64, 5'000, true);
        check(bursts, 40, 0);  // the stream beyond the run's (40) is foreign
    }
}

TEST(RunLane, AFewFlowsInterleavedAreClassifiedEightAtATimeWithTheSameResults) {
    // Three flows in a random order: eight in a row are rarely of one flow, so the classifying
    // lane takes what the run lane declines.
    const auto bursts = script(50, 20'000, 3, 0, 3'000, {});
    check(bursts, 4, 15'000);
    const auto r = receive(bursts, 4, true);
    EXPECT_EQ(r->counters.rx_unique.load(), 20'000u);
    EXPECT_EQ(r->counters.rx_reordered.load(), 0u);
    // Eight flows in turn (as --flows 8 sends them): each eight of eight flows, accounted
    // together.
    check(script(51, 20'000, 8, 0, 3'000, {}, true), 8, 15'000, false, 15'000);
    check(script(52, 20'000, 8, 100, 100'000, every_mishap(2'000), true), 8, 5'000, false, 3'000);
}

TEST(RunLane, EqualLatenciesGoToTheHistogramAtOnceWithTheSameResults) {
    // Frames stamped in one sending burst and received in one have equal latencies: eight equal
    // ones are one add to their bucket, with the totals known (no lane reduced); eight in one
    // bucket but not equal, one add to the bucket. Both, and eight in several buckets, against
    // the frame-by-frame path: one latency for every frame, then two that alternate at random
    // (some eights equal, most not), one flow and eight flows at a time, with and without a mix.
    for (const uint64_t spread : {uint64_t{0}, uint64_t{1}, uint64_t{300}}) {
        SCOPED_TRACE(spread);
        check(script(70, 20'000, 1, 0, spread, {}), 4, 15'000);
        const auto flows = script(71, 20'000, 64, 0, spread, {}, true);
        check(flows, 64, 15'000, false, 15'000);
        check(flows, 64, 15'000, true, 15'000);
    }
    const auto r = receive(script(72, 8'000, 1, 0, 0, {}), 4, true);
    EXPECT_EQ(r->result.latency.count(), 8'000u);
    EXPECT_EQ(r->result.latency.min(), r->result.latency.max());
    EXPECT_EQ(r->result.latency.sum(), 8'000u * r->result.latency.min());
}

TEST(RunLane, EightFramesOfEightFlowsAreAccountedTogetherWithTheSameResults) {
    // 64 flows in turn: each eight of a burst are eight flows, each frame its flow's next, across
    // the sequence window's words (a flow's 64th frame starts a new one) and the 48-bit wrap.
    const auto clean = script(60, 40'000, 64, (uint64_t{1} << 48) - 300, 5'000, {}, true);
    check(clean, 64, 30'000, false, 30'000);
    check(clean, 64, 30'000, true, 30'000);      // a mix: each flow its own stream
    check(clean, 64, 30'000, true, 30'000, 5);   // a mix of 5 streams: runs of several flows in one
    const auto r = receive(clean, 64, true, true);
    EXPECT_EQ(r->counters.rx_unique.load(), 40'000u);
    EXPECT_EQ(r->counters.rx_reordered.load(), 0u);
    EXPECT_EQ(r->counters.rx_dup.load(), 0u);
    EXPECT_EQ(r->result.latency.count(), 40'000u);
    // Every mishap: the eight that have one go frame by frame, the others still together.
    const Mishaps m = every_mishap(1'000);
    for (uint64_t seed = 61; seed < 65; ++seed) {
        SCOPED_TRACE(seed);
        const auto bursts = script(seed, 40'000, 64, 0, 100'000, m, true);
        check(bursts, 64, 10'000, false, 5'000);
        check(bursts, 64, 10'000, true, 5'000);
        check(bursts, 64, 10'000, true, 5'000, 3);
    }
    // Latencies beyond a run's 32-bit extremes (LatencyRun::kWide ns and more) are declined.
    Mishaps wide;
    wide.huge_latency = 50'000;
    check(script(66, 20'000, 64, 0, 1'000, wide, true), 64, 1'000, true, 1'000);
}

namespace {

// `flows` flows in turn, all of one stream of a mix, `per_flow` frames each, in bursts of 32:
// each flow's latencies alternate between `a` and `b` ns, so that every frame ends its flow's
// latency run.
std::vector<Burst> alternating(uint32_t flows, uint32_t per_flow, uint64_t a, uint64_t b) {
    const auto sp = wire_fixtures::spec(false, packet::L4::udp, 64);
    std::vector<Burst> bursts;
    uint64_t clock = 1'000'000;
    const uint32_t frames = flows * per_flow;
    for (uint32_t made = 0; made < frames;) {
        Burst burst;
        burst.rx_ns = clock += 10'000;
        for (uint32_t i = 0; i < 32 && made < frames; ++i, ++made) {
            const uint32_t flow = made % flows, k = made / flows;
            auto f = wire_fixtures::signed_frame(sp, static_cast<uint16_t>(flow), wire_fixtures::kNonce);
            packet::sig_stamp(f.data(), packet::sig_layout(sp), k, (clock - (k % 2 ? b : a)) & kMask48);
            burst.frames.push_back(std::move(f));
            burst.verified.push_back(false);
        }
        bursts.push_back(std::move(burst));
    }
    return bursts;
}

}  // namespace

TEST(RunLane, AStreamsBucketCountersCarryPast16BitsIntoItsHistogram) {
    // 64 flows of one stream, 2,200 frames each, latencies 2 us and 4 us in turn: each of the two
    // buckets is ended into 70,400 times, beyond what the table's 16-bit counters hold. Through
    // the eight-flow lane (where the CPU has it) and frame by frame, the stream's histogram holds
    // every frame, in its bucket.
    const auto bursts = alternating(64, 2'200, 2'000, 4'000);
    for (const bool lane : {true, false}) {
        SCOPED_TRACE(lane);
        const auto r = receive(bursts, 64, lane, true, 1);
        const auto& h = r->result.stream_latency.at(0);
        EXPECT_EQ(h.count(), 140'800u);
        EXPECT_EQ(h.count_of(2'000), 70'400u);
        EXPECT_EQ(h.count_of(4'000), 70'400u);
        uint64_t in_buckets = 0;
        for (unsigned k = 0; k < stats::StreamLatency::kBuckets; ++k) in_buckets += h.bucket_count(k);
        EXPECT_EQ(in_buckets, 140'800u);
        if (lane && stats::run_lane_supported()) {
            EXPECT_GE(r->flows_frames, 130'000u);
        }
        // The table is left zero for the next trial.
        for (const uint16_t c : r->result.stream_buckets) ASSERT_EQ(c, 0u);
    }
}

TEST(RunLane, EightFlowsOfTheirOwnStreamsEndingRunsInOneBucketAreAddedSideBySide) {
    // 64 flows in turn, each a stream of its own, latencies 2 us and 4 us in turn: each eight
    // flows' frames end their runs, all in one bucket, and their eight counters lie side by side
    // (added in the lane). Against the frame-by-frame path, down to every bucket.
    check(alternating(64, 600, 2'000, 4'000), 64, 30'000, true, 30'000, 64);
    // 24 flows of their own streams (more than RxMeasure::kFetchFlowsAbove), 140,000 frames
    // each: each stream's two buckets are ended into 70,000 times, beyond the table's 16-bit
    // counters, which then go through the ended runs and spill into the stream's histogram.
    const auto bursts = alternating(24, 140'000, 2'000, 4'000);
    const auto with = receive(bursts, 24, true, true);
    const auto without = receive(bursts, 24, false, true);
    expect_same(*with, *without);
    for (uint32_t m = 0; m < 24; ++m) {
        SCOPED_TRACE(m);
        const auto& h = with->result.stream_latency.at(m);
        EXPECT_EQ(h.count(), 140'000u);
        EXPECT_EQ(h.count_of(2'000), 70'000u);
        EXPECT_EQ(h.count_of(4'000), 70'000u);
    }
    if (stats::run_lane_supported()) {
        EXPECT_GE(with->flows_frames, 3'000'000u);
    }
    for (const uint16_t c : with->result.stream_buckets) ASSERT_EQ(c, 0u);
}
