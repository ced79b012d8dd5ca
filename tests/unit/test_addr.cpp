#include <gtest/gtest.h>

#include "packet/addr.h"
#include "util/error.h"

using namespace lr::packet;

TEST(Addr, MacRoundTripAndFlags) {
    auto m = parse_mac("02:00:0A:bc:00:01", "--src-mac");
    EXPECT_EQ(m.str(), "02:00:0a:bc:00:01");
    EXPECT_TRUE(m.is_locally_administered());
    EXPECT_FALSE(m.is_multicast());
    EXPECT_EQ(parse_mac("02-00-00-00-00-02", "x").str(), "02:00:00:00:00:02");
    EXPECT_TRUE(parse_mac("ff:ff:ff:ff:ff:ff", "x").is_multicast());
}

TEST(Addr, MacRejects) {
    for (const char* bad : {"", "02:00:00:00:00", "02:00:00:00:00:0g", "02:00:00:00:00:001", "020000000001",
                            "02:00:00:00:00:01:"}) {
        try {
            parse_mac(bad, "--dst-mac");
            FAIL() << bad;
        } catch (const lr::UsageError& e) {
            EXPECT_NE(std::string(e.what()).find("invalid --dst-mac"), std::string::npos);
        }
    }
}

TEST(Addr, IpParseFormat) {
    auto a = parse_ip("198.18.0.1", "--src-ip");
    EXPECT_FALSE(a.v6);
    EXPECT_EQ(a.str(), "198.18.0.1");
    auto b = parse_ip("2001:2:0::1", "--src-ip");
    EXPECT_TRUE(b.v6);
    EXPECT_EQ(b.str(), "2001:2::1");
    for (const char* bad : {"", "198.18.0.256", "198.18.0", "198.18.0.1.2", "198.18.0.1 ", "2001:2::1::2", "x"}) {
        try {
            parse_ip(bad, "--dst-ip");
            FAIL() << bad;
        } catch (const lr::UsageError& e) {
            EXPECT_NE(std::string(e.what()).find("invalid --dst-ip"), std::string::npos) << e.what();
        }
    }
}

TEST(Addr, PlusCarriesAcrossBytes) {
    EXPECT_EQ(parse_ip("198.18.0.255", "x").plus(1).str(), "198.18.1.0");
    EXPECT_EQ(parse_ip("198.18.0.1", "x").plus(65536).str(), "198.19.0.1");
    EXPECT_EQ(parse_ip("2001:2::ffff", "x").plus(1).str(), "2001:2::1:0");
    EXPECT_EQ(parse_ip("198.18.0.1", "x").plus(0).str(), "198.18.0.1");
}

TEST(Addr, BenchmarkRanges) {
    auto in = [](const char* s) { return in_benchmark_range(parse_ip(s, "x")); };
    EXPECT_FALSE(in("198.17.255.255"));
    EXPECT_TRUE(in("198.18.0.0"));
    EXPECT_TRUE(in("198.19.255.255"));
    EXPECT_FALSE(in("198.20.0.0"));
    EXPECT_TRUE(in("2001:2::1"));
    EXPECT_TRUE(in("2001:2:0:ffff::1"));
    EXPECT_FALSE(in("2001:2:1::1"));
    EXPECT_FALSE(in("2001:3::1"));
}
