// The C++ side of the shared wire format (bpf/lr_wire.h, the only definition of the signature
// and of what counts as one of our frames). It supplies the format's checksum hook with a sum
// taken 8 bytes at a time, inlined into the receive path.
#pragma once
#include <cstdint>
#include <cstring>
#include <linux/types.h>

namespace lr::packet::detail {

// The one's-complement sum of the big-endian 16-bit words of `len` bytes, folded to 16 bits.
// Native-order words are summed and the result swapped once (RFC 1071 2.B); loads go through
// memcpy, so any alignment is fine.
inline uint32_t sum_be16(const uint8_t* p, uint32_t len) {
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
    if (len) s += p[0];  // the odd last byte: the high byte of a big-endian word padded with zero
    s = (s & 0xffffffffu) + (s >> 32);
    s = (s & 0xffffffffu) + (s >> 32);
    s = (s & 0xffff) + (s >> 16);
    s = (s & 0xffff) + (s >> 16);
    if constexpr (__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__) s = ((s & 0xff) << 8) | (s >> 8);
    return static_cast<uint32_t>(s);
}

}  // namespace lr::packet::detail

static inline __u32 lr_wire_sum(const __u8* p, __u32 len, const __u8*, __u32 seed) {
    return seed + lr::packet::detail::sum_be16(p, len);
}

#include "lr_wire.h"
