#include <gtest/gtest.h>

#include <random>

#include "packet/checksum.h"
#include "packet/signature.h"

using namespace lr::packet;

namespace {

FrameSpec spec(unsigned size, L4 l4, bool v6 = false, bool vlan = false) {
    FrameSpec s;
    s.l4 = l4;
    s.src_ip = parse_ip(v6 ? "2001:2::1" : "198.18.0.1", "x");
    s.dst_ip = parse_ip(v6 ? "2001:2::2" : "198.18.0.2", "x");
    if (vlan) s.vlan = 42;
    s.frame_size = size ? size : min_frame_size(s);
    return s;
}

std::vector<uint8_t> signed_frame(const FrameSpec& s, uint32_t nonce, uint16_t stream) {
    auto f = build_frame(s);
    sig_init(f, sig_layout(s), nonce, stream);
    return f;
}

}  // namespace

TEST(Signature, LevelsPerFrameKindAndSize) {
    EXPECT_EQ(sig_layout(spec(64, L4::udp)).level, SigLevel::seq_ts);         // 18 payload bytes
    EXPECT_EQ(sig_layout(spec(64, L4::udp, false, true)).level, SigLevel::seq);  // 14 with VLAN
    EXPECT_EQ(sig_layout(spec(64, L4::tcp)).level, SigLevel::seq_ts);         // 6 payload bytes
    EXPECT_EQ(sig_layout(spec(66, L4::udp, true)).level, SigLevel::none);     // 0
    EXPECT_EQ(sig_layout(spec(78, L4::udp, true)).level, SigLevel::seq);      // 12
    EXPECT_EQ(sig_layout(spec(84, L4::udp, true)).level, SigLevel::seq_ts);   // 18
    EXPECT_EQ(sig_layout(spec(78, L4::tcp, true)).level, SigLevel::seq);      // header fields only
    EXPECT_EQ(sig_layout(spec(84, L4::tcp, true)).level, SigLevel::seq_ts);
}

TEST(Signature, TheRunNonceIs32BitsHalfInTheIpHeader) {
    for (bool vlan : {false, true}) {
        const unsigned ip = vlan ? 18 : 14;
        // IPv4: the identification field, and the header checksum still verifies.
        auto f4 = signed_frame(spec(0, L4::udp, false, vlan), 0xabcd'1234, 1);
        EXPECT_EQ(f4[ip + 4], 0xab);
        EXPECT_EQ(f4[ip + 5], 0xcd);
        EXPECT_EQ(inet_checksum(f4.data() + ip, 20), 0) << "IPv4 header checksum";
        EXPECT_EQ(sig_classify(f4.data(), f4.size(), 0xabcd'1234, 2).cls, FrameClass::ours);
        const auto other = sig_classify(f4.data(), f4.size(), 0xabce'1234, 2);
        EXPECT_EQ(other.cls, FrameClass::foreign) << "same low half, another run";
        EXPECT_TRUE(other.stale);
        // IPv6: the low 16 bits of the flow label; version and traffic class untouched.
        auto f6 = signed_frame(spec(84, L4::tcp, true, vlan), 0xfedc'0001, 1);
        EXPECT_EQ(f6[ip] >> 4, 6);
        EXPECT_EQ(f6[ip + 1] & 0x0f, 0);
        EXPECT_EQ(f6[ip + 2], 0xfe);
        EXPECT_EQ(f6[ip + 3], 0xdc);
        EXPECT_EQ(sig_classify(f6.data(), f6.size(), 0xfedc'0001, 2).cls, FrameClass::ours);
        EXPECT_EQ(sig_classify(f6.data(), f6.size(), 0x0000'0001, 2).cls, FrameClass::foreign);
    }
}

TEST(Signature, RoundTripAllKindsWithIncrementalChecksum) {
    std::mt19937_64 rng(3);
    for (bool v6 : {false, true})
        for (L4 l4 : {L4::udp, L4::tcp})
            for (bool vlan : {false, true})
                for (unsigned size : {0u, 84u, 128u, 1518u}) {
                    auto s = spec(size, l4, v6, vlan);
                    const auto l = sig_layout(s);
                    if (l.level == SigLevel::none) continue;
                    auto f = signed_frame(s, 0xbeef, 7);
                    for (int i = 0; i < 50; ++i) {
                        const uint64_t seq = rng() & ((uint64_t(1) << l.seq_bits) - 1);
                        const uint64_t ts = rng() & LR_SIG48_MASK;
                        sig_stamp(f.data(), l, seq, ts);
                        const auto r = sig_classify(f.data(), f.size(), 0xbeef, 16);
                        ASSERT_EQ(r.cls, FrameClass::ours) << v6 << int(l4) << vlan << size;
                        EXPECT_EQ(r.stream, 7);
                        EXPECT_EQ(r.seq, seq);
                        EXPECT_EQ(r.has_ts, l.level == SigLevel::seq_ts);
                        if (r.has_ts) {
                            EXPECT_EQ(r.ts_ns, ts);
                        }
                    }
                }
}

TEST(Signature, OtherNonceIsForeignStaleNeverOurs) {
    auto s = spec(64, L4::udp);
    auto f = signed_frame(s, 0x1111, 0);
    sig_stamp(f.data(), sig_layout(s), 5, 99);
    auto r = sig_classify(f.data(), f.size(), 0x2222, 4);
    EXPECT_EQ(r.cls, FrameClass::foreign);
    EXPECT_TRUE(r.stale);
}

TEST(Signature, CorruptedBytesAreMalformedNeverOurs) {
    for (L4 l4 : {L4::udp, L4::tcp}) {
        auto s = spec(64, l4);
        auto f = signed_frame(s, 0x1234, 1);
        sig_stamp(f.data(), sig_layout(s), 77, 12345);
        const auto l = sig_layout(s);
        // Flip each bit after the magic and nonce: the L4 checksum must catch it.
        for (size_t i = l.l4_off; i < f.size(); ++i) {
            if (!l.tcp && ((i >= l.seq_off - 2u && i < l.seq_off) || (i >= l.id_off && i < l.id_off + 2u)))
                continue;  // magic, nonce
            if (l.tcp && (i >= l.l4_off + 8u && i < l.l4_off + 12u)) continue;      // magic, nonce
            for (int bit = 0; bit < 8; ++bit) {
                auto g = f;
                g[i] ^= static_cast<uint8_t>(1 << bit);
                const auto r = sig_classify(g.data(), g.size(), 0x1234, 4);
                EXPECT_NE(r.cls, FrameClass::ours) << "byte " << i << " bit " << bit;
            }
        }
    }
}

TEST(Signature, StreamOutOfRangeIsMalformed) {
    auto s = spec(64, L4::udp);
    auto f = signed_frame(s, 1, 9);
    sig_stamp(f.data(), sig_layout(s), 1, 1);
    EXPECT_EQ(sig_classify(f.data(), f.size(), 1, 9).cls, FrameClass::malformed);
    EXPECT_EQ(sig_classify(f.data(), f.size(), 1, 10).cls, FrameClass::ours);
}

TEST(Signature, HostileInputNeverReadsOutOfBoundsNorCountsAsOurs) {
    // Random bytes, random lengths, and real frames truncated or with lying length fields.
    std::mt19937 rng(11);
    auto s = spec(128, L4::udp);
    auto good = signed_frame(s, 0xabcd, 0);
    sig_stamp(good.data(), sig_layout(s), 3, 3);
    for (int it = 0; it < 200000; ++it) {
        std::vector<uint8_t> buf;
        if (it % 3 == 0) {
            buf.assign(good.begin(), good.begin() + static_cast<long>(rng() % (good.size() + 1)));
        } else {
            buf = good;
            for (int k = 0; k < 1 + it % 4; ++k) buf[rng() % buf.size()] = static_cast<uint8_t>(rng());
        }
        if (it % 7 == 0) buf.resize(rng() % 200, static_cast<uint8_t>(rng()));
        // Exact-size heap copy so ASan/valgrind catch any overread.
        std::unique_ptr<uint8_t[]> exact(new uint8_t[buf.size() ? buf.size() : 1]);
        std::copy(buf.begin(), buf.end(), exact.get());
        const auto r = sig_classify(exact.get(), buf.size(), 0xabcd, 1);
        if (r.cls == FrameClass::ours) {
            // Only a frame whose checksum still verifies may be ours: re-check independently.
            EXPECT_GE(buf.size(), 60u);
        }
    }
    // Magic and this run's nonce at the right places but otherwise hostile: malformed, never ours.
    std::vector<uint8_t> hostile(good.size(), 0xff);
    std::copy(good.begin(), good.begin() + 42, hostile.begin());
    const auto l = sig_layout(s);
    hostile[42] = 0x4c;
    hostile[43] = 0x52;
    hostile[l.id_off] = 0xab;
    hostile[l.id_off + 1] = 0xcd;
    EXPECT_EQ(sig_classify(hostile.data(), hostile.size(), 0xabcd, 1).cls, FrameClass::malformed);
}

TEST(Signature, UnsignedAndNonIpFramesAreForeign) {
    auto s = spec(64, L4::udp);
    auto f = build_frame(s);  // no signature
    EXPECT_EQ(sig_classify(f.data(), f.size(), 0, 1).cls, FrameClass::foreign);
    f[12] = 0x08;
    f[13] = 0x06;  // ARP
    EXPECT_EQ(sig_classify(f.data(), f.size(), 0, 1).cls, FrameClass::foreign);
    EXPECT_EQ(sig_classify(f.data(), 0, 0, 1).cls, FrameClass::foreign);
}

#include "worker/tx_signer.h"

TEST(TxSigner, StampsWhatTheReferenceCodecWritesWhateverTheFrameHeldBefore) {
    for (L4 l4 : {L4::udp, L4::tcp})
        for (bool v6 : {false, true}) {
            auto s = spec(v6 ? 84 : 64, l4, v6);
            const auto l = sig_layout(s);
            std::vector<std::vector<uint8_t>> tpl = {signed_frame(s, 0x5151, 3), signed_frame(s, 0x5151, 8)};
            lr::worker::TxSigner signer(true, l, {3, 8}, tpl);
            ASSERT_TRUE(signer.on());
            auto f = tpl[1];
            std::mt19937 rng(1);
            for (int i = 0; i < 1000; ++i) {
                // Garbage where sequence and timestamp go: the signer must not depend on it.
                for (int k = 0; k < 6; ++k) f[l.seq_off + (l.seq_bits == 32 ? k % 4 : k)] = static_cast<uint8_t>(rng());
                signer.begin_burst(lr::stats::now_ns());
                signer.stamp(f.data());
                const auto r = sig_classify(f.data(), f.size(), 0x5151, 16);
                ASSERT_EQ(r.cls, FrameClass::ours) << int(l4) << v6 << " packet " << i;
                EXPECT_EQ(r.stream, 8);
                EXPECT_EQ(r.seq, uint64_t(i));
            }
            EXPECT_EQ(signer.sent()[1], 1000u);
            EXPECT_EQ(signer.sent()[0], 0u);
        }
}

TEST(Reflect, SwapsAddressesAndPortsKeepingChecksumsAndSignature) {
    for (bool v6 : {false, true})
        for (L4 l4 : {L4::udp, L4::tcp})
            for (bool vlan : {false, true}) {
                auto s = spec(v6 ? 84 : 68, l4, v6, vlan);
                s.src_port = 1111;
                s.dst_port = 2222;
                auto f = signed_frame(s, 9, 2);
                sig_stamp(f.data(), sig_layout(s), 41, 1234);
                auto g = f;
                ASSERT_TRUE(reflect_swap(g.data(), g.size()));
                auto back = FrameSpec(s);
                std::swap(back.src_mac, back.dst_mac);
                std::swap(back.src_ip, back.dst_ip);
                std::swap(back.src_port, back.dst_port);
                auto want = signed_frame(back, 9, 2);
                sig_stamp(want.data(), sig_layout(back), 41, 1234);
                EXPECT_EQ(g, want) << v6 << int(l4) << vlan;  // same bytes as a frame built the other way
                const auto r = sig_classify(g.data(), g.size(), 9, 4);
                EXPECT_EQ(r.cls, FrameClass::ours);
                EXPECT_EQ(r.seq, 41u);
            }
}

TEST(Reflect, LeavesForeignAndTruncatedFramesAlone) {
    auto s = spec(64, L4::udp);
    auto plain = build_frame(s);  // no signature: not reflected
    auto copy = plain;
    EXPECT_FALSE(reflect_swap(copy.data(), copy.size()));
    EXPECT_EQ(copy, plain);
    auto f = signed_frame(s, 1, 0);
    for (size_t len = 0; len < 44; ++len) {
        auto g = f;
        EXPECT_FALSE(reflect_swap(g.data(), len)) << len;
        EXPECT_EQ(g, f);
    }
}

TEST(TxSigner, BurstStampEqualsPerPacketStamp) {
    for (L4 l4 : {L4::udp, L4::tcp}) {
        auto s = spec(64, l4);
        const auto l = sig_layout(s);
        std::vector<std::vector<uint8_t>> tpl = {signed_frame(s, 0x7777, 4)};
        lr::worker::TxSigner a(true, l, {4}, tpl), b(true, l, {4}, tpl);
        std::vector<std::vector<uint8_t>> fa(40, tpl[0]), fb(40, tpl[0]);
        const uint64_t ts = lr::stats::now_ns();
        a.begin_burst(ts);
        b.begin_burst(ts);
        for (auto& f : fa) a.stamp(f.data());
        std::vector<void*> pb;
        for (auto& f : fb) pb.push_back(f.data());
        b.stamp_burst(pb.data(), 0, 0, 40);
        for (size_t i = 0; i < 40; ++i) {
            // Same sequence and checksum; the timestamps may differ by the clock between reads.
            EXPECT_EQ(sig_classify(fb[i].data(), fb[i].size(), 0x7777, 8).cls, FrameClass::ours) << i;
            EXPECT_EQ(sig_classify(fb[i].data(), fb[i].size(), 0x7777, 8).seq, i);
            EXPECT_EQ(sig_classify(fa[i].data(), fa[i].size(), 0x7777, 8).seq, i);
        }
        EXPECT_EQ(a.sent(), b.sent());
    }
}

// The burst path's segments (sequence byte carries, checksum byte borrows, the checksum's
// 1 -> 0xffff step, the 2^48 wrap) against the reference classifier, over frames that held
// garbage, for bursts of every size from 1 to 64, IPv4 and IPv6, with and without VLAN.
TEST(TxSigner, BurstStampIsValidAcrossEveryCarryAndWrap) {
    for (bool v6 : {false, true})
        for (bool vlan : {false, true}) {
            auto s = spec((v6 ? 84 : 64) + (vlan ? 4 : 0), L4::udp, v6, vlan);
            const auto l = sig_layout(s);
            ASSERT_EQ(l.level, SigLevel::seq_ts);
            std::vector<std::vector<uint8_t>> tpl = {signed_frame(s, 0x0102, 6)};
            std::mt19937 rng(7);
            for (uint64_t start : {uint64_t(0), uint64_t(0xfff0), uint64_t(0xffffff00), (uint64_t(1) << 48) - 300,
                                   uint64_t(0x123456789a)}) {
                lr::worker::TxSigner signer(true, l, {6}, tpl);
                signer.start_at(start);
                std::vector<std::vector<uint8_t>> fr(64, tpl[0]);
                uint64_t expect = start;
                for (int burst = 0; burst < 3000; ++burst) {
                    const uint32_t n = 1 + rng() % 64;
                    for (uint32_t i = 0; i < n; ++i)
                        for (size_t k = l.csum_off; k < l.ts_off + 6u; ++k)
                            if (k < l.csum_off + 2u || k >= l.seq_off) fr[i][k] = static_cast<uint8_t>(rng());
                    signer.begin_burst(lr::stats::now_ns());
                    std::vector<void*> p;
                    for (auto& f : fr) p.push_back(f.data());
                    if (burst % 97 == 5) {
                        // Now and then per-packet stamps in between (what the other loops use).
                        for (uint32_t i = 0; i < n; ++i) signer.stamp(fr[i].data());
                    } else {
                        signer.stamp_burst(p.data(), 0, 0, n);
                    }
                    for (uint32_t i = 0; i < n; ++i, ++expect) {
                        const auto r = sig_classify(fr[i].data(), fr[i].size(), 0x0102, 16);
                        ASSERT_EQ(r.cls, FrameClass::ours) << "v6 " << v6 << " vlan " << vlan << " seq " << expect;
                        ASSERT_EQ(r.seq, expect & LR_SIG48_MASK);
                        ASSERT_TRUE(r.has_ts);
                        ASSERT_EQ(r.stream, 6);
                    }
                    // Every frame of a burst carries the same timestamp.
                    for (uint32_t i = 1; i < n; ++i)
                        ASSERT_EQ(0, std::memcmp(fr[i].data() + l.ts_off, fr[0].data() + l.ts_off, 6));
                }
                EXPECT_EQ(signer.sent()[0], expect);  // the counter started at `start`
            }
        }
}

// The wire layout, byte by byte, as docs/measurement.md states it (what other tools decode).
TEST(Signature, UdpWireLayoutIsAsDocumented) {
    auto s = spec(64, L4::udp);  // 18 payload bytes: sequence and timestamp
    const auto l = sig_layout(s);
    auto f = signed_frame(s, 0x0a0b, 0x0c0d);
    sig_stamp(f.data(), l, 0x010203040506, 0x111213141516);
    const std::vector<uint8_t> want = {0x4c, 0x52, 1, 2, 3, 4, 5, 6, 0x11, 0x12, 0x13, 0x14, 0x15, 0x16,
                                       0x0a, 0x0b, 0x0c, 0x0d};
    EXPECT_EQ(std::vector<uint8_t>(f.begin() + 42, f.begin() + 60), want);
    EXPECT_EQ(l.csum_off + 4u, l.seq_off);  // checksum, magic, sequence, timestamp: 16 contiguous bytes
    auto v = spec(68, L4::udp, false, true);  // VLAN: 18 payload bytes too
    EXPECT_EQ(sig_layout(v).level, SigLevel::seq_ts);
    auto t = spec(64, L4::udp, false, true);  // VLAN at 64: 14 payload bytes, no timestamp
    const auto lt = sig_layout(t);
    ASSERT_EQ(lt.level, SigLevel::seq);
    auto g = signed_frame(t, 0x0a0b, 0x0c0d);
    sig_stamp(g.data(), lt, 0x010203040506, 0);
    const std::vector<uint8_t> want_seq = {0x4c, 0x52, 1, 2, 3, 4, 5, 6, 0x0a, 0x0b, 0x0c, 0x0d};
    EXPECT_EQ(std::vector<uint8_t>(g.begin() + 46, g.begin() + 58), want_seq);
    const auto r = sig_classify(g.data(), g.size(), 0x0a0b, 0x0c0e);
    EXPECT_EQ(r.cls, FrameClass::ours);
    EXPECT_FALSE(r.has_ts);
    EXPECT_EQ(r.seq, 0x010203040506u);
    EXPECT_EQ(r.stream, 0x0c0d);
}
