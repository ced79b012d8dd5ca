// The receive path's fast lane (packet::classify_fast) against the wire format's general rules
// (lr_wire_classify): it may decline any frame (-1), but a frame it takes is one the rules
// call ours, with the same signature fields; and it takes the frames linerate sends most.
#include <gtest/gtest.h>

#include <memory>
#include <random>
#include <string>

#include "packet/wire.h"
#include "wire_fixtures.h"

using namespace lr;

namespace {

struct Verdict {
    int cls;
    lr_wire_sig sig;
};

Verdict general(const uint8_t* p, size_t len, uint32_t nonce, uint32_t streams, bool verified) {
    lr_wire_hdrs h;
    Verdict v{};
    v.cls = lr_wire_classify(p, p + len, nonce, 0, streams, verified, &h, &v.sig);
    return v;
}

// The fast lane on an exact-size heap copy (so a sanitizer or valgrind sees any overread),
// checked against the general rules; returns what the fast lane said.
int check_agrees(const std::vector<uint8_t>& frame, uint32_t nonce, uint32_t streams, bool verified) {
    std::unique_ptr<uint8_t[]> exact(new uint8_t[frame.size() ? frame.size() : 1]);
    std::copy(frame.begin(), frame.end(), exact.get());
    lr_wire_sig s{};
    const int fast = packet::classify_fast(exact.get(), static_cast<uint32_t>(frame.size()), nonce, streams, verified, s);
    if (fast < 0) return fast;
    const auto g = general(exact.get(), frame.size(), nonce, streams, verified);
    EXPECT_EQ(fast, LR_OURS);
    EXPECT_EQ(g.cls, LR_OURS) << "the fast lane took a frame the rules do not call ours";
    if (g.cls == LR_OURS) {
        EXPECT_EQ(s.seq, g.sig.seq);
        EXPECT_EQ(s.ts, g.sig.ts);
        EXPECT_EQ(s.nonce, g.sig.nonce);
        EXPECT_EQ(s.stream, g.sig.stream);
        EXPECT_EQ(s.seq_bits, g.sig.seq_bits);
        EXPECT_EQ(s.has_ts, g.sig.has_ts);
    }
    return fast;
}

}  // namespace

TEST(ClassifyFast, TakesUntaggedIpv4UdpAtEverySizeAndDeclinesTheRest) {
    using wire_fixtures::spec;
    using packet::L4;
    // 64-70: L4 segments of 26-32 bytes (the checksum's short form), 71 on: the loop.
    for (unsigned size : {64u, 65u, 66u, 67u, 68u, 69u, 70u, 71u, 72u, 127u, 128u, 1514u, 1518u, 9000u}) {
        const auto f = wire_fixtures::signed_frame(spec(false, L4::udp, size), 3, wire_fixtures::kNonce, 0xabcdef012345);
        EXPECT_EQ(check_agrees(f, wire_fixtures::kNonce, 4, false), LR_OURS) << size;
        EXPECT_EQ(check_agrees(f, wire_fixtures::kNonce, 4, true), LR_OURS) << size;
        EXPECT_EQ(check_agrees(f, wire_fixtures::kNonce, 3, false), -1) << size << ": stream out of range";
        EXPECT_EQ(check_agrees(f, wire_fixtures::kNonce ^ 1, 4, false), -1) << size << ": another run's";
    }
    // A TOS byte and no DF (as OTG flows send by default) take the fast lane too.
    auto dscp = spec(false, L4::udp, 128);
    dscp.tos = 0xb8;
    dscp.dont_fragment = false;
    EXPECT_EQ(check_agrees(wire_fixtures::signed_frame(dscp), wire_fixtures::kNonce, 4, false), LR_OURS);
    // IPv6, TCP and a VLAN tag go to the general rules.
    EXPECT_EQ(check_agrees(wire_fixtures::signed_frame(spec(true, L4::udp, 128)), wire_fixtures::kNonce, 4, false), -1);
    EXPECT_EQ(check_agrees(wire_fixtures::signed_frame(spec(false, L4::tcp, 128)), wire_fixtures::kNonce, 4, false), -1);
    auto tagged = spec(false, L4::udp, 128);
    tagged.vlan = 10;
    EXPECT_EQ(check_agrees(wire_fixtures::signed_frame(tagged), wire_fixtures::kNonce, 4, false), -1);
}

TEST(ClassifyFast, AgreesWithTheRulesOnEveryFixture) {
    int taken = 0;
    for (const auto& f : wire_fixtures::all()) {
        const int fast = check_agrees(f.frame, wire_fixtures::kNonce, wire_fixtures::kStreams, false);
        if (fast >= 0) {
            ++taken;
            continue;
        }
        // Declined: fine unless it is an untagged IPv4 UDP frame of ours with the full signature.
        const auto g = general(f.frame.data(), f.frame.size(), wire_fixtures::kNonce, wire_fixtures::kStreams, false);
        const bool ipv4 = (f.frame[12] << 8 | f.frame[13]) == 0x0800;
        EXPECT_FALSE(g.cls == LR_OURS && ipv4 && g.sig.seq_bits == 48 && g.sig.has_ts) << f.name << ": declined";
    }
    EXPECT_GT(taken, 0);
}

TEST(ClassifyFast, NeverTakesWhatTheRulesRefuse) {
    // Signed frames with random bytes changed (a header field, a length, the checksum, the
    // payload), truncated or extended: whatever the fast lane takes, the rules call ours too.
    std::mt19937 rng(17);
    using wire_fixtures::spec;
    std::vector<std::vector<uint8_t>> good;
    for (unsigned size : {64u, 65u, 100u, 1518u})
        good.push_back(wire_fixtures::signed_frame(spec(false, packet::L4::udp, size), 1, wire_fixtures::kNonce, size));
    int taken = 0, declined = 0;
    for (int it = 0; it < 300000; ++it) {
        auto f = good[static_cast<size_t>(it) % good.size()];
        const int changes = it % 5;  // 0: the frame as sent
        for (int k = 0; k < changes; ++k) {
            // Mostly the first 60 bytes, where every header and the signature are.
            const size_t at = rng() % 4 ? rng() % std::min<size_t>(60, f.size()) : rng() % f.size();
            f[at] = rng() % 2 ? static_cast<uint8_t>(rng()) : static_cast<uint8_t>(f[at] ^ (1u << (rng() % 8)));
        }
        if (it % 11 == 0) f.resize(rng() % (f.size() + 8), static_cast<uint8_t>(rng()));
        const bool verified = it % 13 == 0;
        (check_agrees(f, wire_fixtures::kNonce, 2, verified) >= 0 ? taken : declined)++;
    }
    EXPECT_GT(taken, 60000);  // at least the unchanged frames
    EXPECT_GT(declined, 100000);
}

TEST(ClassifyFast, TakesEverySizeWhateverItsSequenceTimestampAndPayload) {
    // Every L4 length's tail (8-byte words, then 4, 2 and 1 bytes) and carries out of every
    // word of the sum: random sequences, timestamps, addresses and payload bytes, the checksum
    // written right each time. The fast lane must take every one, with the rules' fields.
    std::mt19937_64 rng(29);
    using wire_fixtures::spec;
    for (unsigned size = 64; size <= 1518; ++size) {
        auto s = spec(false, packet::L4::udp, size);
        s.src_ip = packet::parse_ip("198.18." + std::to_string(rng() % 256) + "." + std::to_string(rng() % 256), "src");
        s.dst_ip = packet::parse_ip("198.19." + std::to_string(rng() % 256) + "." + std::to_string(rng() % 256), "dst");
        auto f = packet::build_frame(s);
        const auto l = packet::sig_layout(s);
        for (size_t i = 42 + LR_UDP_SIG_LEN; i < f.size(); ++i) f[i] = static_cast<uint8_t>(rng());
        packet::sig_init(f, l, wire_fixtures::kNonce, 1);
        packet::sig_stamp(f.data(), l, rng() & LR_SIG48_MASK, rng() & LR_SIG48_MASK);
        EXPECT_EQ(check_agrees(f, wire_fixtures::kNonce, 2, false), LR_OURS) << size;
    }
}

// The checksum's short form (25-32 bytes, no loop) adds the same words as the loop, in the
// same order: the same sum and carries, for every length it takes, over random bytes.
TEST(ClassifyFast, ShortChecksumSumsWhatTheLoopSums) {
    std::mt19937_64 rng(5);
    for (int round = 0; round < 2000; ++round) {
        uint8_t seg[32];
        for (auto& b : seg) b = static_cast<uint8_t>(rng());
        if (round % 3 == 0) std::fill(std::begin(seg), std::end(seg), 0xff);  // every word carries
        const packet::detail::WideSum seed{rng(), rng() % 4};
        for (uint32_t len = 25; len <= 32; ++len) {
            const auto a = packet::detail::sum_native_short(seg, len, seed);
            const auto b = packet::detail::sum_native_wide(seg, len, seed);
            ASSERT_EQ(a.sum, b.sum) << len;
            ASSERT_EQ(a.carries, b.carries) << len;
        }
    }
}
