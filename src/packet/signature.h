// The linerate signature: magic, run nonce, stream id, sequence number and TX timestamp,
// carried in every frame that has room. Frames are built once; per packet only the
// sequence, timestamp and L4 checksum are written (engine/tx_signer.h).
//
// UDP, payload >= 18 bytes:              UDP, 12..17 bytes:       TCP (SYN):
//   payload[0..2)   magic 0x4C52 "LR"      [0..2)  magic            ack number   magic << 16 | nonce
//   payload[2..8)   sequence, 48 bits      [2..8)  sequence         urgent ptr   stream id
//   payload[8..14)  TX timestamp, 48 bits  [8..10) run nonce        seq number   sequence (low 32 bits)
//   payload[14..16) run nonce              [10..12) stream id       payload[0..6) TX timestamp,
//   payload[16..18) stream id                                                     48 bits (if room)
// All big-endian; the UDP length says which layout a frame has. Timestamps are
// CLOCK_MONOTONIC nanoseconds modulo 2^48 (78 hours).
// In UDP the per-packet fields (checksum, sequence, timestamp) and the magic between them
// are 16 contiguous bytes: the TX burst path writes them with one store (engine/tx_signer.h).
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "packet/frame.h"

struct lr_wire_sig;  // bpf/lr_wire.h

namespace lr::packet {

inline constexpr uint16_t kSigMagic = 0x4c52;  // LR_SIG_MAGIC (bpf/lr_wire.h, the format's definition)
inline constexpr uint32_t kMaxSignedFlows = 0xffff;  // the signature's stream id has 16 bits

// What a frame kind and size can carry.
enum class SigLevel : uint8_t { none = 0, seq = 1, seq_ts = 2 };
const char* sig_level_str(SigLevel l);

struct SigLayout {
    SigLevel level = SigLevel::none;
    bool tcp = false;
    bool v6 = false;
    uint16_t ip_off = 0;       // IP header offset in the frame
    uint16_t l4_off = 0;       // L4 header offset in the frame
    uint16_t csum_off = 0;     // L4 checksum offset
    uint16_t seq_off = 0;      // UDP: 6-byte sequence; TCP: the 4-byte TCP sequence field
    uint16_t ts_off = 0;       // 6-byte timestamp (level seq_ts only)
    uint16_t id_off = 0;       // UDP: run nonce then stream id (2 + 2 bytes)
    uint8_t seq_bits = 48;     // 48 (UDP) or 32 (TCP)
};

// Where the signature goes in frames of spec `s` (level none when there is no room).
SigLayout sig_layout(const FrameSpec& s);

// Writes magic, nonce and stream id into a built frame (once per template) and recomputes
// the L4 checksum. Sequence and timestamp start at zero.
void sig_init(std::vector<uint8_t>& frame, const SigLayout& l, uint32_t nonce, uint16_t stream);
// The same for a frame whose L4 segment (header and payload) is `l4_len` bytes from l.l4_off,
// which the caller has checked lie inside the frame; bytes after it (Ethernet padding after a
// short datagram) are not part of the checksum and are left alone.
void sig_init(uint8_t* frame, size_t l4_len, const SigLayout& l, uint32_t nonce, uint16_t stream);

// Stream id of a frame signed with layout `l` (a frame we built: no bounds checks needed).
inline uint16_t sig_stream(const uint8_t* f, const SigLayout& l) {
    const uint8_t* p = l.tcp ? f + l.l4_off + 18 : f + l.id_off + 2;
    return static_cast<uint16_t>(p[0] << 8 | p[1]);
}

// Reference stamp, independent of the TX path's arithmetic (tests build frames with it):
// patches sequence and timestamp into `frame` (laid out by `l`, with fields previously
// consistent with its checksum) and updates the L4 checksum incrementally (RFC 1624).
void sig_stamp(uint8_t* frame, const SigLayout& l, uint64_t seq, uint64_t ts_ns);

// ---- receive side -------------------------------------------------------------------

enum class FrameClass : uint8_t {
    foreign = 0,    // not a linerate test frame (no magic, not UDP/TCP, or another run's nonce)
    ours = 1,       // magic and nonce match, checksum verifies, fields consistent
    malformed = 2,  // magic and nonce match but the frame fails validation
};

struct SigInfo {
    FrameClass cls = FrameClass::foreign;
    bool stale = false;      // foreign because it carries the magic with another nonce
    bool has_ts = false;
    uint16_t stream = 0;
    uint64_t seq = 0;        // as on the wire (48 or 32 bits); extend with the tracker
    uint8_t seq_bits = 48;
    uint64_t ts_ns = 0;      // 48-bit timestamp
};

// Bounds-checked parse and classification of a received frame (without FCS), by the rules of
// bpf/lr_wire.h that linerate's XDP programs apply too. `streams` is the number of valid stream
// ids. Never reads outside [p, p + len).
SigInfo sig_classify(const uint8_t* p, size_t len, uint32_t nonce, uint32_t streams);
// The SigInfo of a verdict of lr_wire_classify (bpf/lr_wire.h) and the fields it read.
SigInfo sig_info(int verdict, const ::lr_wire_sig& s);


// Reflector: if `p` is a linerate test frame with a valid signature of any run (magic, lengths,
// checksum: the classifier's rules with any nonce), swaps Ethernet addresses, IP addresses and
// L4 ports in place and returns true. Swapping leaves every checksum valid. Bounds-checked;
// returns false (frame untouched) for anything else: a reflector never returns other traffic.
bool reflect_swap(uint8_t* p, size_t len);

}  // namespace lr::packet
