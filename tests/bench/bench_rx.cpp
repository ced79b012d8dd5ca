// Benchmark (not a test): the receive engine's per-frame work alone, on pre-built frames.
//
//   build/tests/bench/bench_rx [--benchmark_repetitions=5]
//
// A pass is 4096 64-byte IPv4/UDP frames, each in its own 2 KiB buffer (an mbuf's stride,
// 8 MiB in all: beyond L2), handed to the RX measurement in bursts of 32 with one clock
// read per burst, as a backend's RX loop does. Between passes (untimed) every frame is
// re-stamped with the next sequence and a fresh timestamp, so the tracker sees one stream
// arriving in order. Reported: frames per second of one core.
#include <benchmark/benchmark.h>

#include <cstring>
#include <memory>
#include <vector>

#include "packet/frame.h"
#include "packet/signature.h"
#include "stats/rx_measure.h"
#include "stats/tsc_clock.h"

namespace {

constexpr size_t kFrames = 4096, kStride = 2048, kBurst = 32;
constexpr uint16_t kNonce = 0x1234;

struct Frames {
    lr::packet::FrameSpec spec;
    lr::packet::SigLayout layout;
    std::vector<uint8_t> tmpl;
    std::unique_ptr<uint8_t[]> mem{new uint8_t[kFrames * kStride]};
    uint64_t next_seq = 0;
    Frames() {
        spec.src_ip = lr::packet::parse_ip("198.18.0.1", "src");
        spec.dst_ip = lr::packet::parse_ip("198.18.0.2", "dst");
        layout = lr::packet::sig_layout(spec);
        tmpl = lr::packet::build_frame(spec);
        lr::packet::sig_init(tmpl, layout, kNonce, 0);
        for (size_t i = 0; i < kFrames; ++i) std::memcpy(at(i), tmpl.data(), tmpl.size());
    }
    uint8_t* at(size_t i) { return mem.get() + i * kStride; }
    void restamp(uint64_t now) {
        for (size_t i = 0; i < kFrames; ++i) {
            std::memcpy(at(i), tmpl.data(), tmpl.size());
            lr::packet::sig_stamp(at(i), layout, next_seq++, now & ((uint64_t(1) << 48) - 1));
        }
    }
};

void rx_frames(benchmark::State& state) {
    const bool sign = state.range(0) != 0;
    Frames f;
    lr::stats::RxResult res;
    lr::stats::RxMeasure meas(sign, kNonce, 1, &res);
    lr::stats::BurstClock clk;
    lr::stats::QueueCounters ctr;
    uint64_t frames = 0;
    for (auto _ : state) {
        state.PauseTiming();
        f.restamp(clk.now());
        state.ResumeTiming();
        for (size_t b = 0; b < kFrames; b += kBurst) {
            meas.poll();
            meas.burst_time(clk.now());
            uint64_t bytes = 0;
            for (size_t i = b; i < b + kBurst; ++i) {
                bytes += f.tmpl.size();
                meas.frame(f.at(i), static_cast<uint32_t>(f.tmpl.size()));
            }
            benchmark::DoNotOptimize(bytes);
            meas.publish(ctr);
        }
        frames += kFrames;
    }
    if (sign && meas.unique() != frames) state.SkipWithError("frames not recognised as ours and in order");
    state.SetItemsProcessed(static_cast<int64_t>(frames));
    state.counters["Mpps"] = benchmark::Counter(static_cast<double>(frames) / 1e6, benchmark::Counter::kIsRate);
}

BENCHMARK(rx_frames)->Arg(0)->Arg(1)->ArgName("signed")->UseRealTime();

}  // namespace

BENCHMARK_MAIN();
