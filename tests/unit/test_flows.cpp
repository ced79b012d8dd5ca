#include <gtest/gtest.h>

#include <set>
#include <tuple>

#include "flow/flows.h"
#include "util/error.h"

using namespace lr::flow;
using lr::packet::FrameSpec;
using lr::packet::parse_ip;

namespace {

FrameSpec base() {
    FrameSpec f;
    f.src_ip = parse_ip("198.18.0.1", "x");
    f.dst_ip = parse_ip("198.18.0.2", "x");
    f.src_port = 1000;
    f.dst_port = 2000;
    return f;
}

}  // namespace

TEST(Flows, CoverExactlyTheConfiguredSet) {
    auto flows = make_flows(base(), 100, vary_src_ip | vary_src_port);
    ASSERT_EQ(flows.size(), 100u);
    std::set<std::tuple<std::string, std::string, uint16_t, uint16_t>> seen;
    for (uint32_t i = 0; i < flows.size(); ++i) {
        const auto& f = flows[i];
        EXPECT_EQ(f.src_ip.str(), base().src_ip.plus(i).str());
        EXPECT_EQ(f.src_port, 1000 + i);
        EXPECT_EQ(f.dst_ip.str(), "198.18.0.2");  // not varied
        EXPECT_EQ(f.dst_port, 2000);
        seen.insert({f.src_ip.str(), f.dst_ip.str(), f.src_port, f.dst_port});
    }
    EXPECT_EQ(seen.size(), 100u);  // all distinct
}

TEST(Flows, EachFieldVariesAlone) {
    auto d = make_flows(base(), 3, vary_dst_port);
    EXPECT_EQ(d[2].dst_port, 2002);
    EXPECT_EQ(d[2].src_port, 1000);
    auto di = make_flows(base(), 300, vary_dst_ip);
    EXPECT_EQ(di[299].dst_ip.str(), "198.18.1.45");
    EXPECT_EQ(di[299].src_ip.str(), "198.18.0.1");
    auto one = make_flows(base(), 1, 0);
    ASSERT_EQ(one.size(), 1u);
    EXPECT_EQ(one[0].src_port, 1000);
}

TEST(Flows, RejectsImpossibleSets) {
    auto expect_err = [](auto fn, const std::string& needle) {
        try {
            fn();
            FAIL() << needle;
        } catch (const lr::UsageError& e) {
            EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
        }
    };
    expect_err([] { make_flows(base(), 0, vary_src_port); }, "at least 1");
    expect_err([] { make_flows(base(), 5, 0); }, "need at least one varied field");
    auto b = base();
    b.src_port = 65530;
    expect_err([&] { make_flows(b, 7, vary_src_port); }, "past 65535");
    EXPECT_NO_THROW(make_flows(b, 6, vary_src_port));
    b.src_ip = parse_ip("255.255.255.250", "x");
    expect_err([&] { make_flows(b, 10, vary_src_ip); }, "past 255.255.255.255");
}

TEST(Flows, QueuesPartitionFlowsExactly) {
    for (uint32_t count : {1u, 2u, 7u, 64u, 100u})
        for (uint32_t nq : {1u, 2u, 3u, 8u}) {
            std::multiset<uint32_t> all;
            for (uint32_t q = 0; q < nq; ++q) {
                auto v = flows_for_queue(count, q, nq);
                EXPECT_FALSE(v.empty());
                all.insert(v.begin(), v.end());
            }
            if (count >= nq) {
                EXPECT_EQ(all.size(), count);  // disjoint
                for (uint32_t i = 0; i < count; ++i) EXPECT_EQ(all.count(i), 1u);
            } else {
                EXPECT_EQ(all.size(), nq);  // one shared flow each
                for (uint32_t i = 0; i < count; ++i) EXPECT_GE(all.count(i), 1u);
            }
        }
    EXPECT_EQ(flows_for_queue(10, 1, 3), (std::vector<uint32_t>{1, 4, 7}));
}

TEST(Flows, VaryParsing) {
    EXPECT_EQ(parse_vary("src-ip,src-port"), unsigned(vary_src_ip | vary_src_port));
    EXPECT_EQ(parse_vary("dst-ip,dst-port,src-ip"), unsigned(vary_dst_ip | vary_dst_port | vary_src_ip));
    EXPECT_EQ(parse_vary("none"), 0u);
    EXPECT_EQ(vary_str(vary_src_ip | vary_dst_port), "src-ip,dst-port");
    EXPECT_EQ(vary_str(0), "none");
    EXPECT_THROW(parse_vary("src-mac"), lr::UsageError);
    EXPECT_THROW(parse_vary(""), lr::UsageError);
    EXPECT_THROW(parse_vary("src-ip,"), lr::UsageError);
}
