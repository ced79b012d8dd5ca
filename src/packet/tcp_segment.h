// The TCP segments of `linerate connect`: the SYN it opens each connection with (a template
// built once; its source port, sequence number and checksum written per connection), the
// listener's answers it reads (SYN-ACK, RST, FIN, ACK: parsed with every length and both
// checksums checked), and the segments it answers with (ACK, RST, FIN), written from the
// answer's own headers with addresses and ports swapped.
#pragma once
#include <cstdint>
#include <cstring>
#include <vector>

#include "packet/frame.h"

namespace lr::packet {

inline constexpr uint8_t kTcpFin = 0x01, kTcpSyn = 0x02, kTcpRst = 0x04, kTcpPsh = 0x08, kTcpAck = 0x10;

// A received segment: its fields (host byte order) and where its headers are in the frame.
struct TcpSegment {
    uint32_t l3 = 0;  // the IP header's offset (after Ethernet and an 802.1Q tag)
    uint32_t l4 = 0;  // the TCP header's offset
    bool ipv6 = false;
    bool vlan = false;
    uint16_t sport = 0, dport = 0;
    uint32_t seq = 0, ack = 0;
    uint8_t flags = 0;
    uint32_t data = 0;  // bytes of payload (SYN and FIN count one sequence number each besides)
};

enum class SegmentParse : uint8_t {
    tcp,        // a TCP segment, lengths and checksums right
    other,      // not TCP over IPv4 or IPv6 (ARP, UDP, a fragment, extension headers...)
    malformed,  // TCP, but a length or a checksum is wrong
};

// Parses an Ethernet frame of `len` bytes (FCS excluded; an optional 802.1Q tag) carrying
// IPv4 (unfragmented, options allowed) or IPv6 (TCP the next header) and TCP. Never reads
// outside [f, f + len).
SegmentParse parse_tcp_segment(const uint8_t* f, uint32_t len, TcpSegment& s);

// The SYN every connection starts with: Ethernet [+ 802.1Q], IPv4 or IPv6, TCP with an MSS
// option; no data. Built with source port 0 and sequence 0; stamp_syn() writes a connection's.
struct SynTemplate {
    std::vector<uint8_t> frame;  // without FCS, padded to the 60-byte minimum
    uint32_t sport_off = 0, seq_off = 0, csum_off = 0;
    uint32_t sum = 0;  // the TCP checksum's one's-complement sum without port and sequence (folded)
};

// `s` gives the addresses, the destination port, the VLAN, TTL/hop limit and TOS; its size,
// flags and source port are not used. `mss`: the MSS option's value. Throws UsageError when the
// spec's addresses are of different families or the VLAN is out of range.
SynTemplate build_syn(const FrameSpec& s, uint16_t mss);

// A connection's SYN in `f` (the template's bytes already there): source port, initial
// sequence number and the TCP checksum. A few stores; nothing else of the frame changes.
inline void stamp_syn(uint8_t* f, const SynTemplate& t, uint16_t sport, uint32_t isn) {
    uint32_t sum = t.sum + sport + (isn >> 16) + (isn & 0xffff);
    sum = (sum & 0xffff) + (sum >> 16);
    sum = (sum & 0xffff) + (sum >> 16);
    const uint16_t port_be = __builtin_bswap16(sport), csum_be = __builtin_bswap16(static_cast<uint16_t>(~sum));
    const uint32_t isn_be = __builtin_bswap32(isn);
    std::memcpy(f + t.sport_off, &port_be, 2);
    std::memcpy(f + t.seq_off, &isn_be, 4);
    std::memcpy(f + t.csum_off, &csum_be, 2);
}

// The longest segment write_reply() writes: Ethernet, 802.1Q, IPv6, TCP without options.
inline constexpr uint32_t kMaxReplyLen = 14 + 4 + 40 + 20;

// Writes into `out` (kMaxReplyLen bytes at least) the segment that answers the received frame
// `in` (`s` its parse): MAC addresses, IP addresses and ports swapped, the VLAN tag kept,
// `seq`, `ack` (ignored without kTcpAck in `flags`), `flags`, no options, no data, both
// checksums; padded with zeros to 60 bytes. Returns its length (FCS excluded).
uint32_t write_reply(uint8_t* out, const uint8_t* in, const TcpSegment& s, uint32_t seq, uint32_t ack, uint8_t flags,
                     uint8_t ttl);

}  // namespace lr::packet
