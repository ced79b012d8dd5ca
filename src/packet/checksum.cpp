#include "packet/checksum.h"

#include <cstring>

namespace lr::packet {

namespace {

bool little_endian() {
    const uint16_t one = 1;
    uint8_t first;
    std::memcpy(&first, &one, 1);
    return first == 1;
}

uint16_t swap16(uint16_t v) { return static_cast<uint16_t>((v >> 8) | (v << 8)); }

}  // namespace

// The one's-complement sum is byte-order independent (RFC 1071 2.B): sum native words, then
// swap once. `initial` and the result are numeric values of the network-order sum.
uint32_t csum_partial(const void* data, size_t len, uint32_t initial) {
    const auto* p = static_cast<const uint8_t*>(data);
    while (initial >> 16) initial = (initial & 0xffff) + (initial >> 16);
    const bool le = little_endian();
    uint64_t sum = le ? swap16(static_cast<uint16_t>(initial)) : initial;
    // 8 bytes at a time (memcpy: no alignment or aliasing assumptions), as big-endian words.
    while (len >= 8) {
        uint64_t w;
        std::memcpy(&w, p, 8);
        // Sum native-order 32-bit halves; byte order is fixed up once at the end.
        sum += (w & 0xffffffffu) + (w >> 32);
        p += 8;
        len -= 8;
    }
    uint64_t tail = 0;
    while (len >= 2) {
        uint16_t w;
        std::memcpy(&w, p, 2);
        tail += w;
        p += 2;
        len -= 2;
    }
    if (len) {
        uint16_t w = 0;
        std::memcpy(&w, p, 1);  // odd byte is the high byte of a big-endian word
        tail += w;
    }
    sum += tail;
    while (sum >> 16) sum = (sum & 0xffff) + (sum >> 16);
    const uint16_t s16 = static_cast<uint16_t>(sum);
    return le ? swap16(s16) : s16;
}

uint16_t csum_fold(uint32_t sum) {
    while (sum >> 16) sum = (sum & 0xffff) + (sum >> 16);
    return static_cast<uint16_t>(~sum & 0xffff);
}

uint16_t inet_checksum(const void* data, size_t len, uint32_t initial) {
    return csum_fold(csum_partial(data, len, initial));
}

uint16_t csum_update16(uint16_t old_csum, uint16_t old_val, uint16_t new_val) {
    // HC' = ~(~HC + ~m + m')  (RFC 1624, eqn. 3)
    uint32_t s = static_cast<uint16_t>(~old_csum) + static_cast<uint32_t>(static_cast<uint16_t>(~old_val)) + new_val;
    return csum_fold(s);
}

uint16_t csum_update32(uint16_t old_csum, uint32_t old_val, uint32_t new_val) {
    const uint16_t c = csum_update16(old_csum, static_cast<uint16_t>(old_val >> 16), static_cast<uint16_t>(new_val >> 16));
    return csum_update16(c, static_cast<uint16_t>(old_val & 0xffff), static_cast<uint16_t>(new_val & 0xffff));
}

}  // namespace lr::packet
