// Signing frames linerate did not build (replayed pcap records): what is signed, what the
// classifier makes of it, and what is left byte-identical.
#include <gtest/gtest.h>

#include <random>
#include <vector>

#include "packet/checksum.h"
#include "packet/sig_frame.h"
#include "worker/tx_signer.h"

using namespace lr::packet;

namespace {

constexpr uint32_t kNonce = 0x5a17'c0de;

void put16(std::vector<uint8_t>& f, size_t at, uint16_t v) {
    f[at] = static_cast<uint8_t>(v >> 8);
    f[at + 1] = static_cast<uint8_t>(v);
}

// A frame as another host sends it: arbitrary addresses, ports, TTL, identification, traffic
// class and flow label, random payload bytes, correct IPv4 and L4 checksums.
struct Captured {
    bool v6 = false;
    uint16_t tag = 0;         // 0x8100 or 0x88a8: one VLAN tag
    uint8_t proto = 17;       // 17 UDP, 6 TCP
    unsigned payload = 18;    // L4 payload bytes
    unsigned pad_to = 0;      // Ethernet padding (0x5c bytes) after the datagram up to this length
    unsigned ip_opts = 0;     // IPv4 option bytes (a multiple of 4)
    uint16_t frag = 0x4000;   // IPv4 flags and fragment offset (DF)
    uint32_t seed = 1;

    std::vector<uint8_t> build() const {
        std::mt19937 rng(seed);
        const unsigned ip = tag ? 18 : 14, iphl = v6 ? 40 : 20 + ip_opts, l4 = ip + iphl;
        const unsigned l4len = (proto == 6 ? 20 : 8) + payload;
        std::vector<uint8_t> f(l4 + l4len);
        for (unsigned i = 0; i < 12; ++i) f[i] = static_cast<uint8_t>(0x10 + i);
        if (tag) {
            put16(f, 12, tag);
            put16(f, 14, 0x2064);  // PCP 1, VID 100
        }
        put16(f, ip - 2, v6 ? 0x86dd : 0x0800);
        uint8_t* h = f.data() + ip;
        if (!v6) {
            h[0] = static_cast<uint8_t>(0x40 | (iphl / 4));
            h[1] = 0xb8;  // DSCP EF
            put16(f, ip + 2, static_cast<uint16_t>(iphl + l4len));
            put16(f, ip + 4, 0x1d2e);
            put16(f, ip + 6, frag);
            h[8] = 57;
            h[9] = proto;
            for (unsigned i = 12; i < 20; ++i) h[i] = static_cast<uint8_t>(rng());
            for (unsigned i = 20; i < iphl; ++i) h[i] = 1;  // NOP options
            put16(f, ip + 10, inet_checksum(h, iphl));
        } else {
            h[0] = 0x6b;  // version 6, traffic class 0xb7, flow label 0x7abcd
            h[1] = 0x77;
            put16(f, ip + 2, 0xabcd);
            put16(f, ip + 4, static_cast<uint16_t>(l4len));
            h[6] = proto;
            h[7] = 63;
            for (unsigned i = 8; i < 40; ++i) h[i] = static_cast<uint8_t>(rng());
        }
        for (unsigned i = l4; i < f.size(); ++i) f[i] = static_cast<uint8_t>(rng());
        put16(f, l4, 5353);
        put16(f, l4 + 2, 53);
        if (proto == 17) {
            put16(f, l4 + 4, static_cast<uint16_t>(l4len));
            put16(f, l4 + 6, 0);
        } else {
            f[l4 + 12] = 0x50;
            put16(f, l4 + 16, 0);
        }
        // The L4 checksum with its pseudo-header.
        std::vector<uint8_t> ph;
        if (!v6) ph.assign(h + 12, h + 20);
        else ph.assign(h + 8, h + 40);
        ph.insert(ph.end(), {0, 0, static_cast<uint8_t>(l4len >> 8), static_cast<uint8_t>(l4len), 0, 0, 0, proto});
        uint16_t c = inet_checksum(f.data() + l4, l4len, csum_partial(ph.data(), ph.size()));
        if (proto == 17 && c == 0) c = 0xffff;
        put16(f, l4 + (proto == 17 ? 6 : 16), c);
        if (pad_to > f.size()) f.resize(pad_to, 0x5c);
        return f;
    }
};

Captured cap(unsigned payload, bool v6 = false, uint16_t tag = 0) {
    Captured c;
    c.v6 = v6;
    c.tag = tag;
    c.payload = payload;
    c.seed = payload + (v6 ? 1000 : 0) + tag;
    return c;
}

template <class F>
std::vector<uint8_t> with(Captured c, F&& change) {
    change(c);
    return c.build();
}

// Signs a copy of `f`, checks which bytes changed (only the nonce's IP field, the IPv4 header
// checksum, the UDP checksum and the signature's bytes), that it classifies as ours, and that
// stamped sequences and timestamps come back.
void expect_signed(const std::vector<uint8_t>& f, SigLevel level, const std::string& what) {
    SCOPED_TRACE(what);
    auto g = f;
    const auto l = sign_frame(g.data(), g.size(), kNonce, 5);
    ASSERT_EQ(l.level, level);
    ASSERT_FALSE(l.tcp);
    const unsigned sig_len = level == SigLevel::seq_ts ? 18 : 12;
    const unsigned payload = l.l4_off + 8u;
    for (size_t i = 0; i < f.size(); ++i) {
        const bool may = (i >= payload && i < payload + sig_len) || i == l.csum_off || i == l.csum_off + 1u ||
                         (l.v6 ? i == l.ip_off + 2u || i == l.ip_off + 3u
                               : (i >= l.ip_off + 4u && i < l.ip_off + 6u) || i == l.ip_off + 10u ||
                                     i == l.ip_off + 11u);
        if (!may) {
            EXPECT_EQ(g[i], f[i]) << "byte " << i << " changed";
        }
    }
    if (!l.v6) {
        EXPECT_EQ(inet_checksum(g.data() + l.ip_off, 20), 0) << "IPv4 header checksum";
    }
    auto r = sig_classify(g.data(), g.size(), kNonce, 6);
    ASSERT_EQ(r.cls, FrameClass::ours);
    EXPECT_EQ(r.stream, 5);
    EXPECT_EQ(r.seq, 0u);
    EXPECT_EQ(r.has_ts, level == SigLevel::seq_ts);
    EXPECT_EQ(sig_stream(g.data(), l), 5);
    EXPECT_EQ(sig_classify(g.data(), g.size(), kNonce, 5).cls, FrameClass::malformed) << "stream 5 of 5";
    EXPECT_TRUE(sig_classify(g.data(), g.size(), kNonce ^ 0x10000, 6).stale) << "another run's nonce";
    for (const uint64_t seq : {uint64_t(1), uint64_t(0x0000'ffff'ffff), uint64_t(0xfedc'ba98'7654)}) {
        const uint64_t ts = (seq * 0x9e37'79b9) & LR_SIG48_MASK;
        sig_stamp(g.data(), l, seq, ts);
        r = sig_classify(g.data(), g.size(), kNonce, 6);
        ASSERT_EQ(r.cls, FrameClass::ours) << "seq " << seq;
        EXPECT_EQ(r.stream, 5);
        EXPECT_EQ(r.seq, seq);
        if (level == SigLevel::seq_ts) {
            EXPECT_EQ(r.ts_ns, ts);
        }
    }
}

void expect_unsigned(const std::vector<uint8_t>& f, const std::string& what) {
    auto g = f;
    EXPECT_EQ(sign_frame(g.data(), g.size(), kNonce, 5).level, SigLevel::none) << what;
    EXPECT_EQ(g, f) << what << ": left byte-identical";
    EXPECT_NE(sig_classify(g.data(), g.size(), kNonce, 6).cls, FrameClass::ours) << what;
}

}  // namespace

TEST(SignFrame, UdpOverIpv4AndIpv6WithAndWithoutVlan) {
    for (bool v6 : {false, true})
        for (uint16_t tag : {uint16_t(0), uint16_t(0x8100), uint16_t(0x88a8)}) {
            const std::string kind = std::string(v6 ? "IPv6" : "IPv4") + " tag " + std::to_string(tag);
            const auto what = [&](unsigned payload) { return kind + " payload " + std::to_string(payload); };
            for (unsigned payload : {18u, 19u, 100u, 1472u})
                expect_signed(cap(payload, v6, tag).build(), SigLevel::seq_ts, what(payload));
            for (unsigned payload : {12u, 13u, 17u})
                expect_signed(cap(payload, v6, tag).build(), SigLevel::seq, what(payload));
            for (unsigned payload : {0u, 1u, 11u})
                expect_unsigned(cap(payload, v6, tag).build(), what(payload));
        }
}

// A short datagram in a frame padded to the Ethernet minimum: the IP total length (or payload
// length) is shorter than the frame. The classifier takes such frames (the datagram must fit,
// not fill, the frame), so they are signed: the checksum covers the datagram only and the
// padding stays as it was.
TEST(SignFrame, PaddingAfterAShortDatagramIsKeptAndNotSummed) {
    for (bool v6 : {false, true})
        for (unsigned payload : {12u, 14u, 18u}) {
            auto c = cap(payload, v6);
            c.pad_to = v6 ? 90 : 60;
            const auto f = c.build();
            ASSERT_EQ(f.size(), v6 ? 90u : 60u);
            expect_signed(f, payload >= 18 ? SigLevel::seq_ts : SigLevel::seq,
                          std::string(v6 ? "IPv6" : "IPv4") + " padded, payload " + std::to_string(payload));
        }
}

TEST(SignFrame, TheStampOfTheTxPathWorksWithTheLayout) {
    for (bool v6 : {false, true}) {
        auto f = cap(40, v6, 0x8100).build();
        const auto l = sign_frame(f.data(), f.size(), kNonce, 2);
        ASSERT_EQ(l.level, SigLevel::seq_ts);
        lr::worker::TxSigner signer(true, l, {2}, {f});
        ASSERT_TRUE(signer.on());
        for (uint64_t i = 0; i < 100; ++i) {
            signer.begin_burst(1'000'000 + i);
            signer.stamp(f.data());
            const auto r = sig_classify(f.data(), f.size(), kNonce, 3);
            ASSERT_EQ(r.cls, FrameClass::ours) << i;
            EXPECT_EQ(r.seq, i);
            EXPECT_EQ(r.ts_ns, 1'000'000 + i);
        }
    }
}

TEST(SignFrame, ACapturedChecksumIsReplacedByACorrectOne) {
    for (uint16_t captured : {uint16_t(0), uint16_t(0x1234)}) {  // none (IPv4 allows it), or wrong (offload)
        auto f = cap(30).build();
        put16(f, 14 + 20 + 6, captured);
        const auto l = sign_frame(f.data(), f.size(), kNonce, 0);
        ASSERT_EQ(l.level, SigLevel::seq_ts);
        EXPECT_EQ(sig_classify(f.data(), f.size(), kNonce, 1).cls, FrameClass::ours) << captured;
    }
}

TEST(SignFrame, WhatIsNotSignedIsLeftByteIdentical) {
    expect_unsigned(with(cap(40), [](Captured& c) { c.proto = 6; }), "IPv4 TCP");
    expect_unsigned(with(cap(40, true, 0x8100), [](Captured& c) { c.proto = 6; }), "IPv6 TCP with VLAN");
    expect_unsigned(with(cap(40), [](Captured& c) { c.ip_opts = 4; }), "IPv4 with options");
    expect_unsigned(with(cap(40), [](Captured& c) { c.frag = 0x2000; }), "IPv4 first fragment");
    expect_unsigned(with(cap(40), [](Captured& c) { c.frag = 0x0010; }), "IPv4 later fragment");
    auto arp = cap(40).build();
    put16(arp, 12, 0x0806);
    expect_unsigned(arp, "ARP");
    auto qinq = cap(40, false, 0x88a8).build();
    qinq.insert(qinq.begin() + 16, {0x81, 0x00, 0x00, 0x07});  // a second tag
    expect_unsigned(qinq, "two VLAN tags");
    auto ext = cap(40, true).build();
    ext[14 + 6] = 0;  // next header: hop-by-hop options
    expect_unsigned(ext, "IPv6 extension header");
    auto bad_ip = cap(40).build();
    bad_ip[14 + 11] ^= 1;
    expect_unsigned(bad_ip, "IPv4 header checksum wrong");
    auto udp_len = cap(40).build();
    put16(udp_len, 14 + 20 + 4, 8 + 39);
    expect_unsigned(udp_len, "UDP length shorter than the IP header says");
    auto cut = cap(40).build();
    cut.resize(cut.size() - 1);
    expect_unsigned(cut, "IP total length beyond the frame");
    for (size_t len = 0; len < 14 + 20 + 8 + 12; ++len) {
        auto g = cap(18).build();
        const auto orig = g;
        EXPECT_EQ(sign_frame(g.data(), len, kNonce, 0).level, SigLevel::none) << len;
        EXPECT_EQ(g, orig) << len;
    }
}

TEST(SignFrame, SigningTwiceGivesTheSameFrameAsOnce) {
    auto f = cap(64, true).build();
    sign_frame(f.data(), f.size(), 7, 1);
    auto g = f;
    sign_frame(g.data(), g.size(), 7, 1);
    EXPECT_EQ(g, f);
    sign_frame(g.data(), g.size(), 8, 2);  // another run and stream: that run's frame
    const auto r = sig_classify(g.data(), g.size(), 8, 3);
    EXPECT_EQ(r.cls, FrameClass::ours);
    EXPECT_EQ(r.stream, 2);
}
