#include "packet/checksum.h"

#include <bit>
#include <cstring>

namespace lr::packet {
namespace {

constexpr bool kLittle = std::endian::native == std::endian::little;

uint16_t swap16(uint16_t v) { return static_cast<uint16_t>((v >> 8) | (v << 8)); }

// End-around-carry fold of a 64-bit accumulator to 16 bits (0 only for a zero sum).
uint16_t fold64(uint64_t s) {
    s = (s & 0xffffffffu) + (s >> 32);
    s = (s & 0xffffffffu) + (s >> 32);
    s = (s & 0xffff) + (s >> 16);
    s = (s & 0xffff) + (s >> 16);
    return static_cast<uint16_t>(s);
}

}  // namespace

// The one's-complement sum is byte-order independent (RFC 1071 2.B): words are summed in
// native order and the folded result is byte-swapped once. Loads go through memcpy, so any
// alignment is fine and no object is accessed through a foreign type.
uint32_t csum_partial(const void* data, size_t len, uint32_t initial) {
    const auto* p = static_cast<const uint8_t*>(data);
    const uint16_t init16 = fold64(initial);
    uint64_t sum = kLittle ? swap16(init16) : init16;
    while (len >= 8) {
        uint64_t w;
        std::memcpy(&w, p, 8);
        // Two 32-bit halves, each the concatenation of two native-order 16-bit words:
        // 2^16 == 1 (mod 0xffff), so adding them as 32-bit numbers is a valid partial sum.
        sum += (w & 0xffffffffu) + (w >> 32);
        if (sum >> 62) sum = fold64(sum);  // only for multi-gigabyte inputs
        p += 8;
        len -= 8;
    }
    while (len >= 2) {
        uint16_t w;
        std::memcpy(&w, p, 2);
        sum += w;
        p += 2;
        len -= 2;
    }
    if (len) {
        // The odd trailing byte is the high byte of a big-endian word padded with zero.
        const uint8_t last[2] = {p[0], 0};
        uint16_t w;
        std::memcpy(&w, last, 2);
        sum += w;
    }
    const uint16_t s16 = fold64(sum);
    return kLittle ? swap16(s16) : s16;
}

uint16_t csum_fold(uint32_t sum) { return static_cast<uint16_t>(~fold64(sum)); }

uint16_t inet_checksum(const void* data, size_t len, uint32_t initial) {
    return csum_fold(csum_partial(data, len, initial));
}

uint16_t csum_update16(uint16_t old_csum, uint16_t old_val, uint16_t new_val) {
    // RFC 1624 eqn. 3: HC' = ~(~HC + ~m + m'). Unlike eqn. 2 this never yields 0xffff
    // where a full recomputation would give 0x0000.
    const uint32_t s = uint32_t{static_cast<uint16_t>(~old_csum)} + uint32_t{static_cast<uint16_t>(~old_val)} +
                       uint32_t{new_val};
    return csum_fold(s);
}

uint16_t csum_update32(uint16_t old_csum, uint32_t old_val, uint32_t new_val) {
    const uint16_t hi = csum_update16(old_csum, static_cast<uint16_t>(old_val >> 16),
                                      static_cast<uint16_t>(new_val >> 16));
    return csum_update16(hi, static_cast<uint16_t>(old_val), static_cast<uint16_t>(new_val));
}

}  // namespace lr::packet
