#include <gtest/gtest.h>

#include "spec/options.h"
#include "spec/parse.h"
#include "util/error.h"

using lr::UsageError;
using RunOptions = lr::spec::OptionValues;
using lr::spec::build_run_spec;

namespace {

// Expects a UsageError whose message contains `needle`.
template <class F>
void expect_usage(F&& f, const std::string& needle) {
    try {
        f();
        FAIL() << "expected UsageError containing: " << needle;
    } catch (const UsageError& e) {
        EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << "message was: " << e.what();
        EXPECT_EQ(e.code(), lr::ExitCode::usage);
    }
}

RunOptions base() { return {{"tx", {"net_null0"}}}; }

lr::spec::RunSpec to_spec(const RunOptions& o) { return build_run_spec(o); }

}  // namespace

TEST(Parse, Durations) {
    using lr::spec::parse_duration;
    EXPECT_DOUBLE_EQ(parse_duration("10s", "--duration"), 10.0);
    EXPECT_DOUBLE_EQ(parse_duration("250ms", "--duration"), 0.25);
    EXPECT_DOUBLE_EQ(parse_duration("2m", "--duration"), 120.0);
    EXPECT_DOUBLE_EQ(parse_duration("1.5", "--duration"), 1.5);
    expect_usage([] { parse_duration("", "--duration"); }, "empty");
    expect_usage([] { parse_duration("0s", "--duration"); }, "greater than zero");
    expect_usage([] { parse_duration("5 parsecs", "--duration"); }, "unknown unit");
    expect_usage([] { parse_duration("-1s", "--duration"); }, "--duration");
}

TEST(Parse, Counts) {
    using lr::spec::parse_count;
    EXPECT_EQ(parse_count("1000000", "--count"), 1000000u);
    EXPECT_EQ(parse_count("10k", "--count"), 10000u);
    EXPECT_EQ(parse_count("2M", "--count"), 2000000u);
    EXPECT_EQ(parse_count("3G", "--count"), 3000000000u);
    expect_usage([] { parse_count("0", "--count"); }, "greater than zero");
    expect_usage([] { parse_count("12x", "--count"); }, "unknown suffix");
    expect_usage([] { parse_count("99999999999999999999", "--count"); }, "too large");
    expect_usage([] { parse_count("20000000000G", "--count"); }, "too large");
}

TEST(Parse, PortQueues) {
    using lr::spec::parse_port_queues;
    using lr::spec::PortQueues;
    EXPECT_EQ(parse_port_queues("net_ring0", "--tx"), (PortQueues{"net_ring0", 1}));
    EXPECT_EQ(parse_port_queues("net_ring0,queues=4", "--tx"), (PortQueues{"net_ring0", 4}));
    EXPECT_EQ(parse_port_queues("0000:01:00.0,queues=2", "--rx"), (PortQueues{"0000:01:00.0", 2}));
    expect_usage([] { parse_port_queues("", "--tx"); }, "empty port name");
    expect_usage([] { parse_port_queues("p,queues=0", "--tx"); }, "must be between 1 and 128");
    expect_usage([] { parse_port_queues("p,queues=abc", "--tx"); }, "whole number");
    expect_usage([] { parse_port_queues("p,colour=red", "--tx"); }, "unknown key \"colour\"");
    expect_usage([] { parse_port_queues("p,queues", "--tx"); }, "not KEY=VALUE");
}

TEST(Spec, DefaultsAreSafe) {
    auto s = to_spec(base());
    EXPECT_EQ(s.frame.frame_size, 64u);
    EXPECT_EQ(s.frame.ttl, 1);
    EXPECT_EQ(s.frame.src_ip.str(), "198.18.0.1");
    EXPECT_EQ(s.frame.dst_ip.str(), "198.18.0.2");
    EXPECT_TRUE(s.frame.src_mac.is_locally_administered());
    EXPECT_DOUBLE_EQ(s.duration_s, 10.0);  // finite by default
    EXPECT_FALSE(s.count.has_value());
    auto o = base();
    o["ipv6"] = {"true"};
    auto s6 = to_spec(o);
    EXPECT_EQ(s6.frame.src_ip.str(), "2001:2::1");
    EXPECT_EQ(s6.frame.dst_ip.str(), "2001:2::2");
    EXPECT_EQ(s6.frame.frame_size, 66u);  // the smallest IPv6/UDP frame
    o["proto"] = {"tcp"};
    o["vlan"] = {"7"};
    EXPECT_EQ(to_spec(o).frame.frame_size, 82u);
}

TEST(Spec, RejectsBadSizes) {
    auto o = base();
    o["size"] = {"63"};
    expect_usage([&] { to_spec(o); }, "--size \"63\": must be between 64 and 9000");
    o["size"] = {"9001"};
    expect_usage([&] { to_spec(o); }, "must be between 64 and 9000");
    o["size"] = {"64"};
    o["ipv6"] = {"true"};
    expect_usage([&] { to_spec(o); }, "too small for IPv6/UDP: minimum is 66");
    o["proto"] = {"tcp"};
    expect_usage([&] { to_spec(o); }, "minimum is 78");
}

TEST(Spec, RejectsZeroQueuesAndNoPorts) {
    auto o = base();
    o["tx"] = {"net_null0,queues=0"};
    expect_usage([&] { to_spec(o); }, "invalid --tx \"net_null0,queues=0\": queues \"0\"");
    o.erase("tx");
    expect_usage([&] { to_spec(o); }, "no port given");
    o["tx"] = {"a", "a"};
    expect_usage([&] { to_spec(o); }, "given twice");
}

TEST(Spec, RejectsBadAddresses) {
    auto o = base();
    o["dst-ip"] = {"198.18.0.300"};
    expect_usage([&] { to_spec(o); }, "--dst-ip");
    o["dst-ip"] = {"10.0.0.1"};
    expect_usage([&] { to_spec(o); }, "outside the benchmarking ranges");
    o["force"] = {"true"};
    EXPECT_NO_THROW(to_spec(o));
    o = base();
    o["src-ip"] = {"2001:2::1"};
    expect_usage([&] { to_spec(o); }, "different address families");
    o = base();
    o["src-mac"] = {"01:00:5e:00:00:01"};
    expect_usage([&] { to_spec(o); }, "multicast");
    o = base();
    o["dst-mac"] = {"02:00:00:00:00"};
    expect_usage([&] { to_spec(o); }, "--dst-mac");
}

TEST(Spec, RejectsOtherBadValues) {
    auto o = base();
    o["proto"] = {"sctp"};
    expect_usage([&] { to_spec(o); }, "expected udp or tcp");
    o = base();
    o["vlan"] = {"4095"};
    expect_usage([&] { to_spec(o); }, "--vlan");
    o = base();
    o["count"] = {"1"};
    o["tx"] = {"p,queues=2"};
    expect_usage([&] { to_spec(o); }, "smaller than the number of TX queues");
    o = base();
    o["descriptors"] = {"1000"};
    expect_usage([&] { to_spec(o); }, "power of two");
    o = base();
    o["max-loss"] = {"1"};
    expect_usage([&] { to_spec(o); }, "needs both --tx and --rx");
    o = base();
    o["backend"] = {"pcap"};
    expect_usage([&] { to_spec(o); }, "invalid --backend \"pcap\": expected dpdk or afxdp");
    o = base();
    o["ttl"] = {"0"};
    expect_usage([&] { to_spec(o); }, "--ttl");
}

TEST(Spec, CountBoundsTheRunAndFlowsDefaultToQueues) {
    auto o = base();
    o["count"] = {"1M"};
    o["tx"] = {"p,queues=4"};
    auto s = to_spec(o);
    EXPECT_EQ(*s.count, 1000000u);
    EXPECT_EQ(s.effective_flows(), 4u);
    EXPECT_EQ(s.tx_queue_total(), 4u);
}
