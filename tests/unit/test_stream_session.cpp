// Streams through a whole session on the in-memory backend: per-stream counts, bytes and
// sizes exact, the run's count and shares split exactly, bursts and chains, loss per stream.
#include <gtest/gtest.h>

#include <fmt/format.h>
#include <map>
#include <set>

#include "backend/loop/loop_backend.h"
#include "engine/session.h"
#include "report/metric_values.h"
#include "result/sink.h"
#include "spec/options.h"

using namespace lr;

namespace {

struct NoSink final : result::Sink {};

result::TrialResult run(spec::OptionValues o, const loop::LoopFaults& f = {}) {
    auto s = spec::build_run_spec(o);
    s.backend = spec::BackendKind::loop;
    s.interval_s = 0.05;
    s.drain_s = 0.5;
    engine::Session session(loop::make_loop_backend(f), s);
    NoSink sink;
    return session.run_trial(s.trial(), sink);
}

const result::StreamResult& named(const result::TrialResult& r, const std::string& name) {
    for (const auto& s : r.streams)
        if (s.name == name) return s;
    throw std::runtime_error("no stream " + name);
}

uint64_t sized(const std::vector<result::SizeCount>& v, unsigned size) {
    for (const auto& c : v)
        if (c.size == size) return c.frames;
    return 0;
}

}  // namespace

TEST(StreamSession, EachStreamsFramesBytesAndSizesAreExact) {
    const auto r = run({{"tx", {"a"}},
                        {"rx", {"b"}},
                        {"stream", {"name=mix,size=imix,count=12000", "name=voice,size=68,vlan=10,count=5000"}}});
    EXPECT_EQ(r.verdict, result::Verdict::pass) << r.verdict_reason;
    ASSERT_EQ(r.streams.size(), 2u);
    const auto& mix = named(r, "mix");
    EXPECT_EQ(mix.sent, 12000u);
    EXPECT_EQ(mix.received, 12000u);
    EXPECT_EQ(mix.lost, 0u);
    // IMIX is exact over every 12 frames: 1000 periods of 7 x 64, 4 x 570 and 1 x 1518 bytes.
    EXPECT_EQ(sized(mix.sizes, 64), 7000u);
    EXPECT_EQ(sized(mix.sizes, 570), 4000u);
    EXPECT_EQ(sized(mix.sizes, 1518), 1000u);
    EXPECT_EQ(mix.sent_bytes, 1000u * (7 * 64 + 4 * 570 + 1518));
    const auto& voice = named(r, "voice");
    EXPECT_EQ(voice.sent, 5000u);
    EXPECT_EQ(voice.received, 5000u);
    EXPECT_EQ(voice.sent_bytes, 5000u * 68);
    EXPECT_EQ(r.tx.bytes, mix.sent_bytes + voice.sent_bytes) << "the queue's byte count is the streams'";
    // The receiver counted every size as it arrived.
    EXPECT_EQ(sized(r.rx_sizes, 64), 7000u);
    EXPECT_EQ(sized(r.rx_sizes, 68), 5000u);
    EXPECT_EQ(sized(r.rx_sizes, 570), 4000u);
    EXPECT_EQ(sized(r.rx_sizes, 1518), 1000u);
    EXPECT_GT(mix.latency.count, 0u) << "latency per stream";
    EXPECT_GT(voice.latency.count, 0u) << "68 bytes with a VLAN tag: room for the timestamp";
    EXPECT_EQ(mix.latency.count + voice.latency.count, result::summarize(r.latency).count);
}

TEST(StreamSession, TheRunsCountIsSplitBySharesExactly) {
    const auto r = run({{"tx", {"a,queues=2"}},
                        {"rx", {"b,queues=2"}},
                        {"count", {"40001"}},
                        {"stream", {"share=25%", "share=75%,size=256"}}});
    EXPECT_EQ(r.verdict, result::Verdict::pass) << r.verdict_reason;
    ASSERT_EQ(r.streams.size(), 2u);
    EXPECT_EQ(r.streams[0].sent + r.streams[1].sent, 40001u);
    EXPECT_EQ(r.streams[0].sent, 10000u);
    EXPECT_EQ(r.streams[1].sent, 30001u);
    EXPECT_EQ(r.streams[0].received, r.streams[0].sent);
    EXPECT_EQ(r.streams[1].received, r.streams[1].sent);
    EXPECT_EQ(r.streams[1].flows, 2u) << "one flow per queue";
    EXPECT_EQ(r.flows.size(), 4u);
}

TEST(StreamSession, BurstsAndChainsSendExactlyWhatTheySay) {
    const auto r = run({{"tx", {"a"}},
                        {"rx", {"b"}},
                        {"duration", {"5s"}},
                        {"stream", {"name=first,count=1000,rate=20kpps",
                                    "name=bursts,bursts=3,burst-frames=100,burst-gap=20ms,after=first",
                                    "name=late,count=500,rate=10kpps,delay=50ms"}}});
    EXPECT_EQ(r.verdict, result::Verdict::pass) << r.verdict_reason;
    EXPECT_EQ(named(r, "first").sent, 1000u);
    EXPECT_EQ(named(r, "bursts").sent, 300u);
    EXPECT_EQ(named(r, "late").sent, 500u);
    for (const auto& s : r.streams) EXPECT_EQ(s.received, s.sent) << s.name;
    // Every stream ends: the TX phase ends with them, long before the 5 s duration.
    EXPECT_LT(r.tx_seconds, 2.0);
    EXPECT_GT(r.tx_seconds, 0.05 + 0.045) << "first alone takes 50 ms, then two 20 ms gaps";
}

TEST(StreamSession, LossIsCountedPerStream) {
    loop::LoopFaults f;
    f.drop_every = 7;  // odd: the two streams take turns on the wire, so both lose frames
    const auto r = run({{"tx", {"a"}}, {"rx", {"b"}}, {"stream", {"count=5000", "count=5000,size=128"}}}, f);
    ASSERT_EQ(r.streams.size(), 2u);
    EXPECT_EQ(r.streams[0].lost + r.streams[1].lost, 10000u / 7) << "every seventh frame on the wire";
    for (const auto& s : r.streams) {
        EXPECT_EQ(s.sent, 5000u);
        EXPECT_EQ(s.received + s.lost, s.sent) << s.name;
        EXPECT_GT(s.lost, 0u) << s.name;
    }
}

TEST(StreamSession, UnsignedStreamsAreCountedNotMeasured) {
    const auto r = run({{"tx", {"a"}}, {"rx", {"b"}}, {"no-signature", {"true"}}, {"stream", {"count=300", "count=700,size=100"}}});
    ASSERT_EQ(r.streams.size(), 2u);
    EXPECT_EQ(r.streams[0].sent, 300u);
    EXPECT_EQ(r.streams[1].sent, 700u);
    EXPECT_EQ(r.streams[1].sent_bytes, 70000u);
    EXPECT_FALSE(r.streams[0].measured);
    EXPECT_EQ(r.rx.packets, 1000u) << "the port counts them all";
}

namespace {

struct LiveSink final : result::Sink {
    std::vector<std::vector<result::StreamLive>> seen;
    void streams_live(const std::vector<result::StreamLive>& v) override { seen.push_back(v); }
};

}  // namespace

TEST(StreamSession, EachStreamsCountsAreSeenLiveEveryInterval) {
    auto s = spec::build_run_spec({{"tx", {"a"}},
                                   {"rx", {"b"}},
                                   {"stream", {"name=slow,rate=2kpps,count=1000", "name=fast,rate=8kpps,count=4000"}}});
    s.backend = spec::BackendKind::loop;
    s.interval_s = 0.05;
    s.settle_s = 0;
    engine::Session session(loop::make_loop_backend(), s);
    LiveSink sink;
    const auto r = session.run_trial(s.trial(), sink);
    ASSERT_GE(sink.seen.size(), 5u) << "an interval every 50 ms for 0.5 s";
    const auto& last = sink.seen.back();
    ASSERT_EQ(last.size(), 2u);
    EXPECT_EQ(last[0].name, "slow");
    // Counts grow, never past the final ones, and the streams keep their 1:4 rates on the way.
    for (size_t i = 1; i < sink.seen.size(); ++i)
        for (size_t k = 0; k < 2; ++k) EXPECT_GE(sink.seen[i][k].sent, sink.seen[i - 1][k].sent);
    EXPECT_LE(last[0].sent, 1000u);
    EXPECT_LE(last[1].sent, 4000u);
    EXPECT_LE(last[0].received, last[0].sent);
    const auto& mid = sink.seen[sink.seen.size() / 2];
    EXPECT_GT(mid[0].sent, 0u);
    EXPECT_NEAR(static_cast<double>(mid[1].sent) / static_cast<double>(mid[0].sent), 4.0, 0.5);
    EXPECT_EQ(r.streams[0].sent, 1000u);
    EXPECT_EQ(r.streams[1].sent, 4000u);
}

TEST(StreamSession, TheExporterNamesAtMostAHundredStreams) {
    std::vector<result::StreamLive> v;
    for (uint32_t i = 0; i < 150; ++i) {
        result::StreamLive s;
        s.index = i;
        s.name = fmt::format("s{}", i + 1);
        s.sent = 10;
        s.received = 9;
        s.gaps = 1;
        v.push_back(s);
    }
    const auto g = report::stream_values(v);
    std::set<std::string> names;
    double other_tx = 0;
    for (const auto& x : g) {
        names.insert(x.labels.at("stream"));
        if (x.labels.at("stream") == "other" && x.name == "linerate_stream_packets" && x.labels.at("direction") == "tx")
            other_tx = x.value;
    }
    EXPECT_EQ(names.size(), report::kMaxStreamSeries + 1) << "100 by name, then other";
    EXPECT_EQ(other_tx, 50 * 10) << "the other 50 streams added up";
}
