#include "packet/frame.h"

#include <cstring>
#include <fmt/format.h>

#include "packet/checksum.h"
#include "util/error.h"

namespace lr::packet {
namespace {

constexpr unsigned kEth = 14, kVlan = 4, kIp4 = 20, kIp6 = 40, kUdp = 8, kTcp = 20;

void put16(uint8_t* p, uint16_t v) {
    p[0] = static_cast<uint8_t>(v >> 8);
    p[1] = static_cast<uint8_t>(v);
}

void put32(uint8_t* p, uint32_t v) {
    put16(p, static_cast<uint16_t>(v >> 16));
    put16(p + 2, static_cast<uint16_t>(v));
}

std::string kind(const FrameSpec& s) {
    return fmt::format("{}/{}{}", s.src_ip.v6 ? "IPv6" : "IPv4", s.l4 == L4::udp ? "UDP" : "TCP",
                       s.vlan ? " with VLAN" : "");
}

}  // namespace

unsigned header_len(const FrameSpec& s) {
    return kEth + (s.vlan ? kVlan : 0) + (s.src_ip.v6 ? kIp6 : kIp4) + (s.l4 == L4::udp ? kUdp : kTcp);
}

unsigned min_frame_size(const FrameSpec& s) { return std::max(kMinFrame, header_len(s) + kFcsLen); }

std::vector<uint8_t> build_frame(const FrameSpec& s) {
    if (s.frame_size < kMinFrame || s.frame_size > kMaxFrame)
        throw UsageError(fmt::format("frame size {} is out of range: must be between {} and {} (incl. FCS)",
                                     s.frame_size, kMinFrame, kMaxFrame));
    if (s.frame_size < min_frame_size(s))
        throw UsageError(fmt::format("frame size {} is too small for {}: minimum is {}", s.frame_size, kind(s),
                                     min_frame_size(s)));
    if (s.src_ip.v6 != s.dst_ip.v6)
        throw UsageError(fmt::format("source {} and destination {} are of different address families",
                                     s.src_ip.str(), s.dst_ip.str()));
    if (s.vlan && *s.vlan > 4094) throw UsageError(fmt::format("VLAN id {} is out of range 0..4094", *s.vlan));
    if (s.vlan_pcp > 7) throw UsageError(fmt::format("VLAN priority {} is out of range 0..7", s.vlan_pcp));

    const unsigned len = s.frame_size - kFcsLen;
    std::vector<uint8_t> f(len, 0);
    uint8_t* p = f.data();
    std::memcpy(p, s.dst_mac.b.data(), 6);
    std::memcpy(p + 6, s.src_mac.b.data(), 6);
    p += 12;
    if (s.vlan) {
        put16(p, 0x8100);
        put16(p + 2, static_cast<uint16_t>(s.vlan_pcp << 13 | *s.vlan));
        p += 4;
    }
    const bool v6 = s.src_ip.v6;
    const uint8_t proto = s.l4 == L4::udp ? 17 : 6;
    put16(p, v6 ? 0x86dd : 0x0800);
    p += 2;
    uint8_t* ip = p;
    const unsigned ip_len = len - static_cast<unsigned>(ip - f.data());
    const unsigned l4_len = ip_len - (v6 ? kIp6 : kIp4);
    uint32_t pseudo = 0;
    if (!v6) {
        ip[0] = 0x45;
        put16(ip + 2, static_cast<uint16_t>(ip_len));
        put16(ip + 6, 0x4000);  // DF
        ip[8] = s.ttl;
        ip[9] = proto;
        std::memcpy(ip + 12, s.src_ip.b.data(), 4);
        std::memcpy(ip + 16, s.dst_ip.b.data(), 4);
        put16(ip + 10, inet_checksum(ip, kIp4));
        uint8_t ph[12] = {};
        std::memcpy(ph, s.src_ip.b.data(), 4);
        std::memcpy(ph + 4, s.dst_ip.b.data(), 4);
        ph[9] = proto;
        put16(ph + 10, static_cast<uint16_t>(l4_len));
        pseudo = csum_partial(ph, sizeof ph);
    } else {
        put32(ip, 0x60000000u);
        put16(ip + 4, static_cast<uint16_t>(l4_len));
        ip[6] = proto;
        ip[7] = s.ttl;
        std::memcpy(ip + 8, s.src_ip.b.data(), 16);
        std::memcpy(ip + 24, s.dst_ip.b.data(), 16);
        uint8_t ph[40] = {};
        std::memcpy(ph, s.src_ip.b.data(), 16);
        std::memcpy(ph + 16, s.dst_ip.b.data(), 16);
        put32(ph + 32, l4_len);
        ph[39] = proto;
        pseudo = csum_partial(ph, sizeof ph);
    }
    uint8_t* l4 = ip + (v6 ? kIp6 : kIp4);
    put16(l4, s.src_port);
    put16(l4 + 2, s.dst_port);
    if (s.l4 == L4::udp) {
        put16(l4 + 4, static_cast<uint16_t>(l4_len));
        uint16_t c = inet_checksum(l4, l4_len, pseudo);
        put16(l4 + 6, c == 0 ? 0xffff : c);  // 0 means "no checksum" in UDP
    } else {
        put32(l4 + 4, s.tcp_seq);
        l4[12] = 5 << 4;  // data offset: 5 words, no options
        l4[13] = 0x02;    // SYN
        put16(l4 + 14, 65535);
        put16(l4 + 16, inet_checksum(l4, l4_len, pseudo));
    }
    return f;
}

}  // namespace lr::packet
