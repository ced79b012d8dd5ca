#include <gtest/gtest.h>

#include <set>
#include <string>
#include <tuple>

#include "flow/flows.h"
#include "util/error.h"

using namespace lr::flow;
using lr::packet::FrameSpec;
using lr::packet::IpAddr;
using lr::packet::parse_ip;

namespace {

FrameSpec base(bool v6 = false) {
    FrameSpec f;
    f.src_ip = parse_ip(v6 ? "2001:2::1" : "198.18.0.1", "x");
    f.dst_ip = parse_ip(v6 ? "2001:2::2" : "198.18.0.2", "x");
    f.src_port = 1000;
    f.dst_port = 2000;
    f.frame_size = 128;
    f.ttl = 9;
    f.vlan = 12;
    return f;
}

template <typename Fn>
std::string error_of(Fn fn) {
    try {
        fn();
    } catch (const lr::UsageError& e) {
        return e.what();
    }
    return "(no error)";
}

using Tuple = std::tuple<std::string, std::string, uint16_t, uint16_t>;
Tuple tuple_of(const FrameSpec& f) { return {f.src_ip.str(), f.dst_ip.str(), f.src_port, f.dst_port}; }

// Checks flows[i] against base + i in the varied fields, base elsewhere, and distinctness.
void expect_exact_set(const FrameSpec& b, const std::vector<FrameSpec>& flows, uint32_t count, unsigned vary) {
    ASSERT_EQ(flows.size(), count);
    std::set<Tuple> seen;
    for (uint32_t i = 0; i < count; ++i) {
        const auto& f = flows[i];
        SCOPED_TRACE(testing::Message() << "flow " << i << " vary " << vary_str(vary));
        EXPECT_EQ(f.src_ip, vary & vary_src_ip ? b.src_ip.plus(i) : b.src_ip);
        EXPECT_EQ(f.dst_ip, vary & vary_dst_ip ? b.dst_ip.plus(i) : b.dst_ip);
        EXPECT_EQ(f.src_port, vary & vary_src_port ? b.src_port + i : b.src_port);
        EXPECT_EQ(f.dst_port, vary & vary_dst_port ? b.dst_port + i : b.dst_port);
        // Everything that is not part of the tuple is copied unchanged.
        EXPECT_EQ(f.frame_size, b.frame_size);
        EXPECT_EQ(f.ttl, b.ttl);
        EXPECT_EQ(f.vlan, b.vlan);
        EXPECT_EQ(f.src_mac, b.src_mac);
        EXPECT_EQ(f.dst_mac, b.dst_mac);
        EXPECT_EQ(f.l4, b.l4);
        seen.insert(tuple_of(f));
    }
    EXPECT_EQ(seen.size(), count);  // all tuples distinct
}

}  // namespace

TEST(Flows, EveryVaryCombinationGivesExactlyTheConfiguredSet) {
    for (bool v6 : {false, true})
        for (unsigned vary = 1; vary < 16; ++vary)
            for (uint32_t count : {1u, 2u, 37u, 300u}) {
                const auto b = base(v6);
                expect_exact_set(b, make_flows(b, count, vary), count, vary);
            }
}

TEST(Flows, ExpectedValuesPerField) {
    const auto si = make_flows(base(), 300, vary_src_ip | vary_src_port);
    EXPECT_EQ(si[0].src_ip.str(), "198.18.0.1");
    EXPECT_EQ(si[299].src_ip.str(), "198.18.1.44");
    EXPECT_EQ(si[299].src_port, 1299);
    EXPECT_EQ(si[299].dst_ip.str(), "198.18.0.2");
    EXPECT_EQ(si[299].dst_port, 2000);
    const auto di = make_flows(base(), 300, vary_dst_ip);
    EXPECT_EQ(di[299].dst_ip.str(), "198.18.1.45");
    EXPECT_EQ(di[299].src_ip.str(), "198.18.0.1");
    const auto dp = make_flows(base(), 3, vary_dst_port);
    EXPECT_EQ(dp[2].dst_port, 2002);
    EXPECT_EQ(dp[2].src_port, 1000);
    const auto v6 = make_flows(base(true), 70000, vary_src_ip);
    EXPECT_EQ(v6[65535].src_ip.str(), "2001:2::1:0");
    EXPECT_EQ(v6[69999].src_ip.str(), "2001:2::1:1170");
}

TEST(Flows, SingleFlowNeedsNoVariation) {
    const auto one = make_flows(base(), 1, 0);
    ASSERT_EQ(one.size(), 1u);
    EXPECT_EQ(tuple_of(one[0]), tuple_of(base()));
}

TEST(Flows, RangesUpToTheTopAreAccepted) {
    auto b = base();
    b.src_port = 65530;
    expect_exact_set(b, make_flows(b, 6, vary_src_port), 6, vary_src_port);  // 65530..65535
    b.dst_port = 1;
    expect_exact_set(b, make_flows(b, 65535, vary_dst_port), 65535, vary_dst_port);
    b.src_ip = parse_ip("255.255.255.250", "x");
    EXPECT_EQ(make_flows(b, 6, vary_src_ip).back().src_ip.str(), "255.255.255.255");
    b.dst_ip = parse_ip("ffff:ffff:ffff:ffff:ffff:ffff:ffff:fff0", "x");
    b.src_ip = parse_ip("2001:2::1", "x");
    EXPECT_EQ(make_flows(b, 16, vary_dst_ip).back().dst_ip.str(), "ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff");
}

TEST(Flows, RejectsImpossibleSets) {
    EXPECT_EQ(error_of([] { make_flows(base(), 0, vary_src_port); }), "--flows must be at least 1");
    EXPECT_EQ(error_of([] { make_flows(base(), 5, 0); }), "5 flows need at least one varied field (--vary)");
    EXPECT_EQ(error_of([] { make_flows(base(), 5, 1u << 7); }), "5 flows need at least one varied field (--vary)");
    auto b = base();
    b.src_port = 65530;
    EXPECT_EQ(error_of([&] { make_flows(b, 7, vary_src_port); }),
              "7 flows starting at source port 65530 would run past 65535");
    b.dst_port = 0;
    EXPECT_EQ(error_of([&] { make_flows(b, 65537, vary_dst_port); }),
              "65537 flows starting at destination port 0 would run past 65535");
    b.dst_port = 60000;
    EXPECT_EQ(error_of([&] { make_flows(b, 100000, vary_dst_port | vary_src_ip); }),
              "100000 flows starting at destination port 60000 would run past 65535");
    b.src_ip = parse_ip("255.255.255.250", "x");
    EXPECT_EQ(error_of([&] { make_flows(b, 7, vary_src_ip); }),
              "7 flows starting at source address 255.255.255.250 would run past 255.255.255.255");
    b.dst_ip = parse_ip("ffff:ffff:ffff:ffff:ffff:ffff:ffff:fff0", "x");
    EXPECT_EQ(error_of([&] { make_flows(b, 17, vary_dst_ip); }),
              "17 flows starting at destination address ffff:ffff:ffff:ffff:ffff:ffff:ffff:fff0 would run past "
              "ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff");
}

TEST(Flows, QueuesPartitionFlowsExactly) {
    for (uint32_t count : {1u, 2u, 3u, 7u, 8u, 9u, 64u, 100u, 1000u})
        for (uint32_t nq : {1u, 2u, 3u, 4u, 8u, 16u}) {
            SCOPED_TRACE(testing::Message() << count << " flows on " << nq << " queues");
            std::multiset<uint32_t> all;
            for (uint32_t q = 0; q < nq; ++q) {
                const auto v = flows_for_queue(count, q, nq);
                ASSERT_FALSE(v.empty());  // no idle queue
                for (uint32_t f : v) EXPECT_LT(f, count);
                if (count < nq) {
                    EXPECT_EQ(v, std::vector<uint32_t>{q % count});
                }
                all.insert(v.begin(), v.end());
            }
            if (count >= nq) {
                EXPECT_EQ(all.size(), count);  // union has exactly count elements...
                for (uint32_t i = 0; i < count; ++i) EXPECT_EQ(all.count(i), 1u) << i;  // ...each once
            } else {
                EXPECT_EQ(all.size(), nq);  // one (shared) flow per queue, every flow used
                for (uint32_t i = 0; i < count; ++i) EXPECT_GE(all.count(i), 1u) << i;
            }
        }
    EXPECT_EQ(flows_for_queue(10, 1, 3), (std::vector<uint32_t>{1, 4, 7}));
    EXPECT_EQ(flows_for_queue(10, 0, 3), (std::vector<uint32_t>{0, 3, 6, 9}));
    EXPECT_EQ(flows_for_queue(2, 3, 4), (std::vector<uint32_t>{1}));
}

TEST(Flows, VaryParsingAccepts) {
    EXPECT_EQ(parse_vary("src-ip"), unsigned(vary_src_ip));
    EXPECT_EQ(parse_vary("src-ip,src-port"), unsigned(vary_src_ip | vary_src_port));
    EXPECT_EQ(parse_vary("dst-ip,dst-port,src-ip"), unsigned(vary_dst_ip | vary_dst_port | vary_src_ip));
    EXPECT_EQ(parse_vary("src-ip,dst-ip,src-port,dst-port"), 15u);
    EXPECT_EQ(parse_vary("src-port,src-port"), unsigned(vary_src_port));
    EXPECT_EQ(parse_vary("none"), 0u);
    for (unsigned v = 0; v < 16; ++v) EXPECT_EQ(parse_vary(vary_str(v)), v) << v;  // round trip
    EXPECT_EQ(vary_str(vary_src_ip | vary_dst_port), "src-ip,dst-port");
    EXPECT_EQ(vary_str(0), "none");
}

TEST(Flows, VaryParsingRejects) {
    EXPECT_EQ(error_of([] { parse_vary("src-mac"); }),
              "invalid --vary \"src-mac\": unknown field \"src-mac\" (use src-ip, dst-ip, src-port, dst-port or none)");
    for (const char* bad : {"", ",", "src-ip,", ",src-ip", "src-ip,,dst-ip", "SRC-IP", "src-ip ", "none,src-ip",
                            "src_ip", "src-ip;dst-ip"})
        EXPECT_NE(error_of([&] { parse_vary(bad); }).find("invalid --vary"), std::string::npos) << bad;
}
