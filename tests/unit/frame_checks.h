// Frame checks shared by the unit tests: the IPv4 header checksum and the L4 checksum over
// the pseudo-header, read from the frame itself (independent of linerate's own code paths).
#pragma once
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <vector>

#include "packet/checksum.h"

namespace lr::test_support {

using packet::csum_partial;

inline uint16_t get16(const std::vector<uint8_t>& f, size_t off) { return static_cast<uint16_t>(f[off] << 8 | f[off + 1]); }

// Verifies the IPv4 header checksum and the L4 checksum over the pseudo-header, reading
// every input from the built frame itself (independent of the builder's own code paths).
inline void expect_checksums_verify(const std::vector<uint8_t>& f, bool vlan) {
    const size_t ip = vlan ? 18 : 14;
    const uint16_t ethertype = get16(f, ip - 2);
    if (ethertype == 0x0800) {
        EXPECT_EQ(csum_partial(&f[ip], 20), 0xffffu);
        const unsigned l4len = get16(f, ip + 2) - 20u;
        ASSERT_EQ(ip + 20 + l4len, f.size());
        uint8_t ph[12] = {};
        std::copy(&f[ip + 12], &f[ip + 20], ph);  // source and destination
        ph[9] = f[ip + 9];
        ph[10] = static_cast<uint8_t>(l4len >> 8);
        ph[11] = static_cast<uint8_t>(l4len);
        EXPECT_EQ(csum_partial(&f[ip + 20], l4len, csum_partial(ph, sizeof ph)), 0xffffu);
    } else {
        ASSERT_EQ(ethertype, 0x86dd);
        const unsigned l4len = get16(f, ip + 4);
        ASSERT_EQ(ip + 40 + l4len, f.size());
        uint8_t ph[40] = {};
        std::copy(&f[ip + 8], &f[ip + 40], ph);
        ph[34] = static_cast<uint8_t>(l4len >> 8);
        ph[35] = static_cast<uint8_t>(l4len);
        ph[39] = f[ip + 6];
        EXPECT_EQ(csum_partial(&f[ip + 40], l4len, csum_partial(ph, sizeof ph)), 0xffffu);
    }
}

}  // namespace lr::test_support
