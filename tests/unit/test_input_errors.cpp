// Bad input is refused before anything is sent, quoting the whole value typed: parts of a
// value (a queue count, a step, a CPU), rates above anything a port could carry (the fastest
// standard Ethernet when the line rate is unknown, the line rate when it is known), and the
// ports' own line rate once the session opened them.
#include <gtest/gtest.h>

#include "backend/loop/loop_backend.h"
#include "engine/session.h"
#include "spec/options.h"
#include "spec/rate.h"
#include "util/error.h"
#include "usage_error.h"

using namespace lr;

namespace {

using lr::test_support::usage_error;

std::string run_error(spec::OptionValues o, spec::Procedure kind = spec::Procedure::run) {
    if (!o.count("tx")) o["tx"] = {"p"};
    return usage_error([&] { spec::build_run_spec(o, kind); });
}

#define EXPECT_HAS(haystack, needle) EXPECT_NE((haystack).find(needle), std::string::npos) << (haystack)

}  // namespace

TEST(WholeValue, PartsOfAValueAreQuotedWithTheWholeOfIt) {
    EXPECT_HAS(run_error({{"tx", {"veth0,queues=0"}}}), "invalid --tx \"veth0,queues=0\": queues \"0\": must be between 1 and 128");
    EXPECT_HAS(run_error({{"rx", {"veth1,queues=x"}}}), "invalid --rx \"veth1,queues=x\": queues \"x\": expected a whole number");
    EXPECT_HAS(run_error({{"pattern", {"burst:0"}}, {"rate", {"1M"}}}),
               "invalid --pattern \"burst:0\": the burst length \"0\": must be between 1 and");
    EXPECT_HAS(run_error({{"pattern", {"burst:"}}, {"rate", {"1M"}}}), "invalid --pattern \"burst:\"");
    EXPECT_HAS(run_error({{"cpus", {"1,x,3"}}}), "invalid --cpus \"1,x,3\": CPU \"x\": expected a whole number");
    EXPECT_HAS(run_error({{"rx", {"q"}}, {"sizes", {"64:128:+0"}}}, spec::Procedure::sweep),
               "invalid --sizes \"64:128:+0\": the step \"0\": must be between 1 and 9000");
    EXPECT_HAS(run_error({{"rx", {"q"}}, {"sizes", {"64:128:*1"}}}, spec::Procedure::sweep),
               "invalid --sizes \"64:128:*1\": the factor \"1\": must be between 2 and 9000");
    EXPECT_HAS(run_error({{"rx", {"q"}}, {"sizes", {"128,64:40:+8"}}}, spec::Procedure::sweep),
               "invalid --sizes \"128,64:40:+8\": frame size \"40\": must be between 64 and 9000");
    EXPECT_HAS(run_error({{"rx", {"q"}}, {"sizes", {"64,128:64:+8"}}}, spec::Procedure::sweep),
               "invalid --sizes \"64,128:64:+8\": \"128:64:+8\": the range ends before it starts");
    EXPECT_HAS(run_error({{"rx", {"q"}}, {"sizes", {"64,,128"}}}, spec::Procedure::sweep),
               "invalid --sizes \"64,,128\": an empty size in the list");
    EXPECT_HAS(run_error({{"rx", {"q"}}, {"sizes", {"64,100000"}}}, spec::Procedure::sweep),
               "invalid --sizes \"64,100000\": frame size \"100000\"");
    EXPECT_HAS(run_error({{"rx", {"q"}}, {"sizes", {"64,128"}}, {"ipv6", {"true"}}, {"proto", {"tcp"}}},
                         spec::Procedure::sweep),
               "invalid --sizes \"64,128\": 64 bytes is smaller than this frame kind's smallest (78 bytes)");
    EXPECT_HAS(run_error({{"rx", {"q"}}, {"goals", {"0,x"}}}, spec::Procedure::throughput),
               "invalid --goals \"0,x\": goal \"x\"");
    EXPECT_HAS(run_error({{"rx", {"q"}}, {"load", {"0.0"}}}, spec::Procedure::latency), "invalid --load \"0.0\"");
    EXPECT_HAS(run_error({{"rx", {"q"}}, {"step", {"0.00"}}}, spec::Procedure::frame_loss), "invalid --step \"0.00\"");
    EXPECT_HAS(run_error({{"rx", {"q"}}, {"rate-tolerance", {"0e1"}}}, spec::Procedure::throughput),
               "invalid --rate-tolerance \"0e1\"");
    EXPECT_HAS(run_error({{"metrics", {"127.0.0.1:99999"}}}),
               "invalid --metrics \"127.0.0.1:99999\": port \"99999\": must be between 1 and 65535");
    EXPECT_HAS(run_error({{"metrics", {":9000"}}}), "invalid --metrics \":9000\": give ADDR:PORT or PORT");
    const auto reflect_error = [](const std::string& ports) {
        return usage_error([&] { spec::build_reflect_draft({{"port", {"p"}}, {"dst-ports", {ports}}}); });
    };
    EXPECT_HAS(reflect_error("1000-x"), "invalid --dst-ports \"1000-x\": port \"x\": expected a whole number");
    EXPECT_HAS(reflect_error("0-10"), "invalid --dst-ports \"0-10\": port \"0\": must be between 1 and 65535");
    EXPECT_HAS(reflect_error("2000-1000"), "invalid --dst-ports \"2000-1000\": the range ends before it starts");
}

TEST(RateBound, WithoutALineRateTheFastestEthernetBoundsEachSendingPort) {
    // 800 Gbit/s at L1 is 1.19 Gpps of 64-byte frames (84 bytes on the wire each).
    EXPECT_NEAR(spec::line_rate_pps(spec::kFastestEthernetBps, 64), 1.190476e9, 1e3);
    const auto e = run_error({{"rate", {"1e30"}}});
    EXPECT_HAS(e, "--rate 1e30 asks 1e+30 pps of 64-byte frames");
    EXPECT_HAS(e, "800 Gbit/s, the most a port can carry (the fastest standard Ethernet");
    EXPECT_HAS(run_error({{"rate", {"1.2Gpps"}}}), "--rate 1.2Gpps asks 1.2 Gpps of 64-byte frames: 100.8 % of 800 Gbit/s");
    EXPECT_HAS(run_error({{"rate", {"801Gbps"}}}), "--rate 801Gbps");
    EXPECT_HAS(run_error({{"rate", {"900Gbps-l2"}}, {"size", {"1518"}}}), "of 1518-byte frames");
    // Two sending ports carry twice as much.
    EXPECT_EQ(run_error({{"tx", {"p", "q"}}, {"rate", {"1.2Gpps"}}}), "(no error)");
    EXPECT_HAS(run_error({{"tx", {"p", "q"}}, {"rate", {"2.4Gpps"}}}), "1.6 Tbit/s, the most 2 ports can carry");
    EXPECT_EQ(run_error({{"rate", {"1.19Gpps"}}}), "(no error)");
    // A rate in % waits for the ports' line rate (the session refuses it when there is none).
    EXPECT_EQ(run_error({{"rate", {"50%"}}}), "(no error)");
    // The procedures' loads too, at every frame size they send.
    EXPECT_HAS(run_error({{"rx", {"q"}}, {"max-rate", {"5Tbps"}}}, spec::Procedure::throughput), "--max-rate 5Tbps asks");
    EXPECT_HAS(run_error({{"rx", {"q"}}, {"min-rate", {"2Gpps"}}}, spec::Procedure::throughput), "--min-rate 2Gpps asks");
    EXPECT_HAS(run_error({{"rate", {"700Gbps-l2"}}, {"sizes", {"1518,64"}}}, spec::Procedure::sweep),
               "--rate 700Gbps-l2 asks 1.367 Gpps of 64-byte frames");
}

TEST(RateBound, AGivenLineRateBoundsEveryRateAtEveryFrameSize) {
    EXPECT_HAS(run_error({{"line-rate", {"10G"}}, {"rate", {"20Gbps"}}}),
               "--rate 20Gbps asks 29.762 Mpps of 64-byte frames: 200 % of the 10 Gbit/s line rate given with --line-rate");
    EXPECT_EQ(run_error({{"line-rate", {"10G"}}, {"rate", {"14.88Mpps"}}}), "(no error)");
    // 10 Mpps fits 64-byte frames on 10 Gbit/s but not 1518-byte ones.
    EXPECT_HAS(run_error({{"rx", {"q"}}, {"line-rate", {"10G"}}, {"rate", {"10Mpps"}}, {"sizes", {"64,1518"}}},
                         spec::Procedure::sweep),
               "--rate 10Mpps asks 10 Mpps of 1518-byte frames: 1230.4 % of the 10 Gbit/s line rate");
    EXPECT_HAS(run_error({{"line-rate", {"1e30"}}}),
               "invalid --line-rate \"1e30\": more than 800 Gbit/s, the most a port can carry");
}

TEST(RateBound, TheSessionRefusesARateAboveThePortsLineRateBeforeSending) {
    loop::LoopFaults f;
    f.link_speed_mbps = 10000;
    loop::WireCounts wire;
    auto s = spec::build_run_spec({{"tx", {"a"}}, {"rx", {"b"}}, {"rate", {"20Mpps"}}, {"count", {"1000"}}});
    s.backend = spec::BackendKind::loop;
    const auto e = usage_error([&] { engine::Session session(loop::make_loop_backend(f, &wire), s); });
    EXPECT_HAS(e, "--rate 20Mpps asks 20 Mpps of 64-byte frames: 134.4 % of the 10 Gbit/s line rate of port a (its "
                  "link speed)");
    EXPECT_EQ(wire.sent, 0u);
    // Within the line rate, and in % of it, the session opens.
    s.rate = spec::parse_rate("100%", "--rate");
    engine::Session ok(loop::make_loop_backend(f), s);
    EXPECT_DOUBLE_EQ(ok.rate_pps(s.trial()), spec::line_rate_pps(10e9, 64));
    // Without a line rate, a rate in % is refused when the session opens.
    s.rate = spec::parse_rate("50%", "--rate");
    EXPECT_HAS(usage_error([&] { engine::Session none(loop::make_loop_backend({}), s); }),
               "--rate 50%: the ports report no link speed");
}

TEST(RateBound, SeveralSendingPortsAreNamedWithTheirSpeeds) {
    loop::LoopFaults f;
    f.link_speed_mbps = 25000;
    auto s = spec::build_run_spec({{"tx", {"a", "b"}}, {"rate", {"100Gbps"}}, {"count", {"1000"}}});
    s.backend = spec::BackendKind::loop;
    EXPECT_HAS(usage_error([&] { engine::Session session(loop::make_loop_backend(f), s); }),
               "200 % of the 50 Gbit/s line rate of ports a (25 Gbit/s) and b (25 Gbit/s) (their link speeds)");
}

// linerate impair and linerate connect refuse an impossible path or connection setting before
// anything is forwarded or sent, quoting what was typed.
TEST(WholeValue, ImpairAndConnectRefuseWhatCannotBe) {
    const auto impair_error = [](spec::OptionValues o) {
        if (!o.count("between")) o["between"] = {"a,b"};
        return usage_error([&] { spec::build_impair_spec(o); });
    };
    EXPECT_HAS(impair_error({{"between", {"a"}}}), "invalid --between \"a\": two different ports A,B");
    EXPECT_HAS(impair_error({{"between", {"a,a"}}}), "invalid --between \"a,a\"");
    EXPECT_HAS(impair_error({{"loss", {"150%"}}}), "invalid --loss \"150%\": expected a percentage between 0 and 100");
    EXPECT_HAS(impair_error({{"duplicate", {"-1%"}}}), "invalid --duplicate \"-1%\"");
    EXPECT_HAS(impair_error({{"loss", {"1%"}}, {"loss-model", {"gilbert:1,25"}}}), "--loss and --loss-model");
    EXPECT_HAS(impair_error({{"loss-model", {"gilbert:1"}}}), "invalid --loss-model \"gilbert:1\": two to four");
    EXPECT_HAS(impair_error({{"loss-model", {"bernoulli:1"}}}), "invalid --loss-model \"bernoulli:1\"");
    EXPECT_HAS(impair_error({{"loss-model", {"gilbert:1,x"}}}), "\"x\" is not a percentage");
    EXPECT_HAS(impair_error({{"delay", {"1ms"}}, {"jitter", {"2ms"}}}), "give --jitter-reorder");
    EXPECT_EQ(impair_error({{"delay", {"1ms"}}, {"jitter", {"2ms"}}, {"jitter-reorder", {"true"}}}), "(no error)");
    EXPECT_HAS(impair_error({{"impair-rate", {"50%"}}}), "invalid --rate \"50%\": the emulated link's rate");
    // 10 ms at 1 Gbit/s of 64-byte frames is 14,881 frames on average: more than --limit 1000.
    EXPECT_HAS(impair_error({{"delay", {"10ms"}}, {"impair-rate", {"1Gbps"}}, {"limit", {"1000"}}}),
               "more than --limit 1000");
    EXPECT_EQ(impair_error({{"delay", {"10ms"}}, {"impair-rate", {"1Gbps"}}, {"limit", {"20000"}}}), "(no error)");
    EXPECT_HAS(impair_error({{"limit", {"16777216"}}, {"max-frame", {"9018"}}, {"impair-queues", {"128"}},
                             {"backend", {"dpdk"}}}),
               "of memory, more than half of this host's");
    EXPECT_HAS(impair_error({{"max-frame", {"9018"}}, {"backend", {"afxdp"}}}), "too large for the afxdp backend");

    const auto connect_error = [](spec::OptionValues o) {
        if (!o.count("connect-port")) o["connect-port"] = {"p"};
        return usage_error([&] { spec::build_connect_spec(o); });
    };
    EXPECT_EQ(connect_error({}), "(no error)");
    EXPECT_HAS(usage_error([] { spec::build_connect_spec({}); }), "connect needs --port PORT");
    EXPECT_HAS(connect_error({{"dst-ip", {"192.0.2.1"}}}), "--dst-ip 192.0.2.1 is outside the benchmarking ranges");
    EXPECT_HAS(connect_error({{"dst-mac", {"ff:ff:ff:ff:ff:ff"}}}), "multicast/broadcast");
    EXPECT_HAS(connect_error({{"connect-rate", {"1Gbps"}}}), "invalid --rate \"1Gbps\": connections per second");
    EXPECT_HAS(connect_error({{"src-ports", {"2000-1999"}}}), "invalid --src-ports \"2000-1999\"");
    EXPECT_HAS(connect_error({{"src-ports", {"2000-2099"}}, {"connect-outstanding", {"128"}}}),
               "needs 128 source ports; --src-ports 2000-2099 has 100");
    EXPECT_HAS(connect_error({{"src-ports", {"2000-2999"}}, {"connect-outstanding", {"256"}},
                              {"connect-queues", {"4"}}}),
               "on 4 queues needs 1024 source ports");
    EXPECT_HAS(connect_error({{"close", {"sometimes"}}}), "sometimes");
    EXPECT_HAS(connect_error({{"connect-timeout", {"0s"}}}), "--timeout");
    EXPECT_HAS(connect_error({{"dst-port", {"0"}}}), "--dst-port");
}
