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

void put16(std::vector<uint8_t>& b, size_t at, uint16_t v) {
    b[at] = static_cast<uint8_t>(v >> 8);
    b[at + 1] = static_cast<uint8_t>(v);
}

}  // namespace

TEST(Checksum, Rfc1071Example) {
    const uint8_t b[] = {0x00, 0x01, 0xf2, 0x03, 0xf4, 0xf5, 0xf6, 0xf7};
    EXPECT_EQ(csum_partial(b, sizeof b), 0xddf2u);
    EXPECT_EQ(inet_checksum(b, sizeof b), 0x220du);
    EXPECT_EQ(csum_fold(0xddf2), 0x220d);
}

TEST(Checksum, KnownIpv4Header) {
    uint8_t h[] = {0x45, 0x00, 0x00, 0x73, 0x00, 0x00, 0x40, 0x00, 0x40, 0x11,
                   0x00, 0x00, 0xc0, 0xa8, 0x00, 0x01, 0xc0, 0xa8, 0x00, 0xc7};
    EXPECT_EQ(inet_checksum(h, sizeof h), 0xb861u);
    h[10] = 0xb8;
    h[11] = 0x61;
    EXPECT_EQ(csum_partial(h, sizeof h), 0xffffu);  // a correct header sums to all ones
    EXPECT_EQ(inet_checksum(h, sizeof h), 0u);
}

TEST(Checksum, FoldHandlesCarries) {
    EXPECT_EQ(csum_fold(0), 0xffff);
    EXPECT_EQ(csum_fold(0xffff), 0x0000);
    EXPECT_EQ(csum_fold(0x1'0000), 0xfffe);     // 0x10000 folds to 1
    EXPECT_EQ(csum_fold(0xffff'ffff), 0x0000);  // 0xffff + 0xffff = 0x1fffe -> 0xffff
    EXPECT_EQ(csum_fold(0x0001'fffe), 0x0000);  // 0xfffe + 1
    EXPECT_EQ(csum_fold(0x1234'5678), static_cast<uint16_t>(~(0x1234 + 0x5678)));
}

TEST(Checksum, InitialValueIsChained) {
    const uint8_t b[] = {0x12, 0x34};
    EXPECT_EQ(csum_partial(b, 2, 0x1111), 0x2345u);
    EXPECT_EQ(csum_partial(b, 2, 0xffff'0000u), 0x1234u);  // 0xffff0000 folds to 0xffff (negative zero)
    EXPECT_EQ(csum_partial(nullptr, 0, 0xabcd), 0xabcdu);
    EXPECT_EQ(csum_partial(nullptr, 0), 0u);
}

TEST(Checksum, OddLengths) {
    const uint8_t b[] = {0xab, 0xcd, 0xef};
    EXPECT_EQ(csum_partial(b, 1), 0xab00u);
    EXPECT_EQ(csum_partial(b, 3), (0xabcdu + 0xef00u) % 0xffffu);
    const uint8_t ones[] = {0xff, 0xff, 0xff, 0xff, 0xff};
    EXPECT_EQ(csum_partial(ones, 5), 0xff00u);  // 0xffff + 0xffff + 0xff00 = 0x2fefe -> 0xff00
}

TEST(Checksum, UnalignedBuffersEveryOffsetAndLength) {
    std::vector<uint8_t> buf(128 + 16);
    for (size_t i = 0; i < buf.size(); ++i) buf[i] = static_cast<uint8_t>(i * 37 + 11);
    for (size_t off = 0; off < 16; ++off)
        for (size_t len = 0; len <= 128; ++len)
            ASSERT_EQ(csum_partial(buf.data() + off, len), naive_sum(buf.data() + off, len)) << off << "/" << len;
}

TEST(Checksum, RandomBuffersMatchIndependentImplementation) {
    std::mt19937 rng(12345);
    std::vector<uint8_t> buf(9100 + 8);
    for (int iter = 0; iter < 2000; ++iter) {
        const size_t off = rng() % 8;
        const size_t len = rng() % 9100;
        for (size_t i = 0; i < len; ++i) buf[off + i] = static_cast<uint8_t>(rng());
        const uint32_t init = iter % 3 == 0 ? 0u : static_cast<uint32_t>(rng());  // any 32-bit partial sum
        ASSERT_EQ(csum_partial(buf.data() + off, len, init), naive_sum(buf.data() + off, len, init))
            << "len " << len << " off " << off;
    }
}

TEST(Checksum, AllOnesBuffersDoNotOverflow) {
    std::vector<uint8_t> big(1 << 20, 0xff);
    EXPECT_EQ(csum_partial(big.data(), big.size()), naive_sum(big.data(), big.size()));
    EXPECT_EQ(csum_partial(big.data() + 1, big.size() - 1), naive_sum(big.data() + 1, big.size() - 1));
}

TEST(Checksum, ChainedPartialSumsEqualOneSum) {
    std::vector<uint8_t> b(100);
    for (size_t i = 0; i < b.size(); ++i) b[i] = static_cast<uint8_t>(i * 7 + 3);
    for (size_t cut = 0; cut <= 100; cut += 2)
        EXPECT_EQ(csum_partial(b.data() + cut, 100 - cut, csum_partial(b.data(), cut)), csum_partial(b.data(), 100));
}

TEST(Checksum, Rfc1624Example) {
    // RFC 1624 section 4: m 0x5555 -> 0x3285 with HC 0xdd2f gives 0x0000 (eqn. 2 would give 0xffff).
    EXPECT_EQ(csum_update16(0xdd2f, 0x5555, 0x3285), 0x0000);
}

TEST(Checksum, IncrementalUpdateOfIpv4Ttl) {
    // Decrement the TTL of the known header (TTL/protocol word 0x4011 -> 0x3f11).
    std::vector<uint8_t> h = {0x45, 0x00, 0x00, 0x73, 0x00, 0x00, 0x40, 0x00, 0x40, 0x11,
                              0xb8, 0x61, 0xc0, 0xa8, 0x00, 0x01, 0xc0, 0xa8, 0x00, 0xc7};
    const uint16_t updated = csum_update16(0xb861, 0x4011, 0x3f11);
    h[8] = 0x3f;
    h[10] = h[11] = 0;
    EXPECT_EQ(updated, inet_checksum(h.data(), h.size()));
    EXPECT_EQ(updated, 0xb961);
}

TEST(Checksum, IncrementalUpdateEqualsRecompute) {
    std::mt19937 rng(7);
    std::vector<uint8_t> b(40);
    for (int iter = 0; iter < 20000; ++iter) {
        for (auto& x : b) x = static_cast<uint8_t>(rng());
        const uint16_t before = inet_checksum(b.data(), b.size());
        const size_t at = (rng() % 19) * 2;  // a 16-bit aligned field
        const uint16_t old16 = static_cast<uint16_t>(b[at] << 8 | b[at + 1]);
        // Mix fully random new values with edge values.
        const uint16_t edge16[] = {0x0000, 0xffff, old16, static_cast<uint16_t>(~old16)};
        const uint16_t nv = iter % 5 == 0 ? edge16[rng() % 4] : static_cast<uint16_t>(rng());
        put16(b, at, nv);
        ASSERT_EQ(csum_update16(before, old16, nv), inet_checksum(b.data(), b.size())) << "iteration " << iter;
    }
    for (int iter = 0; iter < 20000; ++iter) {
        for (auto& x : b) x = static_cast<uint8_t>(rng());
        const uint16_t before = inet_checksum(b.data(), b.size());
        const size_t at = (rng() % 19) * 2;  // 32-bit field at any 16-bit boundary
        const uint32_t old32 = uint32_t(b[at]) << 24 | uint32_t(b[at + 1]) << 16 | uint32_t(b[at + 2]) << 8 | b[at + 3];
        const uint32_t nv = iter % 5 == 0 ? (rng() & 1 ? 0u : 0xffffffffu) : static_cast<uint32_t>(rng());
        put16(b, at, static_cast<uint16_t>(nv >> 16));
        put16(b, at + 2, static_cast<uint16_t>(nv));
        ASSERT_EQ(csum_update32(before, old32, nv), inet_checksum(b.data(), b.size())) << "iteration " << iter;
    }
}
