// The XDP receive program run by the kernel on built packets (bpf_prog_test_run_opts):
// expected verdicts and per-queue counters for ours, foreign, truncated, VLAN and IPv6 frames.
#include <gtest/gtest.h>

#include <bpf/bpf.h>
#include <linux/bpf.h>
#include <unistd.h>

#include "backend/afxdp/xdp_prog.h"
#include "packet/frame.h"

using namespace lr;

namespace {

struct Fixture : ::testing::Test {
    void SetUp() override {
        if (geteuid() != 0) GTEST_SKIP() << "loading BPF programs needs root";
        afxdp::RxMatch m;
        m.udp = m.tcp = true;
        m.dst_port_lo = 1024;
        m.dst_port_hi = 1031;  // flows 1024..1031
        prog = std::make_unique<afxdp::XdpRxProgram>(m);
    }
    // Runs the program once on `pkt`; returns the XDP verdict (or -errno from the kernel).
    int run(const std::vector<uint8_t>& pkt) {
        LIBBPF_OPTS(bpf_test_run_opts, o, .data_in = pkt.data(), .data_size_in = static_cast<__u32>(pkt.size()),
                    .repeat = 1);
        const int err = bpf_prog_test_run_opts(prog->prog_fd(), &o);
        return err ? -errno : static_cast<int>(o.retval);
    }
    std::unique_ptr<afxdp::XdpRxProgram> prog;
};

packet::FrameSpec frame(bool v6, packet::L4 l4, uint16_t dport = 1024) {
    packet::FrameSpec s;
    s.l4 = l4;
    s.src_ip = packet::parse_ip(v6 ? "2001:2::1" : "198.18.0.1", "x");
    s.dst_ip = packet::parse_ip(v6 ? "2001:2::2" : "198.18.0.2", "x");
    s.dst_port = dport;
    s.frame_size = packet::min_frame_size(s);
    return s;
}

}  // namespace

TEST_F(Fixture, OursWithoutASocketIsDroppedNotPassed) {
    // No socket in the XSKMAP for queue 0: test frames are dropped (never handed to the stack).
    int n = 0;
    for (bool v6 : {false, true})
        for (auto l4 : {packet::L4::udp, packet::L4::tcp}) {
            EXPECT_EQ(run(packet::build_frame(frame(v6, l4))), XDP_DROP) << v6 << int(l4);
            ++n;
        }
    auto vlan = frame(false, packet::L4::udp, 1031);
    vlan.vlan = 100;
    EXPECT_EQ(run(packet::build_frame(vlan)), XDP_DROP);
    ++n;
    const auto st = prog->queue_stats(0);
    EXPECT_EQ(st.received, uint64_t(n));
    EXPECT_EQ(st.redirect_failed, uint64_t(n));
    EXPECT_EQ(st.redirected, 0u);
    EXPECT_EQ(st.passed, 0u);
}

TEST_F(Fixture, ForeignFramesPass) {
    std::vector<std::vector<uint8_t>> foreign;
    foreign.push_back(packet::build_frame(frame(false, packet::L4::udp, 53)));    // other port
    foreign.push_back(packet::build_frame(frame(true, packet::L4::tcp, 1032)));  // just past the range
    auto arp = packet::build_frame(frame(false, packet::L4::udp));
    arp[12] = 0x08;
    arp[13] = 0x06;  // ARP ethertype
    foreign.push_back(arp);
    auto icmp = packet::build_frame(frame(false, packet::L4::udp));
    icmp[14 + 9] = 1;  // IPv4 protocol ICMP
    foreign.push_back(icmp);
    auto opts = packet::build_frame(frame(false, packet::L4::udp));
    opts[14] = 0x46;  // IHL 6: options, not a linerate frame
    foreign.push_back(opts);
    auto frag = packet::build_frame(frame(false, packet::L4::udp));
    frag[14 + 6] = 0x20;  // more fragments
    foreign.push_back(frag);
    auto ipv6_ext = packet::build_frame(frame(true, packet::L4::udp));
    ipv6_ext[14 + 6] = 0;  // next header: hop-by-hop options
    foreign.push_back(ipv6_ext);
    for (size_t i = 0; i < foreign.size(); ++i) EXPECT_EQ(run(foreign[i]), XDP_PASS) << "frame " << i;
    const auto st = prog->queue_stats(0);
    EXPECT_EQ(st.passed, foreign.size());
    EXPECT_EQ(st.received, foreign.size());
    EXPECT_EQ(st.redirect_failed, 0u);
}

TEST_F(Fixture, TruncatedFramesPassAndNeverCrash) {
    const auto full = packet::build_frame(frame(false, packet::L4::udp));
    const auto v6 = packet::build_frame(frame(true, packet::L4::tcp));
    unsigned ran = 0;
    for (size_t len = 0; len < 60; ++len) {
        for (const auto* f : {&full, &v6}) {
            std::vector<uint8_t> cut(f->begin(), f->begin() + static_cast<long>(len));
            const int v = run(cut);
            if (len < 14) {
                EXPECT_LT(v, 0) << "the kernel refuses XDP test input shorter than an Ethernet header";
                continue;
            }
            ++ran;
            // Up to the end of the L4 header the frame is foreign; a complete header is ours.
            const size_t need = f == &full ? 42 : 74;
            EXPECT_EQ(v, len >= need ? XDP_DROP : XDP_PASS) << "len " << len;
        }
    }
    const auto st = prog->queue_stats(0);
    EXPECT_EQ(st.received, ran);
}
