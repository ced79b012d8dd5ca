// Internet checksum (RFC 1071) and incremental update (RFC 1624).
#pragma once
#include <cstddef>
#include <cstdint>

namespace lr::packet {

// One's-complement sum of `len` bytes (network order), folded to 16 bits, NOT complemented.
// `initial` lets callers chain partial sums (e.g. a pseudo-header).
uint32_t csum_partial(const void* data, size_t len, uint32_t initial = 0);
// Folds a 32-bit partial sum and complements it: the value to store in a header.
uint16_t csum_fold(uint32_t sum);
// csum_fold(csum_partial(data, len, initial)).
uint16_t inet_checksum(const void* data, size_t len, uint32_t initial = 0);
// RFC 1624 eqn. 3: new checksum when a 16-bit field changes from old_val to new_val.
// All values in network byte order as stored in the packet.
uint16_t csum_update16(uint16_t old_csum, uint16_t old_val, uint16_t new_val);
// Same for a 32-bit field (two 16-bit halves).
uint16_t csum_update32(uint16_t old_csum, uint32_t old_val, uint32_t new_val);

}  // namespace lr::packet
