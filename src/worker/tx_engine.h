// The TX engine, written once for every backend. Per burst: collect confirmations, read the
// clock once (for pacing, the stamp and the departure record), decide how many new frames may
// go (count left, pacing), take ready-made frames, stamp them, offer what is held to the
// device, publish the counters. Counts only what the device confirmed; frames it never took
// are `unsent`, never sent.
#pragma once
#include <algorithm>
#include <sched.h>
#include <sys/prctl.h>
#include <time.h>

#include "stats/tsc_clock.h"
#include "worker/engine_common.h"
#include "worker/pacer.h"
#include "worker/queue_ops.h"
#include "worker/tx_signer.h"
#include "worker/tx_streams_engine.h"

namespace lr::worker {

namespace detail {

// --capture-filter sent: the burst's frames as stamped, until the capture is full (one branch
// per burst after that). Counted as captured when taken for sending: a frame the device then
// refuses is re-offered, never stamped again.
inline void capture_burst(const FrameSpan& f, const TxSetup& t, uint64_t now) {
    if (!t.capture->active()) return;
    if (!now) now = stats::now_ns();  // an unpaced plain run reads no clock otherwise
    for (uint32_t i = f.from; i < f.to && t.capture->active(); ++i)
        t.capture->take(static_cast<const uint8_t*>(f.base[i]) + f.offset, t.frame_len, now, 1);
}

// Limited: the queue sends a fixed share (--count); the unlimited loop has no count test.
template <bool Limited, TxQueueOps Ops>
bool tx_loop(Ops ops, const WorkerConfig& w) {
    using stats::publish;
    const TxSetup& t = w.tx;
    auto& c = *w.tx_counters;
    LoopFrame loop(w.ctl->stop_tx, w.yield_when_idle);  // a receiver may share this core: let it run
    Pacer pacer(t.pacing);
    TxSigner signer(t.sign, t.layout, t.streams, t.templates);
    stats::BurstClock clk;
    // The clock is read once per burst when something needs it: pacing, the stamp, or the
    // departure record of a paced or signed run (an unpaced plain run reads no clock).
    const bool timed = signer.on() || pacer.limited();
    if (pacer.limited()) prctl(PR_SET_TIMERSLACK, 1UL);  // its sleeps end when asked
    if (timed) pacer.start(clk.now());
    uint64_t backpressure = 0, no_buffer = 0;
    PacingPublisher publish_pacing;
    const bool capturing = t.capture != nullptr;  // a register, not a load per burst
    while (loop.running()) {
        loop.poll();
        ops.reclaim();
        const uint64_t now = timed ? clk.now() : 0;
        uint32_t room = ops.room(t.burst);
        if constexpr (Limited) {
            const uint64_t issued = ops.issued();
            if (issued >= t.count) {
                if (ops.confirmed() >= t.count) break;  // every frame of the share confirmed
                room = 0;
            } else {
                room = static_cast<uint32_t>(std::min<uint64_t>(room, t.count - issued));
            }
        }
        if (room && pacer.limited()) room = pacer.due(now, room);
        uint32_t got = 0;
        if (room) {
            if (signer.on()) signer.begin_burst(now);  // the burst's timestamp
            const Acquired a = ops.acquire(room);
            got = a.got;
            no_buffer += a.no_buffer;
            backpressure += a.ring_full;
            if (got && signer.on()) {
                const FrameSpan f = ops.fresh();
                signer.stamp_burst(f.base, f.offset, f.from, f.to);
            }
            if (capturing && got) [[unlikely]]
                capture_burst(ops.fresh(), t, now);
        }
        const Transmitted x = ops.transmit();
        backpressure += x.partial;
        if (timed && x.taken && t.departures) t.departures->burst(now, x.taken);
        const uint64_t sent = ops.confirmed();
        publish(c.packets, sent);
        publish(c.bytes, sent * t.wire_bytes);
        publish(c.backpressure, backpressure);
        publish(c.no_buffer, no_buffer);
        publish(c.tx_errors, ops.errors());
        publish(c.polls, loop.polls());
        publish_pacing(c, pacer);
        if (ops.failed()) break;
        if (got == 0 && x.taken == 0) {
            if (pacer.limited() && ops.held() == 0)
                wait_for_departure(static_cast<int64_t>(pacer.next_due() - now), w.yield_when_idle);
            else loop.idle();
        }
    }
    ops.finish();
    const uint64_t sent = ops.confirmed(), unconfirmed = ops.issued() - sent;
    signer.prepare_unsent();
    if (signer.on() && unconfirmed)
        ops.for_each_unconfirmed([&](const uint8_t* f, uint16_t, uint32_t) { signer.unsent(f); });
    if (t.sent_per_stream) *t.sent_per_stream = signer.sent();
    ops.drop_held();
    publish(c.packets, sent);
    publish(c.bytes, sent * t.wire_bytes);
    publish(c.tx_errors, ops.errors());
    publish(c.unsent, unconfirmed);
    return !ops.failed();
}

}  // namespace detail

// `ops` is taken by value: a local object whose address never escapes keeps its scalars in
// registers across the driver calls of the loop.
template <TxQueueOps Ops>
bool tx_engine(Ops ops, const WorkerConfig& w) {
    if (w.tx.program) return tx_streams_loop(ops, w);
    return w.tx.count ? detail::tx_loop<true>(ops, w) : detail::tx_loop<false>(ops, w);
}

}  // namespace lr::worker
