#include <gtest/gtest.h>

#include <string>

#include "packet/addr.h"
#include "util/error.h"

using namespace lr::packet;

namespace {

// The message of the UsageError thrown by fn, or "(no error)".
template <typename Fn>
std::string error_of(Fn fn) {
    try {
        fn();
    } catch (const lr::UsageError& e) {
        return e.what();
    }
    return "(no error)";
}

}  // namespace

TEST(Addr, MacParseFormatRoundTrip) {
    const auto m = parse_mac("02:00:0A:bc:00:01", "--src-mac");
    EXPECT_EQ(m.b, (std::array<uint8_t, 6>{0x02, 0x00, 0x0a, 0xbc, 0x00, 0x01}));
    EXPECT_EQ(m.str(), "02:00:0a:bc:00:01");
    EXPECT_EQ(parse_mac(m.str(), "x"), m);
    EXPECT_EQ(parse_mac("02-00-00-00-00-02", "x").str(), "02:00:00:00:00:02");
    EXPECT_EQ(parse_mac("FF:ff:Ff:fF:ff:ff", "x").str(), "ff:ff:ff:ff:ff:ff");
    EXPECT_EQ(MacAddr{}.str(), "00:00:00:00:00:00");
}

TEST(Addr, MacFlags) {
    EXPECT_TRUE(parse_mac("02:00:00:00:00:01", "x").is_locally_administered());
    EXPECT_FALSE(parse_mac("02:00:00:00:00:01", "x").is_multicast());
    EXPECT_TRUE(parse_mac("ff:ff:ff:ff:ff:ff", "x").is_multicast());
    EXPECT_TRUE(parse_mac("01:00:5e:00:00:01", "x").is_multicast());
    EXPECT_FALSE(parse_mac("00:1b:21:00:00:01", "x").is_locally_administered());
}

TEST(Addr, MacRejects) {
    for (const char* bad : {"", "02:00:00:00:00", "02:00:00:00:00:0g", "02:00:00:00:00:001", "020000000001",
                            "02:00:00:00:00:01:", "02:00:00:00:00:01:02", "02:00-00:00:00:01", "2:00:00:00:00:01",
                            " 02:00:00:00:00:01", "02.00.00.00.00.01"}) {
        EXPECT_EQ(error_of([&] { parse_mac(bad, "--dst-mac"); }),
                  std::string("invalid --dst-mac \"") + bad + "\": expected a MAC address like 02:00:00:00:00:01");
    }
}

TEST(Addr, Ipv4ParseFormatRoundTrip) {
    const auto a = parse_ip("198.18.0.1", "--src-ip");
    EXPECT_FALSE(a.v6);
    EXPECT_EQ(a.b[0], 198);
    EXPECT_EQ(a.b[1], 18);
    EXPECT_EQ(a.b[2], 0);
    EXPECT_EQ(a.b[3], 1);
    for (int i = 4; i < 16; ++i) EXPECT_EQ(a.b[i], 0) << i;
    for (const char* s : {"198.18.0.1", "0.0.0.0", "255.255.255.255", "10.1.2.3"})
        EXPECT_EQ(parse_ip(s, "x").str(), s);
}

TEST(Addr, Ipv6ParseFormatRoundTrip) {
    const auto b = parse_ip("2001:2:0::1", "--src-ip");
    EXPECT_TRUE(b.v6);
    EXPECT_EQ(b.b[0], 0x20);
    EXPECT_EQ(b.b[1], 0x01);
    EXPECT_EQ(b.b[3], 0x02);
    EXPECT_EQ(b.b[15], 0x01);
    EXPECT_EQ(b.str(), "2001:2::1");  // canonical (RFC 5952) form
    EXPECT_EQ(parse_ip("2001:0002:0000:0000:0000:0000:0000:00FF", "x").str(), "2001:2::ff");
    for (const char* s : {"2001:2::1", "::", "::1", "fe80::1:2", "1:2:3:4:5:6:7:8", "::ffff:198.18.0.1"})
        EXPECT_EQ(parse_ip(s, "x").str(), s);
}

TEST(Addr, IpRejectsWithPreciseMessage) {
    EXPECT_EQ(error_of([] { parse_ip("198.18.0.300", "--src-ip"); }),
              "invalid --src-ip \"198.18.0.300\": not an IPv4 or IPv6 address");
    for (const char* bad : {"", " ", "198.18.0.256", "198.18.0", "198.18.0.1.2", "198.18.0.1 ", " 198.18.0.1",
                            "198.18.0.1x", "198.18.0.1/24", "198.18.0.-1", "2001:2::1::2", "1:2:3:4:5:6:7:8:9",
                            "1:2:3:4:5:6:7", "2001:2::g", "2001:2::1%eth0", "x", "localhost"}) {
        EXPECT_EQ(error_of([&] { parse_ip(bad, "--dst-ip"); }),
                  std::string("invalid --dst-ip \"") + bad + "\": not an IPv4 or IPv6 address");
    }
    // A NUL must not hide trailing junk.
    using namespace std::string_view_literals;
    EXPECT_NE(error_of([] { parse_ip("198.18.0.1\0junk"sv, "--dst-ip"); }), "(no error)");
}

TEST(Addr, PlusCarriesAndWraps) {
    EXPECT_EQ(parse_ip("198.18.0.1", "x").plus(0).str(), "198.18.0.1");
    EXPECT_EQ(parse_ip("198.18.0.1", "x").plus(1).str(), "198.18.0.2");
    EXPECT_EQ(parse_ip("198.18.0.255", "x").plus(1).str(), "198.18.1.0");
    EXPECT_EQ(parse_ip("198.18.0.1", "x").plus(65536).str(), "198.19.0.1");
    EXPECT_EQ(parse_ip("198.18.255.255", "x").plus(1).str(), "198.19.0.0");
    EXPECT_EQ(parse_ip("255.255.255.255", "x").plus(2).str(), "0.0.0.1");  // wraps within 32 bits
    EXPECT_EQ(parse_ip("0.0.0.0", "x").plus(0x1'0000'0005ull).str(), "0.0.0.5");
    EXPECT_EQ(parse_ip("2001:2::ffff", "x").plus(1).str(), "2001:2::1:0");
    EXPECT_EQ(parse_ip("2001:2::", "x").plus(0xffff'ffff'ffff'ffffull).str(), "2001:2::ffff:ffff:ffff:ffff");
    EXPECT_EQ(parse_ip("2001:2::ffff:ffff:ffff:ffff", "x").plus(1).str(), "2001:2:0:1::");
    EXPECT_EQ(parse_ip("ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff", "x").plus(1).str(), "::");
    EXPECT_TRUE(parse_ip("2001:2::", "x").plus(1).v6);
    EXPECT_FALSE(parse_ip("198.18.0.1", "x").plus(1).v6);
}

TEST(Addr, BenchmarkRangeEdges) {
    auto in = [](const char* s) { return in_benchmark_range(parse_ip(s, "x")); };
    EXPECT_FALSE(in("198.17.255.255"));
    EXPECT_TRUE(in("198.18.0.0"));
    EXPECT_TRUE(in("198.19.255.255"));
    EXPECT_FALSE(in("198.20.0.0"));
    EXPECT_FALSE(in("10.0.0.1"));
    EXPECT_TRUE(in("2001:2::"));
    EXPECT_TRUE(in("2001:2::1"));
    EXPECT_TRUE(in("2001:2:0:ffff:ffff:ffff:ffff:ffff"));
    EXPECT_FALSE(in("2001:2:1::"));
    EXPECT_FALSE(in("2001:1:ffff:ffff:ffff:ffff:ffff:ffff"));
    EXPECT_FALSE(in("2001:3::1"));
    EXPECT_FALSE(in("::ffff:198.18.0.1"));  // IPv4-mapped is IPv6, outside 2001:2::/48
}
