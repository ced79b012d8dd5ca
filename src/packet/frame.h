// Frame templates: Ethernet [+802.1Q] + IPv4/IPv6 + UDP/TCP, built once per flow.
// Sizes are Ethernet frame sizes *including* the 4-byte FCS, which the NIC appends;
// the bytes we build are therefore frame_size - 4 long.
#pragma once
#include <cstddef>
#include <cstdint>
#include <optional>
#include <vector>

#include "lr_shared.h"  // bpf/: LR_FCS_LEN, shared with the XDP programs
#include "packet/addr.h"

namespace lr::packet {

inline constexpr unsigned kFcsLen = LR_FCS_LEN;
inline constexpr unsigned kMinFrame = 64;    // incl. FCS
inline constexpr unsigned kMaxFrame = 9000;  // incl. FCS (jumbo)
inline constexpr unsigned kL1Overhead = 20;  // preamble 7 + SFD 1 + inter-frame gap 12

enum class L4 : uint8_t { udp, tcp };

struct FrameSpec {
    unsigned frame_size = 64;  // incl. FCS
    L4 l4 = L4::udp;
    std::optional<uint16_t> vlan;  // 802.1Q VID 0..4094 when set
    uint8_t vlan_pcp = 0;
    MacAddr src_mac{{0x02, 0x00, 0x00, 0x00, 0x00, 0x01}};
    MacAddr dst_mac{{0x02, 0x00, 0x00, 0x00, 0x00, 0x02}};
    IpAddr src_ip;  // family of src_ip decides IPv4/IPv6; dst_ip must match
    IpAddr dst_ip;
    uint16_t src_port = 1024;
    uint16_t dst_port = 1024;
    uint8_t ttl = 1;  // TTL or hop limit
    uint32_t tcp_seq = 1;
    uint8_t tos = 0;              // IPv4 TOS byte (DSCP << 2 | ECN) or IPv6 traffic class
    uint32_t flow_label = 0;      // IPv6 flow label (20 bits)
    uint8_t tcp_flags = 0x02;     // CWR ECE URG ACK PSH RST SYN FIN (bit 7 to 0): SYN
    uint16_t tcp_window = 65535;
    bool dont_fragment = true;    // IPv4 DF
    uint16_t ip_id = 0;           // IPv4 identification
    // A signed frame carries its run's identity in the IPv4 identification or the low 16 bits
    // of the IPv6 flow label, and its signature in TCP's sequence, acknowledgement and urgent
    // pointer (bpf/lr_wire.h): signing overwrites those values, and URG must stay unset.
};

// Header bytes before the L4 payload (Ethernet, optional VLAN, IP, L4).
unsigned header_len(const FrameSpec& s);
// Smallest frame size (incl. FCS) able to carry the headers of `s`, never below kMinFrame.
unsigned min_frame_size(const FrameSpec& s);
// Byte offset of the L4 payload inside the built frame.
inline unsigned payload_offset(const FrameSpec& s) { return header_len(s); }

// Builds the frame (without FCS) with correct IPv4 header, UDP and TCP checksums.
// Payload bytes are zero. Throws lr::UsageError if the spec is inconsistent
// (size out of range, size too small for the headers, mixed address families, VLAN > 4094,
// a flow label above 20 bits).
std::vector<uint8_t> build_frame(const FrameSpec& s);

}  // namespace lr::packet
