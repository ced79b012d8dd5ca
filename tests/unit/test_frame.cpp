#include <gtest/gtest.h>

#include "packet/checksum.h"
#include "packet/frame.h"
#include "reference_frames.h"
#include "util/error.h"

using namespace lr::packet;

namespace {

FrameSpec spec(unsigned size, L4 l4, bool v6 = false) {
    FrameSpec s;
    s.frame_size = size;
    s.l4 = l4;
    s.src_ip = parse_ip(v6 ? "2001:2::1" : "198.18.0.1", "src");
    s.dst_ip = parse_ip(v6 ? "2001:2::2" : "198.18.0.2", "dst");
    return s;
}

void expect_bytes(const std::vector<uint8_t>& got, const std::vector<uint8_t>& want) {
    ASSERT_EQ(got.size(), want.size());
    for (size_t i = 0; i < want.size(); ++i) ASSERT_EQ(got[i], want[i]) << "first difference at byte " << i;
}

}  // namespace

TEST(Frame, MatchesScapyReferenceFrames) {
    expect_bytes(build_frame(spec(64, L4::udp)), ref::ipv4_udp_64);
    expect_bytes(build_frame(spec(64, L4::tcp)), ref::ipv4_tcp_64);
    expect_bytes(build_frame(spec(66, L4::udp, true)), ref::ipv6_udp_66);
    expect_bytes(build_frame(spec(78, L4::tcp, true)), ref::ipv6_tcp_78);
    auto v = spec(64, L4::udp);
    v.vlan = 100;
    v.vlan_pcp = 3;
    expect_bytes(build_frame(v), ref::ipv4_udp_vlan100_pcp3_64);
    auto v6 = spec(82, L4::tcp, true);
    v6.vlan = 7;
    expect_bytes(build_frame(v6), ref::ipv6_tcp_vlan7_82);
    expect_bytes(build_frame(spec(1518, L4::udp)), ref::ipv4_udp_1518);
    auto p = spec(64, L4::udp);
    p.src_port = 40000;
    p.dst_port = 7;
    expect_bytes(build_frame(p), ref::ipv4_udp_ports_64);
    expect_bytes(build_frame(spec(9000, L4::udp, true)), ref::ipv6_udp_9000);
}

TEST(Frame, LengthIsSizeMinusFcs) {
    for (unsigned size : {64u, 65u, 128u, 1500u, 1518u, 9000u})
        EXPECT_EQ(build_frame(spec(size, L4::udp)).size(), size - 4);
}

TEST(Frame, HeaderLengthsAndMinimumSizes) {
    auto s = spec(64, L4::udp);
    EXPECT_EQ(header_len(s), 42u);
    EXPECT_EQ(min_frame_size(s), 64u);
    s.l4 = L4::tcp;
    EXPECT_EQ(header_len(s), 54u);
    EXPECT_EQ(min_frame_size(s), 64u);
    auto s6 = spec(64, L4::udp, true);
    EXPECT_EQ(header_len(s6), 62u);
    EXPECT_EQ(min_frame_size(s6), 66u);
    s6.l4 = L4::tcp;
    EXPECT_EQ(min_frame_size(s6), 78u);
    s6.vlan = 1;
    EXPECT_EQ(min_frame_size(s6), 82u);
    EXPECT_EQ(payload_offset(s6), 78u);
}

TEST(Frame, ChecksumsVerifyOverEverySize) {
    // For every size 64..300 the IPv4 header sums to 0xffff and the UDP/TCP checksum
    // verifies over the pseudo-header (an independent check of the builder's arithmetic).
    for (unsigned size = 64; size <= 300; ++size)
        for (L4 l4 : {L4::udp, L4::tcp}) {
            auto f = build_frame(spec(size, l4));
            const uint8_t* ip = f.data() + 14;
            EXPECT_EQ(csum_partial(ip, 20), 0xffffu) << size;
            const unsigned l4len = size - 4 - 34;
            uint8_t ph[12] = {198, 18, 0, 1, 198, 18, 0, 2, 0, static_cast<uint8_t>(l4 == L4::udp ? 17 : 6),
                              static_cast<uint8_t>(l4len >> 8), static_cast<uint8_t>(l4len)};
            EXPECT_EQ(csum_partial(f.data() + 34, l4len, csum_partial(ph, 12)), 0xffffu) << size;
        }
}

TEST(Frame, RejectsInvalidSpecs) {
    auto expect_err = [](FrameSpec s, const std::string& needle) {
        try {
            build_frame(s);
            FAIL() << "expected error: " << needle;
        } catch (const lr::UsageError& e) {
            EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
        }
    };
    expect_err(spec(63, L4::udp), "between 64 and 9000");
    expect_err(spec(9001, L4::udp), "between 64 and 9000");
    expect_err(spec(64, L4::tcp, true), "too small for IPv6/TCP: minimum is 78");
    expect_err(spec(65, L4::udp, true), "too small for IPv6/UDP: minimum is 66");
    auto mixed = spec(128, L4::udp);
    mixed.dst_ip = parse_ip("2001:2::2", "dst");
    expect_err(mixed, "different address families");
    auto vlan = spec(64, L4::udp);
    vlan.vlan = 4095;
    expect_err(vlan, "VLAN id 4095");
    vlan.vlan = 1;
    vlan.vlan_pcp = 8;
    expect_err(vlan, "priority 8");
}
