#include "packet/tcp_segment.h"

#include <algorithm>
#include <string>

#include "packet/checksum.h"
#include "util/error.h"

namespace lr::packet {
namespace {

constexpr uint32_t kEth = 14, kTag = 4, kIp4 = 20, kIp6 = 40, kTcp = 20, kMss = 4, kMinLen = 60;
constexpr uint16_t kIpv4Type = 0x0800, kIpv6Type = 0x86dd, kTagType = 0x8100;
constexpr uint8_t kProtoTcp = 6;

uint16_t rd16(const uint8_t* p) { return static_cast<uint16_t>(p[0] << 8 | p[1]); }
uint32_t rd32(const uint8_t* p) { return uint32_t{rd16(p)} << 16 | rd16(p + 2); }
void put16(uint8_t* p, uint16_t v) {
    p[0] = static_cast<uint8_t>(v >> 8);
    p[1] = static_cast<uint8_t>(v);
}
void put32(uint8_t* p, uint32_t v) {
    put16(p, static_cast<uint16_t>(v >> 16));
    put16(p + 2, static_cast<uint16_t>(v));
}

// The pseudo header's protocol and length words (RFC 793, RFC 8200 8.1): what its address
// bytes are summed onto.
uint32_t pseudo_seed(uint32_t l4_len) { return kProtoTcp + (l4_len >> 16) + (l4_len & 0xffff); }

}  // namespace

SegmentParse parse_tcp_segment(const uint8_t* f, uint32_t len, TcpSegment& s) {
    if (len < kEth) return SegmentParse::other;
    uint32_t o = 12;
    uint16_t type = rd16(f + o);
    s.vlan = type == kTagType;
    if (s.vlan) {
        if (len < kEth + kTag) return SegmentParse::other;
        o += kTag;
        type = rd16(f + o);
    }
    o += 2;
    s.l3 = o;
    uint32_t l4_len = 0, sum = 0;
    if (type == kIpv4Type) {
        if (len < o + kIp4) return SegmentParse::other;
        const uint8_t* ip = f + o;
        if ((ip[0] >> 4) != 4 || ip[9] != kProtoTcp || (rd16(ip + 6) & 0x3fff)) return SegmentParse::other;
        const uint32_t ihl = (ip[0] & 0xfu) * 4u, total = rd16(ip + 2);
        if (ihl < kIp4 || len < o + ihl || total < ihl + kTcp || o + total > len) return SegmentParse::malformed;
        if (inet_checksum(ip, ihl) != 0) return SegmentParse::malformed;
        s.ipv6 = false;
        s.l4 = o + ihl;
        l4_len = total - ihl;
        sum = csum_partial(ip + 12, 8, pseudo_seed(l4_len));
    } else if (type == kIpv6Type) {
        if (len < o + kIp6) return SegmentParse::other;
        const uint8_t* ip = f + o;
        if ((ip[0] >> 4) != 6 || ip[6] != kProtoTcp) return SegmentParse::other;
        l4_len = rd16(ip + 4);
        if (l4_len < kTcp || o + kIp6 + l4_len > len) return SegmentParse::malformed;
        s.ipv6 = true;
        s.l4 = o + kIp6;
        sum = csum_partial(ip + 8, 32, pseudo_seed(l4_len));
    } else {
        return SegmentParse::other;
    }
    const uint8_t* t = f + s.l4;
    const uint32_t doff = (t[12] >> 4) * 4u;
    if (doff < kTcp || doff > l4_len) return SegmentParse::malformed;
    if (inet_checksum(t, l4_len, sum) != 0) return SegmentParse::malformed;
    s.sport = rd16(t);
    s.dport = rd16(t + 2);
    s.seq = rd32(t + 4);
    s.ack = rd32(t + 8);
    s.flags = t[13];
    s.data = l4_len - doff;
    return SegmentParse::tcp;
}

SynTemplate build_syn(const FrameSpec& s, uint16_t mss) {
    if (s.src_ip.v6 != s.dst_ip.v6)
        throw UsageError("source address " + s.src_ip.str() + " and destination address " + s.dst_ip.str() +
                         " are of different address families");
    if (s.vlan && *s.vlan > 4094)
        throw UsageError("VLAN id " + std::to_string(*s.vlan) + " is out of range: must be 0..4094");
    const bool v6 = s.src_ip.v6;
    const uint32_t l4_len = kTcp + kMss;
    const uint32_t hdr = kEth + (s.vlan ? kTag : 0) + (v6 ? kIp6 : kIp4);
    SynTemplate t;
    t.frame.assign(std::max(hdr + l4_len, kMinLen), 0);
    uint8_t* p = t.frame.data();
    std::memcpy(p, s.dst_mac.b.data(), 6);
    std::memcpy(p + 6, s.src_mac.b.data(), 6);
    uint32_t o = 12;
    if (s.vlan) {
        put16(p + o, kTagType);
        put16(p + o + 2, static_cast<uint16_t>(s.vlan_pcp << 13 | *s.vlan));
        o += kTag;
    }
    put16(p + o, v6 ? kIpv6Type : kIpv4Type);
    o += 2;
    uint8_t* ip = p + o;
    uint32_t sum = 0;
    if (!v6) {
        ip[0] = 0x45;
        ip[1] = s.tos;
        put16(ip + 2, static_cast<uint16_t>(kIp4 + l4_len));
        put16(ip + 6, 0x4000);  // DF
        ip[8] = s.ttl;
        ip[9] = kProtoTcp;
        std::memcpy(ip + 12, s.src_ip.b.data(), 4);
        std::memcpy(ip + 16, s.dst_ip.b.data(), 4);
        put16(ip + 10, inet_checksum(ip, kIp4));
        sum = csum_partial(ip + 12, 8, pseudo_seed(l4_len));
        o += kIp4;
    } else {
        put32(ip, 6u << 28 | uint32_t{s.tos} << 20 | s.flow_label);
        put16(ip + 4, static_cast<uint16_t>(l4_len));
        ip[6] = kProtoTcp;
        ip[7] = s.ttl;
        std::memcpy(ip + 8, s.src_ip.b.data(), 16);
        std::memcpy(ip + 24, s.dst_ip.b.data(), 16);
        sum = csum_partial(ip + 8, 32, pseudo_seed(l4_len));
        o += kIp6;
    }
    uint8_t* tcp = p + o;
    put16(tcp + 2, s.dst_port);  // source port and sequence: per connection (stamp_syn)
    tcp[12] = static_cast<uint8_t>((l4_len / 4) << 4);
    tcp[13] = kTcpSyn;
    put16(tcp + 14, s.tcp_window);
    tcp[20] = 2;  // MSS: kind, length, value
    tcp[21] = 4;
    put16(tcp + 22, mss);
    t.sport_off = o;
    t.seq_off = o + 4;
    t.csum_off = o + 16;
    t.sum = csum_partial(tcp, l4_len, sum);
    return t;
}

uint32_t write_reply(uint8_t* out, const uint8_t* in, const TcpSegment& s, uint32_t seq, uint32_t ack, uint8_t flags,
                     uint8_t ttl) {
    std::memcpy(out, in + 6, 6);  // to whoever sent it, from the address it was sent to
    std::memcpy(out + 6, in, 6);
    uint32_t o = 12;
    if (s.vlan) {
        std::memcpy(out + o, in + o, kTag);
        o += kTag;
    }
    put16(out + o, s.ipv6 ? kIpv6Type : kIpv4Type);
    o += 2;
    uint8_t* ip = out + o;
    const uint8_t* from = in + s.l3;
    uint32_t sum = 0;
    if (!s.ipv6) {
        std::memset(ip, 0, kIp4);
        ip[0] = 0x45;
        put16(ip + 2, kIp4 + kTcp);
        put16(ip + 6, 0x4000);
        ip[8] = ttl;
        ip[9] = kProtoTcp;
        std::memcpy(ip + 12, from + 16, 4);
        std::memcpy(ip + 16, from + 12, 4);
        put16(ip + 10, inet_checksum(ip, kIp4));
        sum = csum_partial(ip + 12, 8, pseudo_seed(kTcp));
        o += kIp4;
    } else {
        put32(ip, 6u << 28);
        put16(ip + 4, kTcp);
        ip[6] = kProtoTcp;
        ip[7] = ttl;
        std::memcpy(ip + 8, from + 24, 16);
        std::memcpy(ip + 24, from + 8, 16);
        sum = csum_partial(ip + 8, 32, pseudo_seed(kTcp));
        o += kIp6;
    }
    uint8_t* t = out + o;
    put16(t, s.dport);
    put16(t + 2, s.sport);
    put32(t + 4, seq);
    put32(t + 8, (flags & kTcpAck) ? ack : 0);
    t[12] = 5 << 4;
    t[13] = flags;
    put16(t + 14, (flags & kTcpRst) ? 0 : 65535);
    put32(t + 16, 0);  // checksum, urgent pointer
    put16(t + 16, inet_checksum(t, kTcp, sum));
    uint32_t n = o + kTcp;
    if (n < kMinLen) {
        std::memset(out + n, 0, kMinLen - n);
        n = kMinLen;
    }
    return n;
}

}  // namespace lr::packet
