// Streams: their definitions (--stream, [[stream]], sizes), the rates and counts a trial gives
// them, and the scheduler that interleaves them on a queue.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <set>

#include "engine/program_builder.h"
#include "frame_checks.h"
#include "packet/signature.h"
#include "spec/options.h"
#include "spec/profile.h"
#include "spec/size_spec.h"
#include "spec/stream_rates.h"
#include "usage_error.h"
#include "util/avx512.h"
#include "worker/frame_composer.h"
#include "worker/stream_scheduler.h"
#include "scheduler_program.h"

using namespace lr;

namespace {

template <class F>
void expect_usage(F&& f, const std::string& needle) {
    const auto msg = test_support::usage_error(f);
    EXPECT_NE(msg.find(needle), std::string::npos) << "message was: " << msg << "\nexpected to contain: " << needle;
}

spec::RunSpec streams_spec(std::vector<std::string> streams, spec::OptionValues extra = {}) {
    spec::OptionValues o = {{"tx", {"a"}}, {"rx", {"b"}}, {"stream", streams}};
    for (auto& [k, v] : extra) o[k] = v;
    return spec::build_run_spec(o);
}

}  // namespace

TEST(SizeSpec, PredefinedAndCustomDistributionsAreExactPerPeriodInAShuffledOrder) {
    const auto imix = spec::parse_size_spec("imix", "--size");
    EXPECT_EQ(imix.sizes(), (std::vector<unsigned>{64, 570, 1518}));
    EXPECT_EQ(imix.period_counts(), (std::vector<uint64_t>{7, 4, 1}));
    EXPECT_NEAR(imix.mean(), (7 * 64 + 4 * 570 + 1518) / 12.0, 1e-9);
    const auto p = imix.period(1);
    ASSERT_EQ(p.size(), 12u);
    std::map<uint16_t, int> n;
    for (auto i : p) ++n[i];
    EXPECT_EQ(n[0], 7);
    EXPECT_EQ(n[1], 4);
    EXPECT_EQ(n[2], 1);
    EXPECT_NE(p, (std::vector<uint16_t>{0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 2})) << "shuffled, not in trains";
    EXPECT_EQ(p, imix.period(1)) << "the same seed, the same order";
    EXPECT_NE(p, imix.period(2));
    // OTG's two-decimal weights: a period of 10000 frames, exact.
    const auto ipsec = spec::parse_size_spec("ipsec-imix", "--size");
    EXPECT_EQ(ipsec.period_counts(), (std::vector<uint64_t>{5867, 200, 2366, 1567}));
    EXPECT_EQ(ipsec.period(7).size(), 10000u);
    // A weight too small for a hundredth (once a division by zero building the period).
    expect_usage([] { spec::parse_size_spec("694:.000000001489455265", "--size"); }, "at least 0.01");
    const auto custom = spec::parse_size_spec("128:2/256:6", "--size");
    EXPECT_EQ(custom.period_counts(), (std::vector<uint64_t>{1, 3}));
    EXPECT_EQ(custom.str(), "128:2/256:6");
    const auto inc = spec::parse_size_spec("64:80:+8", "--size");
    EXPECT_EQ(inc.sizes(), (std::vector<unsigned>{64, 72, 80}));
    EXPECT_EQ(inc.period(3), (std::vector<uint16_t>{0, 1, 2})) << "an increment goes up in order";
    const auto rnd = spec::parse_size_spec("64..127", "--size");
    EXPECT_EQ(rnd.kind, spec::SizeSpec::Kind::random);
    EXPECT_EQ(rnd.sizes().size(), 64u);
    EXPECT_TRUE(rnd.period(1).empty());
}

TEST(SizeSpec, BadSizesAreRefusedQuotingTheValue) {
    expect_usage([] { spec::parse_size_spec("64:7/63:1", "--size"); }, "invalid --size \"64:7/63:1\": the size \"63\"");
    expect_usage([] { spec::parse_size_spec("64:0", "--size"); }, "the weight \"0\": expected a number above 0");
    expect_usage([] { spec::parse_size_spec("64:1.234", "--size"); }, "at most two decimals");
    expect_usage([] { spec::parse_size_spec("64:1/64:2", "--size"); }, "the size 64 is given twice");
    expect_usage([] { spec::parse_size_spec("128:64:+1", "--size"); }, "an increment needs LO below HI");
    expect_usage([] { spec::parse_size_spec("64:128:+0", "--size"); }, "the step \"0\"");
    expect_usage([] { spec::parse_size_spec("200..100", "--size"); }, "a random range needs LO below HI");
    expect_usage([] { spec::parse_size_spec("64:999999.99/65:0.01", "--size"); }, "use smaller whole numbers");
}

TEST(SizeSpec, PredefinedSizesBelowTheFrameKindAreRaisedWithANote) {
    const auto r = spec::build_run_spec({{"tx", {"a"}}, {"size", {"ipv6-imix"}}, {"ipv6", {"true"}}});
    EXPECT_EQ(r.size.smallest(), 66u);
    EXPECT_EQ(r.frame.frame_size, 66u);
    ASSERT_EQ(r.notes.size(), 1u);
    EXPECT_NE(r.notes[0].find("ipv6-imix: its 60 byte frames are sent as 66 bytes"), std::string::npos) << r.notes[0];
    // standard-imix's 58 and 62 both become 64 for IPv4: their weights add up.
    const auto s = spec::build_run_spec({{"tx", {"a"}}, {"size", {"standard-imix"}}});
    EXPECT_EQ(s.size.sizes(), (std::vector<unsigned>{64, 594, 1518}));
    EXPECT_EQ(s.size.period_counts(), (std::vector<uint64_t>{6067, 2366, 1567}));
    // A custom size below the kind's smallest is refused.
    expect_usage([] { spec::build_run_spec({{"tx", {"a"}}, {"size", {"64:1/128:1"}}, {"ipv6", {"true"}}}); },
                 "minimum is 66");
}

TEST(StreamSpec, KeysAreTheOptionsAndTheCommandLinesFrameOptionsAreTheDefaults) {
    const auto s = streams_spec({"size=imix,rate=40%,vlan=10", "name=voice,rate=1kpps,dst-port=5060,vary=src-ip,dst-port"},
                                {{"src-port", {"7000"}}, {"line-rate", {"10G"}}});
    ASSERT_EQ(s.streams.size(), 2u);
    EXPECT_EQ(s.streams[0].name, "s1");
    EXPECT_EQ(s.streams[0].size.str(), "imix");
    EXPECT_EQ(s.streams[0].frame.vlan, 10);
    EXPECT_EQ(s.streams[0].frame.src_port, 7000) << "the command line's frame options are every stream's defaults";
    ASSERT_TRUE(s.streams[0].rate.has_value());
    EXPECT_EQ(s.streams[0].rate->unit, spec::RateSpec::Unit::percent);
    EXPECT_EQ(s.streams[1].name, "voice");
    EXPECT_EQ(s.streams[1].frame.dst_port, 5060);
    EXPECT_FALSE(s.streams[1].frame.vlan.has_value());
    EXPECT_EQ(s.streams[1].vary, unsigned(flow::vary_src_ip | flow::vary_dst_port)) << "a list value takes commas";
    EXPECT_EQ(s.mix_flows(), 2u) << "one flow per queue each";
    // Without --stream, the options describe the one stream.
    const auto one = spec::build_run_spec({{"tx", {"a"}}, {"rx", {"b"}}, {"size", {"imix"}}});
    ASSERT_EQ(one.mix().size(), 1u);
    EXPECT_EQ(one.mix()[0].size.str(), "imix");
    EXPECT_FALSE(one.single_fixed_stream());
    EXPECT_TRUE(spec::build_run_spec({{"tx", {"a"}}}).single_fixed_stream());
}

TEST(StreamSpec, BadDefinitionsAreRefusedWithTheStreamsText) {
    const auto bad = [](std::vector<std::string> st, const std::string& needle, spec::OptionValues extra = {}) {
        expect_usage([&] { streams_spec(st, extra); }, needle);
    };
    bad({"size=imix,colour=red"}, "--stream size=imix,colour=red: unknown key \"colour\" (stream keys: ");
    bad({"size=9001"}, "--stream size=9001: invalid --size \"9001\": must be between 64 and 9000");
    bad({"rate=1k,share=50%"}, "rate= and share=: give one of them");
    bad({"share=60%", "share=50%"}, "the streams' shares add up to 110 %");
    bad({"count=10,bursts=2,burst-frames=5"}, "count= and bursts=");
    bad({"bursts=2"}, "bursts= needs burst-frames=N");
    bad({"burst-gap=1ms"}, "burst-frames= and burst-gap= go with bursts=B");
    bad({"name=a,count=5", "after=b"}, "after=b: no stream has that name");
    bad({"name=a", "name=b,after=a"}, "after=a: a never ends (give it count= or bursts=)");
    bad({"name=a,count=5,after=b", "name=b,count=5,after=a"}, "the streams wait for each other in a circle");
    bad({"name=a", "name=a"}, "a second stream named a");
    bad({"port=c"}, "port=c: not a --tx port of this run");
    bad({"pcap=x.pcap,size=64"}, "size= does not apply to a pcap stream");
    bad({"speed=2"}, "speed= and loops= go with pcap=FILE");
    bad({"name=bad name"}, "a name of 1 to 64 letters");
    bad({"rate=2000G"}, "--stream rate=2000G: rate 2000G asks", {{"line-rate", {"10G"}}});
    bad({"rate=6Gbps", "rate=6Gbps"}, "the streams' rates add up to 12 Gbit/s at L1, more than the 10 Gbit/s line rate",
        {{"line-rate", {"10G"}}});
    bad({"pattern=poisson"}, "stream s1: --pattern poisson spaces departures at a --rate");
}

TEST(StreamSpec, ProfileStreamsNameTheirFileLineAndColumn) {
    const auto p = spec::parse_profile("[ports]\ntx = [\"a\"]\nrx = [\"b\"]\n\n[[stream]]\nname = \"bulk\"\nsize = "
                                       "\"imix\"\n\n[[stream]]\nname = \"voice\"\nrate = \"1kpps\"\nvlan = 10\n",
                                       "mix.toml");
    ASSERT_EQ(p.streams.size(), 2u);
    const auto s = spec::build_profile_spec(p, {});
    ASSERT_EQ(s.streams.size(), 2u);
    EXPECT_EQ(s.streams[1].name, "voice");
    EXPECT_EQ(s.streams[1].frame.vlan, 10);
    const auto q = spec::parse_profile("[ports]\ntx = [\"a\"]\n\n[[stream]]\nsize = \"imix\"\nflavour = 3\n", "bad.toml");
    expect_usage([&] { spec::build_profile_spec(q, {}); }, "bad.toml:6:11: unknown key \"flavour\"");
    const auto r = spec::parse_profile("[ports]\ntx = [\"a\"]\n\n[[stream]]\nsize = 63\n", "small.toml");
    expect_usage([&] { spec::build_profile_spec(r, {}); }, "small.toml:5:8: invalid --size \"63\"");
    expect_usage([] { spec::parse_profile("[[flows]]\na = 1\n", "t.toml"); }, "the only array of tables a profile has is [[stream]]");
}

TEST(StreamRates, SharesOfTheRunsRateCountsAndBitRatesAtTheMeanSize) {
    // Shares of --rate in packets: 25 % and the rest.
    auto s = streams_spec({"share=25%", "size=128"}, {{"rate", {"100kpps"}}, {"count", {"1001"}}});
    auto r = spec::stream_rates(s, 0);
    EXPECT_DOUBLE_EQ(r[0].pps, 25000);
    EXPECT_DOUBLE_EQ(r[1].pps, 75000);
    ASSERT_TRUE(r[0].count && r[1].count);
    EXPECT_EQ(*r[0].count + *r[1].count, 1001u) << "the run's count split exactly";
    EXPECT_EQ(*r[0].count, 250u);
    // A stream's own bit rate counts frames of its mean size (IMIX: 353.83 bytes, L1 adds 20).
    s = streams_spec({"size=imix,rate=1Gbps"});
    r = spec::stream_rates(s, 0);
    EXPECT_NEAR(r[0].pps, 1e9 / ((353.8333333 + 20) * 8), 1e-3);
    // --rate max: the shares are weights of what the device takes.
    s = streams_spec({"share=20%", "share=80%"});
    r = spec::stream_rates(s, 0);
    EXPECT_EQ(r[0].pps, 0);
    EXPECT_DOUBLE_EQ(r[0].weight, 0.2);
    EXPECT_DOUBLE_EQ(r[1].weight, 0.8);
    s = streams_spec({"rate=1kpps", "name=bulk"}, {{"count", {"100"}}});
    expect_usage([&] { spec::stream_rates(s, 0); }, "give each stream a count= of its own");
}

using Prog = test_support::SchedulerProgram;
using test_support::due_frames;


TEST(StreamScheduler, UnpacedSharesTakeExactlyTheirWeightEveryPeriodWithoutTrains) {
    Prog g;
    g.add(0).weight = 0.25;
    g.add(1).weight = 0.75;
    worker::StreamScheduler s(g.p, 64);
    s.start(0);
    const auto f = due_frames(s, 0, 400);
    ASSERT_EQ(f.size(), 400u);
    int n0 = 0, run = 0, longest = 0;
    for (size_t i = 0; i < f.size(); ++i) {
        n0 += f[i].share == 0;
        run = i && f[i].share == f[i - 1].share ? run + 1 : 1;
        longest = std::max(longest, run);
        if (i % 4 == 3) {
            EXPECT_EQ(n0, int(i + 1) / 4) << "exact over every period of 4, at frame " << i;
        }
    }
    EXPECT_LE(longest, 3) << "spread over the period";
    EXPECT_EQ(s.planned(0), 100u);
    EXPECT_FALSE(s.done()) << "continuous shares never end";
}

TEST(StreamScheduler, ManySharesEachTakeTheirTurnOnceAPeriodAcrossBursts) {
    // Enough shares for the scheduler to fetch a share's state turns ahead of its own
    // (StreamScheduler::kFetchSharesAbove): the round robin, its wrap and the turns ahead of it
    // must not change which frames go.
    constexpr uint32_t kShares = 100, kPeriods = 7;
    Prog g;
    g.p.progress = std::make_shared<std::vector<worker::StreamProgress>>(kShares);
    for (uint32_t i = 0; i < kShares; ++i) g.add(i);
    worker::StreamScheduler s(g.p, 64);
    s.start(0);
    std::vector<worker::PlannedFrame> f;
    while (f.size() < kShares * kPeriods) {  // bursts of 64 and of 13: turns cross their edges
        const auto b = due_frames(s, 0, f.size() % 2 ? 13 : 64);
        ASSERT_FALSE(b.empty());
        f.insert(f.end(), b.begin(), b.end());
    }
    f.resize(kShares * kPeriods);
    for (size_t i = kShares; i < f.size(); ++i) {
        EXPECT_EQ(f[i].share, f[i - kShares].share) << "frame " << i << ": the same order every period";
    }
    std::vector<int> seen(kShares, 0);
    for (size_t i = 0; i < kShares; ++i) ++seen[f[i].share];
    EXPECT_EQ(std::count(seen.begin(), seen.end(), 1), int(kShares)) << "every share once a period";
}

TEST(StreamScheduler, TheCycleGivesTheRoundRobinsFramesAndCounts) {
    // Shares that send one template forever are planned by copying stretches of the round
    // robin's cycle, and counted from it. The same shares with a count too large to reach go
    // the frame-by-frame way: both plan the same frames and count the same across uneven
    // bursts and a share that starts late (a new cycle).
    auto shares = [](bool counted) {
        Prog g;
        const double weights[] = {0.2, 0.5, 0.3, 0.1};
        for (uint32_t i = 0; i < 4; ++i) {
            auto& d = g.add(i);
            d.weight = weights[i];
            if (counted) d.count = uint64_t{1} << 40;
        }
        g.p.shares[3].delay_ns = 2'000;
        return g;
    };
    Prog gc = shares(false), gr = shares(true);
    worker::StreamScheduler cyc(gc.p, 64), ref(gr.p, 64);
    cyc.start(0);
    ref.start(0);
    EXPECT_TRUE(cyc.cycling());
    EXPECT_FALSE(ref.cycling()) << "counted shares go frame by frame";
    worker::PlannedFrame a[64], b[64];
    std::vector<uint64_t> kept(4, 0);  // frames planned and not taken back, per share
    auto check_counts = [&](uint32_t burst) {
        for (uint32_t s = 0; s < 4; ++s) {
            ASSERT_EQ(cyc.planned(s), kept[s]) << "share " << s << " after burst " << burst;
            ASSERT_EQ(cyc.planned_flow(s, 0), kept[s]);
            ASSERT_EQ(cyc.planned_size(s, 0), kept[s]);
        }
    };
    uint32_t burst = 0;
    for (; burst < 500; ++burst) {
        const uint32_t room = 1 + burst * 37 % 64;
        uint32_t n = 0;
        // As the engine asks: a burst of the cycle is read where it lies, across the period's end too.
        const worker::PlannedFrame* f = cyc.plan(burst * 10, room, a, n);
        ASSERT_EQ(ref.next(burst * 10, room, b), n);
        if (cyc.cycling()) {
            ASSERT_NE(f, a) << "burst " << burst << ": a stretch of the cycle is not copied";
        }
        for (uint32_t i = 0; i < n; ++i) {
            ASSERT_EQ(f[i].share, b[i].share) << "burst " << burst << " frame " << i;
            ASSERT_EQ(f[i].tmpl, b[i].tmpl);
            ASSERT_EQ(f[i].len, b[i].len);
            ++kept[f[i].share];
        }
        for (uint32_t s = 0; s < 4; ++s) ASSERT_EQ(cyc.planned(s), ref.planned(s)) << "share " << s << ", burst " << burst;
        check_counts(burst);
    }
    EXPECT_TRUE(cyc.cycling()) << "the late share joined a new cycle";
    EXPECT_GT(kept[3], 0u);
    // Frames the device did not take are the next burst's first, in the same order, and
    // leave the counts as if never planned.
    for (; burst < 1500; ++burst) {
        const uint32_t room = 1 + burst * 37 % 64;
        uint32_t n = 0;
        const worker::PlannedFrame* f = cyc.plan(burst * 10, room, a, n);
        ASSERT_EQ(n, room);
        const uint32_t back = burst % 3 == 0 ? burst % (n + 1) : 0;
        std::vector<worker::PlannedFrame> again(f + n - back, f + n);
        for (uint32_t i = 0; i < n - back; ++i) ++kept[f[i].share];
        cyc.unplan(f + n - back, back);
        check_counts(burst);
        if (!back) continue;
        ++burst;
        const uint32_t m = cyc.next(burst * 10, 64, a);
        ASSERT_EQ(m, 64u);
        for (uint32_t i = 0; i < back; ++i) {
            ASSERT_EQ(a[i].share, again[i].share) << "burst " << burst << ": frame " << i << " taken back goes first";
            ASSERT_EQ(a[i].tmpl, again[i].tmpl);
        }
        for (uint32_t i = 0; i < m; ++i) ++kept[a[i].share];
        check_counts(burst);
    }
    EXPECT_TRUE(cyc.cycling());
}

TEST(StreamScheduler, CountsEndSharesAndSizesFollowThePeriod) {
    Prog g;
    auto& a = g.add(0, 2);
    a.weight = 0.5;
    a.count = 30;
    a.sizes = {64, 570, 1518};
    a.size_row = {0, 0, 0};
    a.period = spec::parse_size_spec("imix", "--size").period(1);
    // Two flows: templates per row x flow; one row here.
    g.add(1).weight = 0.5;
    g.p.shares[1].count = 10;
    worker::StreamScheduler s(g.p, 64);
    s.start(0);
    const auto f = due_frames(s, 0, 100);
    EXPECT_EQ(f.size(), 40u) << "both shares ended: nothing more";
    EXPECT_TRUE(s.done());
    uint64_t sizes = s.planned_size(0, 0) + s.planned_size(0, 1) + s.planned_size(0, 2);
    EXPECT_EQ(sizes, 30u);
    EXPECT_EQ(s.planned_flow(0, 0), 15u) << "flows take turns";
    EXPECT_EQ(s.planned_flow(0, 1), 15u);
    // Two whole periods (24 frames) hold exactly 14, 8 and 2; the other 6 frames are the next period's start.
    std::map<uint16_t, int> first24;
    int k = 0;
    for (const auto& x : f) {
        if (x.share == 0 && k++ < 24) ++first24[x.size_idx];
    }
    EXPECT_EQ(first24[0], 14);
    EXPECT_EQ(first24[1], 8);
    EXPECT_EQ(first24[2], 2);
    std::vector<uint32_t> done;
    s.for_each_newly_done([&](uint32_t x) { done.push_back(x); });
    EXPECT_EQ(done.size(), 2u);
}

TEST(StreamScheduler, PacedSharesKeepTheirOwnRatesAndBurstsTheirGaps) {
    Prog g;
    auto& a = g.add(0);
    a.pacing.pps = 1000;  // 1 ms apart
    auto& b = g.add(1);
    b.pacing.pps = 3000;
    b.burst_frames = 3;
    b.count = 6;
    b.burst_gap_ns = 10'000'000;
    worker::StreamScheduler s(g.p, 64);
    s.start(0);
    std::map<uint32_t, int> n;
    for (uint64_t t = 0; t <= 100'000'000; t += 100'000)  // 100 ms in 0.1 ms steps
        for (const auto& x : due_frames(s, t, 64)) ++n[x.share];
    EXPECT_NEAR(n[0], 100, 1) << "1000 pps for 100 ms";
    EXPECT_EQ(n[1], 6) << "two bursts of three, then done";
    EXPECT_FALSE(s.done()) << "share 0 runs on";
    // The second burst waited out the gap: planned per time shows it.
    Prog h;
    auto& c = h.add(0);
    c.burst_frames = 2;
    c.count = 4;
    c.burst_gap_ns = 5'000'000;
    c.weight = 1;
    worker::StreamScheduler u(h.p, 64);
    u.start(0);
    EXPECT_EQ(due_frames(u, 0, 64).size(), 2u) << "the first burst, unpaced";
    EXPECT_EQ(due_frames(u, 4'000'000, 64).size(), 0u) << "in the gap";
    EXPECT_EQ(u.next_due(4'000'000), 5'000'000u);
    EXPECT_EQ(due_frames(u, 5'000'000, 64).size(), 2u) << "the second burst";
    EXPECT_TRUE(u.done());
}

TEST(StreamScheduler, DelaysAndChainsStartSharesInOrder) {
    Prog g;
    auto& a = g.add(0);
    a.weight = 1;
    a.count = 5;
    auto& b = g.add(1);
    b.weight = 1;
    b.count = 5;
    b.after = 0;
    auto& c = g.add(2);
    c.weight = 1;
    c.count = 5;
    c.delay_ns = 2'000'000;
    worker::StreamScheduler s(g.p, 64);
    s.start(0);
    auto f = due_frames(s, 0, 64);
    ASSERT_EQ(f.size(), 5u) << "only a: b waits for it, c for its delay";
    for (const auto& x : f) EXPECT_EQ(x.share, 0u);
    s.for_each_newly_done([&](uint32_t x) { (*g.p.progress)[g.p.shares[x].stream].done_shares.fetch_add(1); });
    f = due_frames(s, 1'000'000, 64);
    ASSERT_EQ(f.size(), 5u) << "a is done on every queue: b starts";
    for (const auto& x : f) EXPECT_EQ(x.share, 1u);
    f = due_frames(s, 2'000'000, 64);
    ASSERT_EQ(f.size(), 5u) << "c at its delay";
    for (const auto& x : f) EXPECT_EQ(x.share, 2u);
    EXPECT_TRUE(s.done());
}

TEST(StreamScheduler, FramesTheDeviceCouldNotTakeAreSentLaterWithTheirSizesAndFlows) {
    Prog g;
    auto& a = g.add(0, 3);
    a.weight = 1;
    a.count = 10;
    a.sizes = {64, 128};
    a.size_row = {0, 0};
    a.period = {0, 1};
    worker::StreamScheduler s(g.p, 64);
    s.start(0);
    auto f = due_frames(s, 0, 8);
    ASSERT_EQ(f.size(), 8u);
    s.unplan(f.data() + 5, 3);  // the device took five
    EXPECT_EQ(s.planned(0), 5u);
    const auto rest = due_frames(s, 0, 64);
    ASSERT_EQ(rest.size(), 5u) << "the count is kept: five more";
    EXPECT_EQ(rest[0].tmpl, f[5].tmpl) << "the same flow and size as the frame taken back";
    EXPECT_EQ(rest[0].size_idx, f[5].size_idx);
    EXPECT_EQ(s.planned_size(0, 0), 5u);
    EXPECT_EQ(s.planned_size(0, 1), 5u);
    EXPECT_TRUE(s.done());
}

TEST(StreamScheduler, FlowsTakeTurnsWhetherOrNotTheirTemplatesAreConsecutive) {
    // Share 0: three flows whose templates follow each other (each frame's is the first plus
    // its flow); share 1: two flows whose templates do not (each looked up in the share's row).
    Prog g;
    auto& a = g.add(0, 3);
    a.weight = 0.5;
    a.sizes = {128};
    g.add(1, 2).weight = 0.5;
    std::swap(g.p.shares[1].templates[0], g.p.shares[1].templates[1]);
    const std::vector<uint32_t> t0 = g.p.shares[0].templates, t1 = g.p.shares[1].templates;
    worker::StreamScheduler s(g.p, 64);
    s.start(0);
    auto f = due_frames(s, 0, 24);
    ASSERT_EQ(f.size(), 24u);
    s.unplan(f.data() + 20, 4);  // the device took 20: the last four go again, in order
    const auto again = due_frames(s, 0, 4);
    ASSERT_EQ(again.size(), 4u);
    std::copy(again.begin(), again.end(), f.begin() + 20);
    uint32_t n[2] = {0, 0};
    for (size_t i = 0; i < f.size(); ++i) {
        const uint32_t sh = f[i].share, k = n[sh]++;
        const uint32_t want = sh == 0 ? t0[k % 3] : t1[k % 2];
        EXPECT_EQ(f[i].tmpl, want) << "frame " << i << ", share " << sh;
        EXPECT_EQ(f[i].len, sh == 0 ? 124 : 60) << "its size without FCS";
        EXPECT_EQ(f[i].size_idx, 0u);
    }
    EXPECT_EQ(n[0], 12u);
    EXPECT_EQ(s.planned_flow(0, 2), 4u);
    EXPECT_EQ(s.planned_flow(1, 1), 6u);
}

TEST(StreamScheduler, EndlessBurstsKeepTheirGapsAndNeverEnd) {
    // Bursts of 2 frames, 5 ms apart, with no count: burst after burst until the trial ends.
    Prog g;
    auto& c = g.add(0);
    c.burst_frames = 2;
    c.burst_gap_ns = 5'000'000;
    c.weight = 1;
    worker::StreamScheduler s(g.p, 64);
    s.start(0);
    for (uint64_t burst = 0; burst < 100; ++burst) {
        const uint64_t t = burst * 5'000'000;
        EXPECT_EQ(due_frames(s, t, 64).size(), 2u) << "burst " << burst;
        EXPECT_EQ(due_frames(s, t + 4'000'000, 64).size(), 0u) << "in the gap after burst " << burst;
        EXPECT_EQ(s.next_due(t + 4'000'000), t + 5'000'000);
        EXPECT_FALSE(s.done());
    }
    EXPECT_EQ(s.planned(0), 200u);
    std::vector<uint32_t> done;
    s.for_each_newly_done([&](uint32_t x) { done.push_back(x); });
    EXPECT_TRUE(done.empty()) << "it never ends";
}

TEST(StreamPrograms, EndlessBurstsArePacedBurstsWithoutACount) {
    auto spec = streams_spec({"size=128,rate=1kpps"});
    auto& st = spec.streams[0];
    st.endless_bursts = true;
    st.burst_frames = 4;
    st.burst_gap_s = 0.010;
    spec.validate();
    EXPECT_FALSE(st.ends());
    const auto progs = engine::build_programs(spec, {{"a", 0}});
    const auto& sh = progs.queues[0]->shares.at(0);
    EXPECT_EQ(sh.count, 0u) << "no count: until the trial ends";
    EXPECT_EQ(sh.burst_frames, 4u);
    EXPECT_EQ(sh.burst_gap_ns, 10'000'000u);
    // Paced at 1 kpps: 4 frames 1 ms apart, then the 10 ms gap, again and again.
    worker::StreamScheduler s(*progs.queues[0], 64);
    s.start(0);
    std::vector<uint64_t> at;
    for (uint64_t t = 0; t <= 1'000'000'000; t += 100'000)
        for (size_t k = due_frames(s, t, 64).size(); k > 0; --k) at.push_back(t);
    EXPECT_FALSE(s.done());
    ASSERT_GT(at.size(), 200u) << "a second of bursts";
    size_t in_burst = 1;
    for (size_t i = 1; i < at.size(); ++i) {
        if (at[i] - at[i - 1] >= 10'000'000) {
            EXPECT_EQ(in_burst, 4u) << "frame " << i;
            in_burst = 1;
        } else {
            ++in_burst;
        }
    }
    // Given with a count, or without frames per burst, it is refused.
    st.count = 100;
    expect_usage([&] { spec.validate(); }, "endless bursts need burst frames");
}

TEST(StreamPrograms, FlowFramesAreTheStreamsFlowsInOrder) {
    auto spec = streams_spec({"size=128"});
    auto& st = spec.streams[0];
    for (uint16_t i = 0; i < 3; ++i) {
        auto f = st.frame;
        f.src_port = static_cast<uint16_t>(5000 + 2 * i);
        f.dst_ip = packet::parse_ip(i == 1 ? "198.18.0.9" : "198.18.0.2", "dst");
        f.tos = static_cast<uint8_t>(i << 2);
        st.flow_frames.push_back(f);
    }
    spec.validate();
    EXPECT_EQ(spec.stream_flows(st), 3u);
    EXPECT_EQ(spec.mix_flows(), 3u);
    const auto progs = engine::build_programs(spec, {{"a", 0}});
    const auto& p = *progs.queues[0];
    const auto& sh = p.shares.at(0);
    ASSERT_EQ(sh.flows, 3u);
    ASSERT_EQ(sh.templates.size(), 3u) << "one size: a row of a template per flow";
    for (uint16_t i = 0; i < 3; ++i) {
        const auto& t = p.templates[sh.templates[i]];
        const auto& b = t.bytes;
        EXPECT_EQ(t.sig_id, i);
        EXPECT_EQ(b[15], i << 2) << "flow " << i << ": its TOS";
        EXPECT_EQ(b[33], i == 1 ? 9 : 2) << "flow " << i << ": its destination";
        EXPECT_EQ(b[34] << 8 | b[35], 5000 + 2 * i) << "flow " << i << ": its source port";
        const std::vector<uint8_t> frame(b.begin(), b.begin() + t.len);
        test_support::expect_checksums_verify(frame, false);
        EXPECT_EQ(packet::sig_classify(frame.data(), frame.size(), spec.nonce, spec.rx_streams()).stream, i);
    }
    // Flows of another frame kind than the stream's frame are refused.
    st.flow_frames[1].l4 = packet::L4::tcp;
    expect_usage([&] { spec.validate(); }, "stream s1: flow 1 is IPv4/TCP but the stream's frame is IPv4/UDP");
}

TEST(StreamSpec, NamesBuiltByCodeMayBeAnyPrintableText) {
    auto spec = streams_spec({"size=128", "size=256"});
    spec.streams[0].name = "flow p1->p2";
    spec.streams[1].name = "débit \"max\", 100 %";
    spec.validate();
    spec.streams[1].name = std::string(256, 'x');
    spec.validate();
    spec.streams[1].name = std::string(257, 'x');
    expect_usage([&] { spec.validate(); }, "a name of 257 bytes is too long (at most 256)");
    spec.streams[1].name = "tab\there";
    expect_usage([&] { spec.validate(); }, "control character (U+0009)");
    spec.streams[1].name = "bad \xc3";
    expect_usage([&] { spec.validate(); }, "not valid UTF-8");
    spec.streams[1].name.clear();
    expect_usage([&] { spec.validate(); }, "a stream needs a name");
    // Tables show a name's first 16 bytes, never half a character.
    EXPECT_EQ(spec::name_prefix("flow p1->p2", 16), "flow p1->p2");
    EXPECT_EQ(spec::name_prefix("0123456789abcdeé", 16), "0123456789abcde");
    EXPECT_EQ(spec::name_prefix("0123456789abcdef+", 16), "0123456789abcdef");
}

namespace {

// Every frame the composer writes for a trial of `spec` (one sending queue), `n` frames of it,
// in buffers that start filled with `held` and are reused as a device's would be.
struct Written {
    std::vector<std::vector<uint8_t>> frames;
    std::vector<worker::PlannedFrame> plan;
    engine::TxPrograms progs;
};
Written compose(const spec::RunSpec& spec, uint32_t n, uint8_t held = 0) {
    Written w;
    w.progs = engine::build_programs(spec, {{spec.tx[0].port, 0}});
    const auto& p = *w.progs.queues[0];
    worker::StreamScheduler sched(p, 64);
    worker::FrameComposer comp(p, spec.signature);
    sched.start(1'000'000);
    std::vector<std::vector<uint8_t>> bufs(8, std::vector<uint8_t>(w.progs.max_len, held));
    w.plan.resize(n);
    const uint32_t got = sched.next(1'000'000, n, w.plan.data());
    w.plan.resize(got);
    comp.begin_burst(123456789);
    for (uint32_t i = 0; i < got; ++i) {
        auto& b = bufs[i % bufs.size()];  // a buffer that held another frame before
        comp.write(b.data(), w.plan[i]);
        w.frames.emplace_back(b.begin(), b.begin() + w.plan[i].len);
    }
    return w;
}

}  // namespace

TEST(FrameComposer, EveryFrameOfEverySizeIsSignedAndItsChecksumsHold) {
    // IMIX, a VLAN stream, and IPv6 sizes on both sides of the full signature (78 bytes: the
    // short layout; 90: sequence and timestamp).
    auto spec = streams_spec({"size=imix,flows=2", "size=64:1/100:1,vlan=7", "size=78:1/90:1,ipv6"});
    const auto w = compose(spec, 300);
    ASSERT_EQ(w.frames.size(), 300u);
    std::map<uint32_t, uint64_t> next_seq;
    std::set<size_t> lens;
    for (size_t i = 0; i < w.frames.size(); ++i) {
        const auto& f = w.frames[i];
        lens.insert(f.size());
        const bool vlan = f[12] == 0x81;
        test_support::expect_checksums_verify(f, vlan);
        const auto c = packet::sig_classify(f.data(), f.size(), spec.nonce, spec.rx_streams());
        ASSERT_EQ(c.cls, packet::FrameClass::ours) << "frame " << i << " of " << f.size() << " bytes";
        EXPECT_EQ(c.seq, next_seq[c.stream]++) << "each flow's sequence counts up, across its sizes and layouts";
        const size_t ip = vlan ? 18 : 14;
        const size_t payload = f.size() - ip - (f[ip - 2] == 0x86 ? 40 : 20) - 8;
        EXPECT_EQ(c.has_ts, payload >= 18) << f.size() << "-byte frame: the layout follows its length";
        if (c.has_ts) {
            EXPECT_EQ(c.ts_ns, 123456789u);
        }
    }
    EXPECT_EQ(next_seq.size(), 4u) << "IMIX's two flows, one each for the others";
    EXPECT_EQ(lens, (std::set<size_t>{60, 566, 1514, 96, 74, 86})) << "every size of every stream";
}

TEST(FrameComposer, SixtyFourByteFramesAreWrittenWholeOverWhatTheBufferHeld) {
    // Only 64-byte frames: each frame's write is its 60 bytes (the FCS is the device's), a
    // copy of its own length. Buffers that held other bytes must not show through anywhere.
    auto spec = streams_spec({"size=64,flows=3", "size=64,vlan=5"});
    const auto w = compose(spec, 40, 0xa5);
    ASSERT_EQ(w.progs.queues[0]->copy_len, 60u);
    ASSERT_EQ(w.frames.size(), 40u);
    std::map<uint32_t, uint64_t> next_seq;
    for (size_t i = 0; i < w.frames.size(); ++i) {
        const auto& f = w.frames[i];
        ASSERT_EQ(f.size(), 60u);
        const bool vlan = f[12] == 0x81;
        test_support::expect_checksums_verify(f, vlan);
        const auto c = packet::sig_classify(f.data(), f.size(), spec.nonce, spec.rx_streams());
        ASSERT_EQ(c.cls, packet::FrameClass::ours) << "frame " << i;
        EXPECT_EQ(c.seq, next_seq[c.stream]++);
        const auto& t = w.progs.queues[0]->templates[w.plan[i].tmpl].bytes;
        const size_t sig = (vlan ? 18 : 14) + 20 + 8;  // the template's bytes up to the signature
        EXPECT_TRUE(std::equal(f.begin(), f.begin() + sig - 2, t.begin())) << "frame " << i << ": its template's headers";
    }
    EXPECT_EQ(next_seq.size(), 4u);
}

// The frames write_burst writes for `bursts` bursts of `spec` (one sending queue), each with the
// 8 bytes after it, into 64 buffers reused burst after burst; a buffer's first copy_len bytes
// start as `held`, the rest as `beyond` (a pool's buffers hold zeros there, which frames longer
// than copy_len keep as their payload); `wide`: the AVX-512 path allowed.
std::vector<std::vector<uint8_t>> compose_bursts(const spec::RunSpec& spec, uint32_t bursts, uint8_t held,
                                                 uint8_t beyond, bool wide, bool& took_wide) {
    const auto progs = engine::build_programs(spec, {{spec.tx[0].port, 0}});
    const auto& p = *progs.queues[0];
    worker::StreamScheduler sched(p, 64);
    worker::FrameComposer comp(p, spec.signature, wide);
    took_wide = comp.wide();
    comp.start_at(0xfffffff0);  // the sequences' 32-bit carry in the first bursts
    sched.start(0);
    std::vector<std::vector<uint8_t>> bufs(64, std::vector<uint8_t>(32 + progs.max_len + 64, beyond));
    std::vector<void*> base;
    for (auto& b : bufs) {
        std::fill_n(b.begin() + 32, p.copy_len, held);
        base.push_back(b.data());
    }
    std::vector<std::vector<uint8_t>> out;
    for (uint32_t burst = 0; burst < bursts; ++burst) {
        worker::PlannedFrame plan[64];
        const uint32_t n = sched.next(0, 64 - burst % 5, plan);  // buffers not always in step with frames
        std::rotate(base.begin(), base.begin() + burst % 7, base.end());
        comp.begin_burst(0xfffffffeffffull + burst * 1000);
        comp.write_burst({base.data(), 32, 0, n}, plan, n);
        for (uint32_t i = 0; i < n; ++i) {
            const auto* f = static_cast<const uint8_t*>(base[i]) + 32;
            out.emplace_back(f, f + plan[i].len + 8);  // and 8 bytes beyond the frame, left as they were
        }
    }
    return out;
}

TEST(FrameComposer, TheWidePathWritesTheSameBytesAsTheOther) {
    // 64-byte frames: flows, a VLAN stream (no room for the timestamp: the other path, frame by
    // frame), 68-byte VLAN frames (the stamp 4-byte aligned, not 8), sizes that grow a template
    // (frame by frame too), and IMIX (64 bytes of each size's template, its payload the
    // buffer's zeros). Buffers held other bytes.
    for (const auto& streams : std::vector<std::vector<std::string>>{
             {"size=64,flows=3", "size=64,vlan=5", "size=64,src-port=7"},
             {"size=68,vlan=5", "size=68,flows=2"},
             {"size=64..80", "size=64,vlan=9"},
             {"size=imix,flows=2"}}) {
        const auto spec = streams_spec(streams);
        const bool grows = streams[0] == "size=64..80" || streams[0] == "size=imix,flows=2";
        const uint8_t beyond = grows ? 0 : 0x5a;
        bool wide = false, narrow = true;
        const auto a = compose_bursts(spec, 40, 0xa5, beyond, true, wide);
        const auto b = compose_bursts(spec, 40, 0xa5, beyond, false, narrow);
        ASSERT_EQ(wide, util::cpu_has_avx512()) << "64-byte IPv4 templates qualify";
        ASSERT_FALSE(narrow);
        ASSERT_EQ(a.size(), b.size());
        ASSERT_GT(a.size(), 2000u);
        for (size_t i = 0; i < a.size(); ++i) {
            ASSERT_EQ(a[i], b[i]) << streams[0] << ": frame " << i;
            const std::vector<uint8_t> f(a[i].begin(), a[i].end() - 8);
            test_support::expect_checksums_verify(f, f[12] == 0x81);
            ASSERT_EQ(packet::sig_classify(f.data(), f.size(), spec.nonce, spec.rx_streams()).cls,
                      packet::FrameClass::ours);
            ASSERT_TRUE(std::all_of(a[i].end() - 8, a[i].end(), [&](uint8_t x) { return x == beyond; }))
                << "frame " << i << ": nothing written beyond the frame";
        }
    }
    // Templates of more than 64 bytes (IPv6's stamp ends at byte 76): the other path.
    for (const auto& streams : std::vector<std::vector<std::string>>{{"size=90,ipv6"}, {"size=128,ipv6,vlan=3"}}) {
        bool wide = true;
        compose_bursts(streams_spec(streams), 1, 0, 0, true, wide);
        EXPECT_FALSE(wide) << streams[0];
    }
}

TEST(FrameComposer, SequencesAcrossTheirCarriesAndThe48BitWrapKeepChecksumsRight) {
    // Each flow's sequence goes over a 16-bit and a 32-bit carry and the 2^48 wrap, with a
    // timestamp whose words carry too: the checksum follows every word of both.
    auto spec = streams_spec({"size=64,flows=2", "size=imix", "size=90,ipv6"});
    for (const uint64_t first : {uint64_t{0xfff0}, uint64_t{0xfffffff0}, (uint64_t{1} << 48) - 20}) {
        const auto progs = engine::build_programs(spec, {{spec.tx[0].port, 0}});
        const auto& p = *progs.queues[0];
        worker::StreamScheduler sched(p, 64);
        worker::FrameComposer comp(p, spec.signature);
        comp.start_at(first);
        sched.start(0);
        std::map<uint32_t, uint64_t> next_seq;
        std::vector<uint8_t> buf(progs.max_len, 0);  // beyond copy_len a buffer holds zeros (as pools do)
        for (uint32_t burst = 0; burst < 4; ++burst) {
            worker::PlannedFrame plan[64];
            const uint32_t n = sched.next(0, 64, plan);
            comp.begin_burst(0xfffffffeffffull + burst);
            for (uint32_t i = 0; i < n; ++i) {
                comp.write(buf.data(), plan[i]);
                const std::vector<uint8_t> f(buf.begin(), buf.begin() + plan[i].len);
                test_support::expect_checksums_verify(f, false);
                const auto c = packet::sig_classify(f.data(), f.size(), spec.nonce, spec.rx_streams());
                ASSERT_EQ(c.cls, packet::FrameClass::ours) << "from " << first << ", burst " << burst << ", frame " << i;
                const uint64_t want = next_seq.count(c.stream) ? next_seq[c.stream] : first & LR_SIG48_MASK;
                EXPECT_EQ(c.seq, want);
                next_seq[c.stream] = (want + 1) & LR_SIG48_MASK;
                EXPECT_EQ(c.ts_ns, 0xfffffffeffffull + burst);
            }
        }
        EXPECT_EQ(next_seq.size(), 4u);
    }
}

TEST(TxProgram, OneFrameLengthOnlyWhenEveryFrameHasIt) {
    auto len = [](std::vector<std::string> streams) {
        const auto spec = streams_spec(streams);
        return worker::one_frame_len(*engine::build_programs(spec, {{spec.tx[0].port, 0}}).queues[0]);
    };
    EXPECT_EQ(len({"size=64,flows=3", "size=64,vlan=5"}), 60u) << "flows and a VLAN: the same length";
    EXPECT_EQ(len({"size=1518", "size=1518,flows=2"}), 1514u);
    EXPECT_EQ(len({"size=imix"}), 0u);
    EXPECT_EQ(len({"size=64", "size=128"}), 0u) << "each stream fixed, but not alike";
}

TEST(FrameComposer, UnsignedFramesKeepValidChecksumsAtEverySize) {
    auto spec = streams_spec({"size=64:80:+4", "size=100..200,proto=tcp"}, {{"no-signature", {"true"}}});
    const auto w = compose(spec, 200);
    ASSERT_EQ(w.frames.size(), 200u);
    for (const auto& f : w.frames) test_support::expect_checksums_verify(f, false);
}
