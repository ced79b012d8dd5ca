// One table of frames with the verdict the wire format's rules (bpf/lr_wire.h) give each, for a
// run with nonce kNonce and kStreams streams, sent to the test ports kPortLo..kPortHi. The C++
// classifier (tests/unit) and every XDP program (tests/bpf) are checked against it.
#pragma once
#include <string>
#include <vector>

#include "packet/wire.h"
#include "packet/frame.h"
#include "packet/signature.h"

namespace wire_fixtures {

inline constexpr uint32_t kNonce = 0x5678'1234;  // high half in the IP header, low in the signature
inline constexpr uint32_t kStreams = 4;
inline constexpr uint16_t kPortLo = 1024, kPortHi = 1031;

struct Fixture {
    std::string name;
    std::vector<uint8_t> frame;
    int verdict;        // for this run (kNonce, kStreams)
    bool steered;       // xdp_rx hands it to user space: it carries the magic, or is UDP/TCP to a test port
    bool reflected;     // a reflector sends it back: a valid signature of any run
};

inline lr::packet::FrameSpec spec(bool v6, lr::packet::L4 l4, unsigned size = 0, uint16_t dport = kPortLo) {
    lr::packet::FrameSpec s;
    s.l4 = l4;
    s.src_ip = lr::packet::parse_ip(v6 ? "2001:2::1" : "198.18.0.1", "src");
    s.dst_ip = lr::packet::parse_ip(v6 ? "2001:2::2" : "198.18.0.2", "dst");
    s.dst_port = dport;
    s.frame_size = size ? size : lr::packet::min_frame_size(s);
    return s;
}

// A signed frame of `s` for stream `stream` of run `nonce`, sequence `seq`.
inline std::vector<uint8_t> signed_frame(const lr::packet::FrameSpec& s, uint16_t stream = 1, uint32_t nonce = kNonce,
                                         uint64_t seq = 77) {
    auto f = lr::packet::build_frame(s);
    const auto l = lr::packet::sig_layout(s);
    lr::packet::sig_init(f, l, nonce, stream);
    lr::packet::sig_stamp(f.data(), l, seq, 123456789);
    return f;
}

inline std::vector<Fixture> all() {
    using lr::packet::L4;
    std::vector<Fixture> v;
    auto add = [&](std::string n, std::vector<uint8_t> f, int verdict, bool steered, bool reflected) {
        v.push_back({std::move(n), std::move(f), verdict, steered, reflected});
    };
    // Ours, in every kind and layout.
    add("ipv4 udp 64", signed_frame(spec(false, L4::udp)), LR_OURS, true, true);
    add("ipv4 udp 1518", signed_frame(spec(false, L4::udp, 1518)), LR_OURS, true, true);
    add("ipv4 udp 3000", signed_frame(spec(false, L4::udp, 3000)), LR_OURS, true, true);
    add("ipv4 tcp 64", signed_frame(spec(false, L4::tcp)), LR_OURS, true, true);
    add("ipv4 tcp 1024", signed_frame(spec(false, L4::tcp, 1024)), LR_OURS, true, true);
    add("ipv6 udp 84", signed_frame(spec(true, L4::udp, 84)), LR_OURS, true, true);
    add("ipv6 udp 1518", signed_frame(spec(true, L4::udp, 1518)), LR_OURS, true, true);
    add("ipv6 tcp 78 (sequence only)", signed_frame(spec(true, L4::tcp)), LR_OURS, true, true);
    auto vlan = spec(false, L4::udp, 68, kPortHi);
    vlan.vlan = 100;
    add("vlan ipv4 udp 68", signed_frame(vlan, 3), LR_OURS, true, true);
    auto shortl = spec(false, L4::udp, 64);
    shortl.vlan = 7;  // 14 payload bytes: the 12-byte layout, no timestamp
    add("vlan ipv4 udp 64, short layout", signed_frame(shortl), LR_OURS, true, true);
    add("ours to another port", signed_frame(spec(false, L4::udp, 64, 53)), LR_OURS, true, true);
    auto odd = spec(false, L4::udp, 65);  // an odd L4 length: the last byte is half a word
    add("ipv4 udp 65 (odd length)", signed_frame(odd), LR_OURS, true, true);
    // Header fields an OTG flow sets: TOS/DSCP, no DF, TCP flags other than SYN, a window, an
    // IPv6 traffic class and the flow label's top bits (the low 16 carry the run identity).
    auto dscp = spec(false, L4::udp, 128);
    dscp.tos = 0xb8;
    dscp.dont_fragment = false;
    add("ipv4 udp tos 0xb8, no DF", signed_frame(dscp), LR_OURS, true, true);
    auto ackpsh = spec(false, L4::tcp, 128);
    ackpsh.tos = 0xb8;
    ackpsh.dont_fragment = false;
    ackpsh.tcp_flags = 0x18;  // ACK, PSH
    ackpsh.tcp_window = 512;
    add("ipv4 tcp ACK|PSH, window 512, tos 0xb8, no DF", signed_frame(ackpsh), LR_OURS, true, true);
    auto tclass = spec(true, L4::udp, 128);
    tclass.tos = 0xb8;
    tclass.flow_label = 0xa0000;
    add("ipv6 udp traffic class 0xb8, flow label 0xa0000", signed_frame(tclass), LR_OURS, true, true);

    // Another run's, and malformed ones of this run.
    add("another run's nonce", signed_frame(spec(false, L4::udp), 1, 0x5678'4321), LR_STALE, true, true);
    // The same 16 bits in the signature, another run in the IP header: IPv4 identification,
    // IPv6 flow label, for both layouts and TCP.
    add("another run: same signature half, ipv4 id", signed_frame(spec(false, L4::udp), 1, 0x9abc'1234), LR_STALE,
        true, true);
    add("another run: same signature half, ipv4 tcp", signed_frame(spec(false, L4::tcp), 1, 0x0000'1234), LR_STALE,
        true, true);
    add("another run: same signature half, ipv6 flow label", signed_frame(spec(true, L4::udp, 84), 1, 0x5679'1234),
        LR_STALE, true, true);
    add("another run: same signature half, short layout", signed_frame(shortl, 1, 0xffff'1234), LR_STALE, true, true);
    add("unknown stream", signed_frame(spec(false, L4::udp), 9), LR_MALFORMED, true, true);
    auto bad = signed_frame(spec(false, L4::udp, 128));
    bad[100] ^= 0x40;
    add("ipv4 udp bad checksum", bad, LR_MALFORMED, true, false);
    auto badt = signed_frame(spec(false, L4::tcp, 128));
    badt.back() ^= 1;
    add("ipv4 tcp bad checksum", badt, LR_MALFORMED, true, false);
    auto bad6 = signed_frame(spec(true, L4::udp, 200));
    bad6[150] ^= 1;
    add("ipv6 udp bad checksum", bad6, LR_MALFORMED, true, false);
    auto zero = signed_frame(spec(false, L4::udp));
    zero[14 + 20 + 6] = zero[14 + 20 + 7] = 0;
    add("udp checksum 0", zero, LR_MALFORMED, true, false);
    auto doff = signed_frame(spec(false, L4::tcp, 128));
    doff[14 + 20 + 12] = 0x60;
    add("tcp with options", doff, LR_MALFORMED, true, false);

    // Foreign.
    add("no magic, test port", lr::packet::build_frame(spec(false, L4::udp)), LR_FOREIGN, true, false);
    add("no magic, other port", lr::packet::build_frame(spec(false, L4::udp, 64, 53)), LR_FOREIGN, false, false);
    add("no room for a signature (ipv6 udp 66)", lr::packet::build_frame(spec(true, L4::udp)), LR_FOREIGN, true,
        false);
    auto frag = signed_frame(spec(false, L4::udp));
    frag[14 + 6] = 0x20;  // more fragments
    add("fragment", frag, LR_FOREIGN, false, false);
    auto arp = signed_frame(spec(false, L4::udp));
    arp[12] = 0x08;
    arp[13] = 0x06;
    add("arp", arp, LR_FOREIGN, false, false);
    auto ipx = signed_frame(spec(false, L4::udp));
    ipx[12] = 0x81;
    ipx[13] = 0x37;
    add("not ip", ipx, LR_FOREIGN, false, false);
    auto icmp = signed_frame(spec(false, L4::udp));
    icmp[14 + 9] = 1;
    add("icmp", icmp, LR_FOREIGN, false, false);
    auto opts = signed_frame(spec(false, L4::udp));
    opts[14] = 0x46;
    add("ipv4 options", opts, LR_FOREIGN, false, false);
    auto hbh = signed_frame(spec(true, L4::udp, 84));
    hbh[14 + 6] = 0;  // next header: hop-by-hop options
    add("ipv6 extension header", hbh, LR_FOREIGN, false, false);
    auto trunc = signed_frame(spec(false, L4::udp, 128));
    trunc.resize(80);  // the IP length claims more than arrived
    add("truncated", trunc, LR_FOREIGN, false, false);
    auto ulen = signed_frame(spec(false, L4::udp, 128));
    ulen[14 + 20 + 5] ^= 2;  // UDP length disagrees with the IP header
    add("udp length mismatch", ulen, LR_FOREIGN, true, false);
    auto mag = signed_frame(spec(false, L4::udp));
    mag[14 + 20 + 8] = 'X';
    add("wrong magic", mag, LR_FOREIGN, true, false);
    return v;
}

}  // namespace wire_fixtures
