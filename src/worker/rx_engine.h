// The RX engine, written once for every backend. Per burst: one clock read (the RX timestamp
// of every frame in it), classify and track each frame (stats::RxMeasure), count the bytes
// on the wire, release the buffers, publish the counters.
#pragma once
#include <algorithm>

#include "packet/signature.h"
#include "stats/rx_measure.h"
#include "stats/tsc_clock.h"
#include "worker/engine_common.h"
#include "worker/queue_ops.h"

namespace lr::worker {

// How many frames ahead the receive loop prefetches.
inline constexpr uint32_t kPrefetch = 8;

// The burst's frames into the capture, classified again (by the same rules) only when the
// capture keeps some classes and not others.
template <RxQueueOps Ops>
void capture_burst(Ops& ops, uint32_t n, stats::FrameCapture& cap, uint64_t now, const RxSetup& r) {
    for (uint32_t i = 0; i < n && cap.active(); ++i) {
        int cls = 1;
        if (cap.filters() && r.sign) {
            const auto c = packet::sig_classify(ops.data(i), ops.len(i), r.nonce, r.streams);
            cls = c.cls == packet::FrameClass::ours ? 1 : c.cls == packet::FrameClass::malformed ? 2 : 0;
        }
        cap.take(ops.data(i), ops.len(i), now, cls);
    }
}

template <RxQueueOps Ops>
bool rx_engine(Ops& ops, const WorkerConfig& w) {
    using stats::publish;
    const RxSetup& r = w.rx;
    auto& c = *w.rx_counters;
    LoopFrame loop(w.ctl->stop_rx, w.yield_when_idle);
    stats::RxMeasure meas(r.sign, r.nonce, r.streams, r.result);
    stats::BurstClock clk;
    stats::FrameCapture* cap = r.result->capture.active() ? &r.result->capture : nullptr;
    uint64_t packets = 0, bytes = 0, first = 0, last = 0;
    uint64_t* sizes = r.result->sizes.empty() ? nullptr : r.result->sizes.data();  // sizes that vary
    while (loop.running()) {
        publish(c.polls, loop.poll());
        meas.poll();
        const uint32_t n = ops.receive(r.burst);
        if (n == 0) {
            ops.idle();
            loop.idle();
            continue;
        }
        loop.busy();
        last = clk.now();
        if (!first) first = last;
        meas.burst_time(last);
        // The frames were written by a device or another core: their first cache line is a
        // miss. Ask for the next ones while the current ones are classified.
        // Where finding a frame's data means reading a buffer header (an mbuf), that header is
        // fetched twice as far ahead. (Plain frames are counted, not read.)
        constexpr bool kMeta = requires(Ops o) { o.prefetch_meta(0u); };
        if (r.sign) {
            if constexpr (kMeta)
                for (uint32_t i = 0; i < n && i < 2 * kPrefetch; ++i) ops.prefetch_meta(i);
            for (uint32_t i = 0; i < n && i < kPrefetch; ++i) __builtin_prefetch(ops.data(i));
        }
        uint64_t b = 0;
        for (uint32_t i = 0; i < n; ++i) {
            if (r.sign) {
                if constexpr (kMeta)
                    if (i + 2 * kPrefetch < n) ops.prefetch_meta(i + 2 * kPrefetch);
                if (i + kPrefetch < n) __builtin_prefetch(ops.data(i + kPrefetch));
            }
            const uint64_t wb = ops.wire_bytes(i);
            b += wb;
            if (sizes) ++sizes[std::min<uint64_t>(wb, stats::kSizeSlots - 1)];
            meas.frame(ops.data(i), ops.len(i), ops.csum_verified(i));
        }
        // --capture: a pass of its own over the burst, so the counting loop above stays as
        // tight as without it; once the capture is full it is never looked at again.
        if (cap) [[unlikely]] {
            capture_burst(ops, n, *cap, last, r);
            if (!cap->active()) cap = nullptr;
        }
        ops.release();
        r.result->arrivals.burst(last, n);
        packets += n;
        bytes += b;
        publish(c.packets, packets);
        publish(c.bytes, bytes);
        meas.publish(c);
    }
    if (first) {
        publish(c.first_pkt_ns, first);
        publish(c.last_pkt_ns, last);
    }
    return true;
}

}  // namespace lr::worker
