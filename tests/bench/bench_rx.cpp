// Benchmark (not a test): the receive engine alone, on pre-built frames.
//
//   build/tests/bench/bench_rx [--benchmark_repetitions=5 --benchmark_report_aggregates_only=true]
//
// worker::rx_engine, the loop every backend's receiver runs, over burst operations that hand
// it 4096 pre-built 64-byte IPv4/UDP frames, each in its own 2 KiB buffer (an mbuf's stride, 8
// MiB in all: beyond L2), in bursts of 32: one clock read per burst, then per frame the
// classification, sequence tracking, latency histogram and jitter (signed) or a count (plain).
// Between passes over them (untimed) every frame is re-stamped with the next sequence and a
// fresh timestamp, so the tracker sees one stream arriving in order, and (cold:1) flushed from
// the cache, as frames a device or another core wrote are. One run of the engine takes kLaps
// passes (2 million frames), so that what it does once per run (as once per trial: setting up,
// handing over each stream's totals) weighs on each frame about as little as in a trial (with
// 64 passes, a mix's fold of its buckets into the histograms was a tenth of the case's time). streams:4096 spreads the frames over
// 4096 streams in turn, each with its own sequence window, jitter and latency histogram (a mix
// of that many streams): the state a frame touches is then out of cache too, which the loop's
// prefetches are there to hide. varied:1 stamps each frame up to 16 us before the lap's
// instant, by a pseudo-random draw that goes on from lap to lap, as frames queued behind others on a link are: a
// flow's latency then moves from frame to frame, and with many streams nearly every frame ends
// its latency run (stats::LatencyRun; with varied:0 a flow's latency holds from lap to lap).
// mix:0 makes the 4096 flows those of one stream instead: sequence windows and jitter of
// their own, one latency histogram (the per-stream latency's cost is the difference).
// cold:0 with varied:1 (one stream, 4096 flows, 4096 streams) leaves the frames in the cache:
// the engine's own work without the wait for frames, where a ring pair's receiver, whose frames
// come from the sending core's cache, is between the two.
// Reported: frames per second of one core.
#include <benchmark/benchmark.h>

#include <atomic>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <memory>
#include <vector>

#include "packet/frame.h"
#include "packet/signature.h"
#include "stats/tsc_clock.h"
#include "worker/rx_engine.h"

namespace {

// Frames lie as in a DPDK mbuf pool: each starts on a cache line (after the mbuf's header and
// headroom), one pool element (2,368 bytes: 37 lines) after the last, so that a 64-byte frame
// is one line and successive frames fall in different cache sets.
constexpr size_t kFrames = 4096, kStride = 2368, kLaps = 512;
constexpr uint16_t kNonce = 0x1234;

struct Frames {
    lr::packet::FrameSpec spec;
    lr::packet::SigLayout layout;
    std::vector<std::vector<uint8_t>> tmpl;  // one per stream
    std::unique_ptr<uint8_t, decltype(&std::free)> mem{static_cast<uint8_t*>(std::aligned_alloc(64, kFrames * kStride)),
                                                        &std::free};
    uint64_t next_seq = 0;
    uint32_t spread = 0x9e3779b9;  // varied: the draw goes on from lap to lap
    explicit Frames(uint16_t streams) {
        spec.src_ip = lr::packet::parse_ip("198.18.0.1", "src");
        spec.dst_ip = lr::packet::parse_ip("198.18.0.2", "dst");
        layout = lr::packet::sig_layout(spec);
        for (uint16_t s = 0; s < streams; ++s) {
            tmpl.push_back(lr::packet::build_frame(spec));
            lr::packet::sig_init(tmpl.back(), layout, kNonce, s);
        }
    }
    uint8_t* at(size_t i) { return mem.get() + i * kStride; }
    size_t len() const { return tmpl[0].size(); }
    // Frame i belongs to stream i % streams; each stream's sequence goes on in order.
    void restamp(uint64_t now, bool cold, bool varied) {
        const size_t n = tmpl.size();
        for (size_t i = 0; i < kFrames; ++i) {
            std::memcpy(at(i), tmpl[i % n].data(), len());
            spread = spread * 1664525 + 1013904223;
            const uint64_t ts = varied ? now - (spread >> 18) : now;  // up to 16.4 us earlier
            lr::packet::sig_stamp(at(i), layout, (next_seq + i) / n, ts & LR_SIG48_MASK);
        }
        next_seq += kFrames;
        // What a receiver finds: frames written elsewhere, not in this core's cache.
        if (cold)
            for (size_t i = 0; i < kFrames; ++i) __builtin_ia32_clflush(at(i));
    }
};

// Burst operations over the pre-built frames; when they run out the engine is told to stop.
class FrameOps {
public:
    // `next_lap` re-stamps the frames (untimed) between passes.
    FrameOps(Frames& f, std::atomic<bool>& stop, std::function<void()> next_lap)
        : f_(f), stop_(stop), next_lap_(std::move(next_lap)) {}
    uint32_t receive(uint32_t burst) {
        if (next_ >= kFrames && ++lap_ < kLaps) {
            next_lap_();
            next_ = 0;
        }
        if (next_ >= kFrames) {
            stop_.store(true, std::memory_order_relaxed);
            return 0;
        }
        base_ = next_;
        n_ = static_cast<uint32_t>(std::min<size_t>(burst, kFrames - next_));
        next_ += n_;
        return n_;
    }
    const uint8_t* data(uint32_t i) const { return f_.at(base_ + i); }
    uint32_t len(uint32_t) const { return static_cast<uint32_t>(f_.len()); }
    uint64_t wire_bytes(uint32_t) const { return f_.len() + 4; }
    bool csum_verified(uint32_t) const { return false; }
    void release() {}
    void idle() {}

private:
    Frames& f_;
    std::atomic<bool>& stop_;
    std::function<void()> next_lap_;
    size_t next_ = 0, base_ = 0, lap_ = 0;
    uint32_t n_ = 0;
};
static_assert(lr::worker::RxQueueOps<FrameOps>);

void rx_engine(benchmark::State& state) {
    const bool sign = state.range(0) != 0, cold = state.range(1) != 0;
    const auto streams = static_cast<uint16_t>(state.range(2));
    const bool varied = state.range(3) != 0, mix = state.range(4) != 0;
    Frames f(streams);
    lr::stats::RxResult res;
    if (mix) {  // a mix of `streams` streams: a latency histogram each
        res.stream_latency.resize(streams);
        res.stream_of.resize(streams);
        for (uint16_t s = 0; s < streams; ++s) res.stream_of[s] = s;
    }
    lr::stats::QueueCounters ctr;
    lr::worker::RunControl ctl;
    lr::worker::WorkerConfig w;
    w.role = lr::worker::Role::rx;
    w.rx = {32, sign, kNonce, streams, &res};
    w.rx_counters = &ctr;
    w.ctl = &ctl;
    lr::stats::BurstClock clk;
    uint64_t frames = 0, unique = 0;
    for (auto _ : state) {
        state.PauseTiming();
        f.restamp(clk.now(), cold, varied);
        ctl.stop_rx.store(false);
        FrameOps ops(f, ctl.stop_rx, [&] {
            state.PauseTiming();
            f.restamp(clk.now(), cold, varied);
            state.ResumeTiming();
        });
        state.ResumeTiming();
        lr::worker::rx_engine(ops, w);
        frames += kFrames * kLaps;
        unique += ctr.rx_unique.load();  // this run's: each run's engine counts from 0
    }
    if (sign && unique != frames) state.SkipWithError("frames not recognised as ours and in order");
    state.SetItemsProcessed(static_cast<int64_t>(frames));
    state.counters["Mpps"] = benchmark::Counter(static_cast<double>(frames) / 1e6, benchmark::Counter::kIsRate);
}

BENCHMARK(rx_engine)
    ->ArgsProduct({{0, 1}, {0, 1}, {1}, {0}, {0}})
    ->Args({1, 1, 4096, 0, 1})
    ->Args({1, 1, 1, 1, 0})
    ->Args({1, 1, 4096, 1, 1})
    ->Args({1, 1, 4096, 1, 0})
    ->Args({1, 0, 1, 1, 0})
    ->Args({1, 0, 4096, 1, 0})
    ->Args({1, 0, 4096, 1, 1})
    ->ArgNames({"signed", "cold", "streams", "varied", "mix"})
    ->UseRealTime();

}  // namespace

BENCHMARK_MAIN();
