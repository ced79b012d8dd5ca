#include <gtest/gtest.h>

#include <random>
#include <vector>

#include "packet/checksum.h"

using namespace lr::packet;

namespace {

// Independent reference: big-endian 16-bit words summed into 64 bits, folded at the end.
uint16_t naive_sum(const uint8_t* p, size_t n, uint32_t init = 0) {
    uint64_t s = init;
    for (size_t i = 0; i + 1 < n; i += 2) s += uint32_t(p[i]) << 8 | p[i + 1];
    if (n & 1) s += uint32_t(p[n - 1]) << 8;
    while (s >> 16) s = (s & 0xffff) + (s >> 16);
    return static_cast<uint16_t>(s);
}

}  // namespace

TEST(Checksum, Rfc1071Example) {
    const uint8_t b[] = {0x00, 0x01, 0xf2, 0x03, 0xf4, 0xf5, 0xf6, 0xf7};
    EXPECT_EQ(csum_partial(b, sizeof b), 0xddf2u);
    EXPECT_EQ(inet_checksum(b, sizeof b), 0x220du);
}

TEST(Checksum, KnownIpv4Header) {
    uint8_t h[] = {0x45, 0x00, 0x00, 0x73, 0x00, 0x00, 0x40, 0x00, 0x40, 0x11,
                   0x00, 0x00, 0xc0, 0xa8, 0x00, 0x01, 0xc0, 0xa8, 0x00, 0xc7};
    EXPECT_EQ(inet_checksum(h, sizeof h), 0xb861u);
    h[10] = 0xb8;
    h[11] = 0x61;
    EXPECT_EQ(inet_checksum(h, sizeof h), 0u);  // a correct header verifies to zero
}

TEST(Checksum, OddLengthsAndUnalignedBuffers) {
    const uint8_t b[] = {0xab, 0xcd, 0xef};
    EXPECT_EQ(csum_partial(b, 3), (0xabcd + 0xef00) % 0xffff);
    std::vector<uint8_t> buf(64 + 8);
    for (size_t i = 0; i < buf.size(); ++i) buf[i] = static_cast<uint8_t>(i * 37 + 11);
    for (size_t off = 0; off < 8; ++off)
        for (size_t len = 0; len <= 64; ++len)
            EXPECT_EQ(csum_partial(buf.data() + off, len), naive_sum(buf.data() + off, len)) << off << "/" << len;
}

TEST(Checksum, RandomBuffersMatchIndependentImplementation) {
    std::mt19937 rng(12345);
    std::vector<uint8_t> buf(9100);
    for (int iter = 0; iter < 2000; ++iter) {
        const size_t len = rng() % buf.size();
        for (size_t i = 0; i < len; ++i) buf[i] = static_cast<uint8_t>(rng());
        const uint32_t init = rng() & 0xffff;
        ASSERT_EQ(csum_partial(buf.data(), len, init), naive_sum(buf.data(), len, init)) << len;
    }
}

TEST(Checksum, ChainedPartialSumsEqualOneSum) {
    std::vector<uint8_t> b(100);
    for (size_t i = 0; i < b.size(); ++i) b[i] = static_cast<uint8_t>(i * 7 + 3);
    for (size_t cut = 0; cut <= 100; cut += 2)
        EXPECT_EQ(csum_partial(b.data() + cut, 100 - cut, csum_partial(b.data(), cut)), csum_partial(b.data(), 100));
}

TEST(Checksum, IncrementalUpdateEqualsRecompute) {
    std::mt19937 rng(7);
    std::vector<uint8_t> b(40);
    for (int iter = 0; iter < 5000; ++iter) {
        for (auto& x : b) x = static_cast<uint8_t>(rng());
        const uint16_t before = inet_checksum(b.data(), b.size());
        const size_t at = (rng() % 18) * 2;  // a 16-bit aligned field (or 32-bit at `at`)
        const uint16_t old16 = static_cast<uint16_t>(b[at] << 8 | b[at + 1]);
        const uint32_t old32 = uint32_t(b[at]) << 24 | b[at + 1] << 16 | b[at + 2] << 8 | b[at + 3];
        if (iter & 1) {
            const uint16_t nv = static_cast<uint16_t>(rng());
            b[at] = static_cast<uint8_t>(nv >> 8);
            b[at + 1] = static_cast<uint8_t>(nv);
            // Equal as one's-complement values (0x0000 and 0xffff are both zero).
            const uint16_t inc = csum_update16(before, old16, nv), full = inet_checksum(b.data(), b.size());
            ASSERT_TRUE(inc == full || (inc % 0xffff) == (full % 0xffff)) << inc << " vs " << full;
        } else {
            const uint32_t nv = static_cast<uint32_t>(rng());
            for (int k = 0; k < 4; ++k) b[at + k] = static_cast<uint8_t>(nv >> (24 - 8 * k));
            const uint16_t inc = csum_update32(before, old32, nv), full = inet_checksum(b.data(), b.size());
            ASSERT_TRUE(inc == full || (inc % 0xffff) == (full % 0xffff)) << inc << " vs " << full;
        }
    }
}
