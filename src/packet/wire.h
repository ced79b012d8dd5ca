// The C++ side of the shared wire format (bpf/lr_wire.h, the only definition of the signature
// and of what counts as one of our frames). It supplies the format's checksum hook with a sum
// taken 8 bytes at a time, inlined into the receive path.
#pragma once
#include <cstdint>
#include <cstring>
#include <linux/types.h>

namespace lr::packet::detail {

// A T read from `p`, at any alignment, in native order (a memcpy the compiler makes one load).
template <class T>
[[gnu::always_inline]] inline T load(const uint8_t* p) {
    T v;
    std::memcpy(&v, p, sizeof v);
    return v;
}

// The one's-complement sum of `len` bytes taken as native-order 16-bit words, unfolded (any
// value congruent to it modulo 0xffff). Native-order words are summed 8 bytes at a time and
// the result swapped, if at all, once (RFC 1071 2.B); loads go through memcpy, so any
// alignment is fine. An odd last byte is the high byte of a big-endian word padded with zero.
inline uint64_t sum_native(const uint8_t* p, uint32_t len) {
    uint64_t s = 0;
    for (; len >= 8; p += 8, len -= 8) {
        uint64_t w;
        std::memcpy(&w, p, 8);
        s += (w & 0xffffffffu) + (w >> 32);  // 2^16 == 1 (mod 0xffff): 32-bit halves are partial sums
    }
    if (len >= 4) {
        uint32_t w;
        std::memcpy(&w, p, 4);
        s += w;
        p += 4;
        len -= 4;
    }
    if (len >= 2) {
        uint16_t w;
        std::memcpy(&w, p, 2);
        s += w;
        p += 2;
        len -= 2;
    }
    if (len) s += p[0];
    return s;
}

// The same sum (for a little-endian host) over 8-byte native words, kept as a 64-bit sum and the count of its carries
// (an add and an add-with-carry a word), from `sum` and `carries`. 2^64 == 1 (mod 0xffff), so
// a carry counts as 1 would.
struct WideSum {
    uint64_t sum = 0, carries = 0;
    void add(uint64_t w) {
        sum += w;
        carries += sum < w;
    }
};
// `len` is at least 8: the last 1-7 bytes are read as the 8 bytes that end the segment, the
// ones already summed shifted out (what remains starts at an even offset, so its bytes pair as
// the segment's words; an odd last byte is the low byte of a native word, as RFC 1071 pads it).
inline WideSum sum_native_wide(const uint8_t* p, uint32_t len, WideSum acc) {
    const uint8_t* const end = p + len;
    for (; len >= 8; p += 8, len -= 8) {
        uint64_t w;
        std::memcpy(&w, p, 8);
        acc.add(w);
    }
    if (len) {
        uint64_t w;
        std::memcpy(&w, end - 8, 8);
        acc.add(w >> (64 - 8 * len));
    }
    return acc;
}

// The same for a segment of 25 to 32 bytes (the fast lane's smallest frames carry 26): four
// loads and no loop, the last one the 8 bytes that end the segment with those already summed
// shifted out.
inline WideSum sum_native_short(const uint8_t* p, uint32_t len, WideSum acc) {
    acc.add(load<uint64_t>(p));
    acc.add(load<uint64_t>(p + 8));
    acc.add(load<uint64_t>(p + 16));
    acc.add(load<uint64_t>(p + len - 8) >> (8 * (32 - len)));
    return acc;
}

// Whether a sum taken as above folds to 0xffff, the one's-complement sum of a segment whose
// checksum is right: it is a multiple of 0xffff and not 0. The sum with its carries added
// around keeps both properties (2^64 - 1 is a multiple of 0xffff, and only a sum of zeros
// comes to 0): one multiply-based remainder instead of four folds.
inline bool folds_to_ffff(WideSum acc) {
    uint64_t s = acc.sum + acc.carries;
    s += s < acc.carries;  // the carry goes around
    return s != 0 && s % 0xffff == 0;
}

// `s` folded to 16 bits: the value in [1, 0xffff] congruent to it modulo 0xffff (0 for 0).
inline uint32_t fold16(uint64_t s) {
    s = (s & 0xffffffffu) + (s >> 32);
    s = (s & 0xffffffffu) + (s >> 32);
    s = (s & 0xffff) + (s >> 16);
    s = (s & 0xffff) + (s >> 16);
    return static_cast<uint32_t>(s);
}

// The one's-complement sum of the big-endian 16-bit words of `len` bytes, folded to 16 bits.
inline uint32_t sum_be16(const uint8_t* p, uint32_t len) {
    uint32_t s = fold16(sum_native(p, len));
    if constexpr (__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__) s = ((s & 0xff) << 8) | (s >> 8);
    return s;
}

// The IPv4 pseudo-header's protocol (UDP) and L4 length as native-order words (its addresses
// are summed where they lie in the IPv4 header).
inline uint64_t udp4_pseudo(uint32_t l4_len) {
    return __builtin_bswap16(17) + __builtin_bswap16(static_cast<uint16_t>(l4_len));
}

}  // namespace lr::packet::detail

static inline __u32 lr_wire_sum(const __u8* p, __u32 len, const __u8*, __u32 seed) {
    return seed + lr::packet::detail::sum_be16(p, len);
}

// A 48-bit big-endian field as one 8-byte load ending at its last byte, one byte swap and a
// mask (the byte-wise form compiles to 16 instructions). The two bytes read before `p` are
// inside the frame: every 48-bit field of the format lies at least 2 bytes into it (the
// signature's sequence, the first, is 2 bytes into the UDP payload).
#define LR_WIRE_HAVE_RD48 1
static inline __u64 lr_rd48(const __u8* p) {
    uint64_t w;
    std::memcpy(&w, p - 2, 8);
    if constexpr (__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__) w = __builtin_bswap64(w);
    return w & ((uint64_t(1) << 48) - 1);
}

#include "lr_wire.h"

namespace lr::packet {

// The receive path's fast lane for the frames linerate sends most: untagged IPv4 without
// options, carrying UDP with the full signature (sequence and timestamp). It answers only
// LR_OURS, and only for frames lr_wire_classify calls ours (same checks, same fields), read
// with a few wide loads, the checksum summed and checked in native byte order (a sum folds to
// 0xffff in one byte order exactly when it does in the other). For anything else it returns
// -1 and the general rules decide: a foreign, stale or malformed frame, a VLAN tag, IPv6, TCP,
// the short signature. The unit tests and the classify fuzzer hold both to the same answers.
[[gnu::always_inline]] inline int classify_fast(const uint8_t* p, uint32_t len, uint32_t nonce, uint32_t streams, bool csum_verified,
                         lr_wire_sig& s) {
    if constexpr (__BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__) return -1;
    constexpr uint32_t kEth = 14, kIp = 20, kUdp = 8, kMin = kIp + kUdp + LR_UDP_SIG_LEN;
    // Fields are compared as they lie in memory (little-endian loads, constants to match), a
    // few 8-byte words at a time; only the lengths and the stream id are byte-swapped.
    using detail::load;
    if (len < kEth + kMin) return -1;
    // Bytes 12-19: EtherType 08 00, version and header length 45, TOS, total length, and the
    // identification (the run identity's high half). Bytes 20-23: flags and fragment offset
    // (a fragment: 0x3fff, big-endian), TTL, protocol. The run identity's low half lies beside
    // the stream. The three checks that need no length are one test.
    const uint64_t eth_ip = load<uint64_t>(p + 12);
    const uint8_t* ip = p + kEth;
    const uint8_t* l4 = ip + kIp;
    const uint8_t* sig = l4 + kUdp;
    static_assert(LR_IP4_ID_HI == 4 && LR_UDP_STREAM == LR_UDP_NONCE + 2);
    const uint32_t nonce_stream = load<uint32_t>(sig + LR_UDP_NONCE);
    if (((eth_ip & 0xffffff) ^ 0x450008) |                               // IPv4, 20 bytes
        ((load<uint32_t>(p + 20) & 0xff00ff3f) ^ 0x11000000) |           // not a fragment; UDP
        ((static_cast<uint32_t>(eth_ip >> 48) | nonce_stream << 16) ^ __builtin_bswap32(nonce)))  // the run
        return -1;
    const uint32_t tot = __builtin_bswap16(static_cast<uint16_t>(eth_ip >> 32)), l4_len = tot - kIp;
    if (tot < kMin || l4_len > LR_MAX_L4_LEN || kEth + tot > len) return -1;
    // UDP length, UDP checksum (present: not 0), the signature's magic.
    const uint64_t udp = load<uint64_t>(l4 + 4);
    if ((udp & 0xffff0000ffff) != (uint64_t{__builtin_bswap16(LR_SIG_MAGIC)} << 32 | __builtin_bswap16(l4_len)) ||
        !(udp & 0xffff0000))
        return -1;
    s.nonce = nonce;
    s.stream = __builtin_bswap16(static_cast<uint16_t>(nonce_stream >> 16));
    if (s.stream >= streams) return -1;
    if (!csum_verified) {
        uint64_t addrs;  // source and destination addresses
        std::memcpy(&addrs, ip + 12, 8);
        const uint64_t pseudo = detail::udp4_pseudo(l4_len);
        static_assert(kMin - kIp >= 25, "the short sum takes 25 to 32 bytes");
        const detail::WideSum seed{addrs + pseudo, addrs + pseudo < pseudo};
        const detail::WideSum sum = l4_len <= 32 ? detail::sum_native_short(l4, l4_len, seed)
                                                 : detail::sum_native_wide(l4, l4_len, seed);
        if (!detail::folds_to_ffff(sum)) return -1;
    }
    s.seq = lr_rd48(sig + LR_UDP_SEQ);
    s.ts = lr_rd48(sig + LR_UDP_TS);
    s.seq_bits = 48;
    s.has_ts = 1;
    return LR_OURS;
}

}  // namespace lr::packet
