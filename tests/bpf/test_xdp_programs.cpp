// linerate's XDP programs run by the kernel (bpf_prog_test_run_opts) on the wire format's
// fixture table (tests/unit/wire_fixtures.h): each program acts on exactly the frames the C++
// classifier accepts, with its own documented action per verdict, and counts them by verdict.
#include <gtest/gtest.h>

#include <bpf/bpf.h>
#include <linux/bpf.h>
#include <unistd.h>

#include <chrono>
#include <thread>

#include "../unit/wire_fixtures.h"
#include "backend/afxdp/live_tx.h"
#include "backend/afxdp/xdp_prog.h"
#include "packet/frame.h"
#include "packet/signature.h"
#include "stats/tsc_clock.h"
#include "backend/afxdp/xdp_reflect.h"
#include "backend/afxdp/xdp_sink.h"

using namespace lr;
namespace wf = wire_fixtures;

namespace {

struct Run {
    int action = -1;
    std::vector<uint8_t> out;
};

// Runs the program once on `pkt`: its XDP action (or -errno from the kernel) and the frame after.
Run run(int prog_fd, const std::vector<uint8_t>& pkt) {
    Run r;
    r.out.resize(pkt.size() + 256);
    LIBBPF_OPTS(bpf_test_run_opts, o, .data_in = pkt.data(), .data_out = r.out.data(),
                .data_size_in = static_cast<__u32>(pkt.size()), .data_size_out = static_cast<__u32>(r.out.size()),
                .repeat = 1);
    const int err = bpf_prog_test_run_opts(prog_fd, &o);
    r.action = err ? -errno : static_cast<int>(o.retval);
    r.out.resize(o.data_size_out);
    return r;
}

afxdp::RxMatch test_ports() {
    afxdp::RxMatch m;
    m.dst_port_lo = wf::kPortLo;
    m.dst_port_hi = wf::kPortHi;
    return m;
}

struct Programs : ::testing::Test {
    void SetUp() override {
        if (geteuid() != 0) GTEST_SKIP() << "loading BPF programs needs root";
    }
};

}  // namespace

TEST_F(Programs, TheReceiveProgramSteersWhatUserSpaceClassifies) {
    afxdp::XdpRxProgram prog(test_ports());
    uint64_t steered = 0;
    for (const auto& f : wf::all()) {
        // No socket in the XSKMAP: a frame for user space is dropped, never handed to the stack.
        EXPECT_EQ(run(prog.prog_fd(), f.frame).action, f.steered ? XDP_DROP : XDP_PASS) << f.name;
        steered += f.steered;
    }
    const auto st = prog.queue_stats(0);
    EXPECT_EQ(st.received, wf::all().size());
    EXPECT_EQ(st.redirect_failed, steered);
    EXPECT_EQ(st.passed, wf::all().size() - steered);
}

TEST_F(Programs, TheSinkCountsEveryVerdictAsUserSpaceWould) {
    afxdp::XdpSink sink(afxdp::RxMatch{}, wf::kNonce, wf::kStreams, "", 0, afxdp::XdpMode::auto_mode);
    uint64_t n[4] = {}, ours_bytes = 0;
    for (const auto& f : wf::all()) {
        const int want = f.verdict == LR_OURS || f.verdict == LR_MALFORMED ? XDP_DROP : XDP_PASS;
        EXPECT_EQ(run(sink.prog_fd(), f.frame).action, want) << f.name;
        ++n[f.verdict];
        if (f.verdict == LR_OURS) ours_bytes += f.frame.size() + 4;
    }
    const auto st = sink.queue_stats(0);
    EXPECT_EQ(st.frames, wf::all().size());
    EXPECT_EQ(st.ours, n[LR_OURS]);
    EXPECT_EQ(st.ours_bytes, ours_bytes);
    EXPECT_EQ(st.malformed, n[LR_MALFORMED]);
    EXPECT_EQ(st.stale, n[LR_STALE]);
    EXPECT_EQ(st.foreign, n[LR_FOREIGN] + n[LR_STALE]);
    uint64_t per_stream = 0;
    for (const auto& [frames, highest] : sink.streams()) per_stream += frames;
    EXPECT_EQ(per_stream, n[LR_OURS]);
    EXPECT_EQ(sink.streams()[1].second, 78u) << "highest sequence 77, plus one";
}

TEST_F(Programs, TheReflectorReturnsOnlyValidSignaturesSwappedAsUserSpaceDoes) {
    afxdp::XdpReflector refl(afxdp::RxMatch{}, "", 0, afxdp::XdpMode::auto_mode);
    uint64_t reflected = 0;
    for (const auto& f : wf::all()) {
        const auto r = run(refl.prog_fd(), f.frame);
        EXPECT_EQ(r.action, f.reflected ? XDP_TX : XDP_PASS) << f.name;
        auto expect = f.frame;
        packet::reflect_swap(expect.data(), expect.size());
        EXPECT_EQ(r.out, expect) << f.name;
        reflected += f.reflected;
    }
    const auto st = refl.stats(1);
    EXPECT_EQ(st.redirected, reflected);
    EXPECT_EQ(st.passed, wf::all().size() - reflected);
}

TEST_F(Programs, TheReflectorCanBeLimitedToOneRun) {
    afxdp::XdpReflector refl(afxdp::RxMatch{}, "", 0, afxdp::XdpMode::auto_mode, wf::kNonce);
    EXPECT_EQ(run(refl.prog_fd(), wf::signed_frame(wf::spec(false, packet::L4::udp))).action, XDP_TX);
    EXPECT_EQ(run(refl.prog_fd(), wf::signed_frame(wf::spec(false, packet::L4::udp), 1, 0x4321)).action, XDP_PASS);
}

TEST_F(Programs, TruncatedFramesNeverCrashAndPassWhenIncomplete) {
    afxdp::XdpRxProgram prog(test_ports());
    afxdp::XdpSink sink(afxdp::RxMatch{}, wf::kNonce, wf::kStreams, "", 0, afxdp::XdpMode::auto_mode);
    const auto full = wf::signed_frame(wf::spec(false, packet::L4::udp, 128));
    for (size_t len = 14; len < full.size(); ++len) {
        std::vector<uint8_t> cut(full.begin(), full.begin() + static_cast<long>(len));
        EXPECT_EQ(run(prog.prog_fd(), cut).action, XDP_PASS) << len;  // the IP length claims more
        EXPECT_EQ(run(sink.prog_fd(), cut).action, XDP_PASS) << len;
    }
    EXPECT_EQ(sink.queue_stats(0).ours, 0u);
}

// The live-frames sender's program, run once per frame (not live): each copy of a template gets
// its stream's next sequence, the kernel clock's time and a checksum that verifies, across the
// carries of the sequence and of the checksum, for UDP and TCP, IPv4 and IPv6, several flows.
TEST_F(Programs, TheLiveFramesProgramSignsEachCopyExactly) {
    struct Kind {
        const char* name;
        packet::L4 l4;
        bool v6;
        unsigned size;
    };
    for (const Kind k : {Kind{"udp4 64", packet::L4::udp, false, 64}, Kind{"udp6 1024", packet::L4::udp, true, 1024},
                         Kind{"tcp4 64", packet::L4::tcp, false, 64}, Kind{"tcp6 128", packet::L4::tcp, true, 128}}) {
        packet::FrameSpec fs;
        fs.l4 = k.l4;
        fs.frame_size = k.size;
        fs.src_ip = packet::parse_ip(k.v6 ? "2001:2::1" : "198.18.0.1", "t");
        fs.dst_ip = packet::parse_ip(k.v6 ? "2001:2::2" : "198.18.0.2", "t");
        const auto l = packet::sig_layout(fs);
        ASSERT_NE(l.level, packet::SigLevel::none) << k.name;
        afxdp::LiveTxProgram prog(1, l, true, 8, k.size - 4);
        for (uint16_t stream : {0, 3, 7}) {
            auto tpl = packet::build_frame(fs);
            tpl.resize(k.size - 4);
            packet::sig_init(tpl, l, 4242, stream);
            const auto base = static_cast<uint16_t>(~(tpl[l.csum_off] << 8 | tpl[l.csum_off + 1]));
            const uint64_t start = l.seq_bits == 32 ? 0xfffffffdull - stream : 0xfffffffffffdull - stream * 0x10000ull;
            prog.set_next(stream, start, base);
            for (unsigned i = 0; i < 5; ++i) {
                const uint64_t before = stats::now_ns() & LR_SIG48_MASK;
                const auto r = run(prog.prog_fd(), tpl);
                ASSERT_EQ(r.action, XDP_REDIRECT) << k.name;
                const auto info = packet::sig_classify(r.out.data(), r.out.size(), 4242, 8);
                ASSERT_EQ(info.cls, packet::FrameClass::ours) << k.name << " stream " << stream << " copy " << i;
                EXPECT_EQ(info.stream, stream);
                const uint64_t mask = l.seq_bits == 32 ? 0xffffffffull : LR_SIG48_MASK;
                EXPECT_EQ(info.seq, (start + i) & mask) << k.name;
                if (l.level == packet::SigLevel::seq_ts) {
                    EXPECT_TRUE(info.has_ts);
                    EXPECT_GE(info.ts_ns + 1000, before) << "the kernel's CLOCK_MONOTONIC, as the other engines stamp";
                    EXPECT_LE(info.ts_ns, (stats::now_ns() & LR_SIG48_MASK) + 1000);
                }
                // Everything but sequence, timestamp and checksum is the template's.
                auto a = r.out, b = tpl;
                for (auto* f : {&a, &b}) {
                    std::fill_n(f->begin() + l.csum_off, 2, 0);
                    std::fill_n(f->begin() + l.seq_off, l.seq_bits / 8, 0);
                    if (l.level == packet::SigLevel::seq_ts) std::fill_n(f->begin() + l.ts_off, 6, 0);
                }
                EXPECT_EQ(a, b) << k.name;
            }
            EXPECT_EQ(prog.produced(stream), start + 5);
        }
    }
}

TEST(LiveFramesClock, OneReadingServesAPowerOfTwoThatDividesTheBatch) {
    EXPECT_EQ(afxdp::frames_per_clock_reading(128), 8u);
    EXPECT_EQ(afxdp::frames_per_clock_reading(256), 8u);
    EXPECT_EQ(afxdp::frames_per_clock_reading(100), 4u);
    EXPECT_EQ(afxdp::frames_per_clock_reading(6), 2u);
    EXPECT_EQ(afxdp::frames_per_clock_reading(33), 1u);
    EXPECT_EQ(afxdp::frames_per_clock_reading(1), 1u);
}

// The program reads the clock for the first of every ts_every frames of a stream, and again
// for a run's first frame (restart_clock): frames run 200 us apart here, so a stamp shared
// beyond its group, or carried into the next run, would show as an equal stamp.
TEST_F(Programs, TheLiveFramesProgramReadsTheClockOncePerGroupAndPerRun) {
    packet::FrameSpec fs;
    fs.frame_size = 64;
    const auto l = packet::sig_layout(fs);
    ASSERT_EQ(l.level, packet::SigLevel::seq_ts);
    afxdp::LiveTxProgram prog(1, l, true, 4, 60);
    prog.set_batch(128);
    auto tpl = packet::build_frame(fs);
    tpl.resize(60);
    packet::sig_init(tpl, l, 4242, 2);
    worker::WorkerConfig w;
    w.tx.streams = {2};
    w.tx.templates = {tpl};
    prog.reset(w);
    auto stamp = [&] {
        std::this_thread::sleep_for(std::chrono::microseconds(200));
        const auto r = run(prog.prog_fd(), tpl);
        EXPECT_EQ(r.action, XDP_REDIRECT);
        const auto info = packet::sig_classify(r.out.data(), r.out.size(), 4242, 4);
        EXPECT_EQ(info.cls, packet::FrameClass::ours) << "the checksum verifies with a shared stamp too";
        return info.ts_ns;
    };
    std::vector<uint64_t> ts;
    for (int i = 0; i < 20; ++i) ts.push_back(stamp());
    for (int i = 1; i < 20; ++i) {
        if (i % 8 == 0)
            EXPECT_GT(ts[i], ts[i - 1]) << "frame " << i << " starts a group: a fresh reading";
        else
            EXPECT_EQ(ts[i], ts[i - 1]) << "frame " << i << " shares its group's reading";
    }
    prog.restart_clock(2);
    const uint64_t after_restart = stamp();
    EXPECT_GT(after_restart, ts.back()) << "a run's first frame reads the clock";
    EXPECT_EQ(stamp(), after_restart);
    EXPECT_EQ(prog.produced(2), 22u);
}

TEST_F(Programs, TheLiveFramesProgramCountsPlainFramesPerCpu) {
    packet::FrameSpec fs;
    const auto l = packet::sig_layout(fs);
    afxdp::LiveTxProgram prog(1, l, false, 1024, 60);
    const auto tpl = packet::build_frame(fs);
    uint64_t before = 0;
    for (uint32_t c = 0; c < 1024; ++c) before += prog.produced(c);
    for (int i = 0; i < 3; ++i) {
        const auto r = run(prog.prog_fd(), tpl);
        ASSERT_EQ(r.action, XDP_REDIRECT);
        EXPECT_EQ(r.out, tpl) << "plain frames leave as built";
    }
    uint64_t after = 0;
    for (uint32_t c = 0; c < 1024; ++c) after += prog.produced(c);
    EXPECT_EQ(after - before, 3u);
}
