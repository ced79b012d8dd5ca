#include "packet/frame.h"

#include <algorithm>
#include <cstring>
#include <string>

#include "packet/checksum.h"
#include "util/error.h"

namespace lr::packet {
namespace {

constexpr unsigned kEthLen = 14, kVlanLen = 4, kIp4Len = 20, kIp6Len = 40, kUdpLen = 8, kTcpLen = 20;
constexpr uint16_t kEtherIpv4 = 0x0800, kEtherIpv6 = 0x86dd, kTpid8021q = 0x8100;
constexpr uint8_t kProtoTcp = 6, kProtoUdp = 17;
constexpr uint16_t kMaxVlanId = 4094;
constexpr uint8_t kMaxPcp = 7;
constexpr uint32_t kMaxFlowLabel = (1u << 20) - 1;
constexpr uint16_t kIp4DontFragment = 0x4000;

void put16(uint8_t* p, uint16_t v) {
    p[0] = static_cast<uint8_t>(v >> 8);
    p[1] = static_cast<uint8_t>(v);
}

void put32(uint8_t* p, uint32_t v) {
    put16(p, static_cast<uint16_t>(v >> 16));
    put16(p + 2, static_cast<uint16_t>(v));
}

std::string kind(const FrameSpec& s) {
    std::string k = s.src_ip.v6 ? "IPv6/" : "IPv4/";
    k += s.l4 == L4::udp ? "UDP" : "TCP";
    if (s.vlan) k += " with VLAN";
    return k;
}

void validate(const FrameSpec& s) {
    using std::to_string;
    if (s.src_ip.v6 != s.dst_ip.v6)
        throw UsageError("source address " + s.src_ip.str() + " and destination address " + s.dst_ip.str() +
                         " are of different address families");
    if (s.vlan && *s.vlan > kMaxVlanId)
        throw UsageError("VLAN id " + to_string(*s.vlan) + " is out of range: must be 0.." + to_string(kMaxVlanId));
    if (s.flow_label > kMaxFlowLabel)
        throw UsageError("IPv6 flow label " + to_string(s.flow_label) + " is out of range: must be 0.." +
                         to_string(kMaxFlowLabel));
    if (s.vlan_pcp > kMaxPcp)
        throw UsageError("VLAN priority " + to_string(s.vlan_pcp) + " is out of range: must be 0.." +
                         to_string(kMaxPcp));
    if (s.frame_size < kMinFrame || s.frame_size > kMaxFrame)
        throw UsageError("frame size " + to_string(s.frame_size) + " is out of range: must be between " +
                         to_string(kMinFrame) + " and " + to_string(kMaxFrame) + " (incl. FCS)");
    const unsigned min = min_frame_size(s);
    if (s.frame_size < min)
        throw UsageError("frame size " + to_string(s.frame_size) + " is too small for " + kind(s) +
                         ": minimum is " + to_string(min));
}

// One's-complement partial sum of the TCP/UDP pseudo-header (RFC 768 / 793 / 8200 8.1).
uint32_t pseudo_header_sum(const FrameSpec& s, uint8_t proto, unsigned l4_len) {
    uint8_t ph[40] = {};
    if (!s.src_ip.v6) {
        std::memcpy(ph, s.src_ip.b.data(), 4);
        std::memcpy(ph + 4, s.dst_ip.b.data(), 4);
        ph[9] = proto;
        put16(ph + 10, static_cast<uint16_t>(l4_len));
        return csum_partial(ph, 12);
    }
    std::memcpy(ph, s.src_ip.b.data(), 16);
    std::memcpy(ph + 16, s.dst_ip.b.data(), 16);
    put32(ph + 32, l4_len);
    ph[39] = proto;
    return csum_partial(ph, 40);
}

}  // namespace

unsigned header_len(const FrameSpec& s) {
    return kEthLen + (s.vlan ? kVlanLen : 0) + (s.src_ip.v6 ? kIp6Len : kIp4Len) +
           (s.l4 == L4::udp ? kUdpLen : kTcpLen);
}

unsigned min_frame_size(const FrameSpec& s) { return std::max(kMinFrame, header_len(s) + kFcsLen); }

std::vector<uint8_t> build_frame(const FrameSpec& s) {
    validate(s);
    const unsigned len = s.frame_size - kFcsLen;
    std::vector<uint8_t> f(len, 0);  // zero payload; every header field not set below is 0

    // Ethernet II, optionally 802.1Q tagged.
    uint8_t* p = f.data();
    std::memcpy(p, s.dst_mac.b.data(), 6);
    std::memcpy(p + 6, s.src_mac.b.data(), 6);
    p += 12;
    if (s.vlan) {
        put16(p, kTpid8021q);
        put16(p + 2, static_cast<uint16_t>(s.vlan_pcp << 13 | *s.vlan));  // PCP, DEI 0, VID
        p += 4;
    }
    const bool v6 = s.src_ip.v6;
    put16(p, v6 ? kEtherIpv6 : kEtherIpv4);
    p += 2;

    // IP: lengths cover everything up to the end of the built frame.
    uint8_t* ip = p;
    const unsigned ip_len = len - static_cast<unsigned>(ip - f.data());
    const unsigned ip_hdr = v6 ? kIp6Len : kIp4Len;
    const unsigned l4_len = ip_len - ip_hdr;
    const uint8_t proto = s.l4 == L4::udp ? kProtoUdp : kProtoTcp;
    if (!v6) {
        ip[0] = 0x45;  // version 4, IHL 5
        ip[1] = s.tos;
        put16(ip + 2, static_cast<uint16_t>(ip_len));
        put16(ip + 4, s.ip_id);
        put16(ip + 6, s.dont_fragment ? kIp4DontFragment : 0);  // fragment offset 0
        ip[8] = s.ttl;
        ip[9] = proto;
        std::memcpy(ip + 12, s.src_ip.b.data(), 4);
        std::memcpy(ip + 16, s.dst_ip.b.data(), 4);
        put16(ip + 10, inet_checksum(ip, kIp4Len));
    } else {
        put32(ip, 6u << 28 | uint32_t{s.tos} << 20 | s.flow_label);  // version, traffic class, flow label
        put16(ip + 4, static_cast<uint16_t>(l4_len));
        ip[6] = proto;
        ip[7] = s.ttl;
        std::memcpy(ip + 8, s.src_ip.b.data(), 16);
        std::memcpy(ip + 24, s.dst_ip.b.data(), 16);
    }

    // UDP or TCP, checksummed over the pseudo-header, header and zero payload.
    uint8_t* l4 = ip + ip_hdr;
    put16(l4, s.src_port);
    put16(l4 + 2, s.dst_port);
    const uint32_t pseudo = pseudo_header_sum(s, proto, l4_len);
    if (s.l4 == L4::udp) {
        put16(l4 + 4, static_cast<uint16_t>(l4_len));
        const uint16_t c = inet_checksum(l4, l4_len, pseudo);
        put16(l4 + 6, c == 0 ? 0xffff : c);  // 0 would mean "no checksum" (RFC 768)
    } else {
        put32(l4 + 4, s.tcp_seq);  // ack number stays 0
        l4[12] = 5 << 4;           // data offset 5 words, no options
        l4[13] = s.tcp_flags;
        put16(l4 + 14, s.tcp_window);  // urgent pointer stays 0
        put16(l4 + 16, inet_checksum(l4, l4_len, pseudo));
    }
    return f;
}

}  // namespace lr::packet
