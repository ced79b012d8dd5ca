// The request/response engine (the netperf RR figure), written once for every backend: one
// worker sends requests on a queue and receives the reflected responses on the same queue,
// keeping at most `outstanding` requests unanswered. Responses are matched by signature
// (distinct sequences of our streams). When nothing was answered for the response timeout,
// every request the device took and nobody answered is written off as a timeout, so the
// window cannot stall; a response that comes after that is not counted twice.
#pragma once
#include <algorithm>

#include "stats/rx_measure.h"
#include "stats/tsc_clock.h"
#include "worker/engine_common.h"
#include "worker/pacer.h"
#include "worker/queue_ops.h"
#include "worker/tx_signer.h"

namespace lr::worker {

template <TxQueueOps Tx, RxQueueOps Rx>
bool rr_engine(Tx& tx, Rx& rx, const WorkerConfig& w) {
    using stats::publish;
    const TxSetup& t = w.tx;
    auto& tc = *w.tx_counters;
    auto& rc = *w.rx_counters;
    LoopFrame loop(w.ctl->stop_rx, false);
    TxSigner signer(t.sign, t.layout, t.streams, t.templates);
    stats::RxMeasure meas(w.rx.sign, w.rx.nonce, w.rx.streams, w.rx.result);
    stats::BurstClock clk;
    Pacer pacer(t.pacing);
    pacer.start(clk.now());
    const uint64_t timeout_ns = static_cast<uint64_t>(w.response_timeout_s * 1e9);
    uint64_t timeouts = 0, backpressure = 0, no_buffer = 0, rpkts = 0, rbytes = 0, first = 0, last = 0;
    uint64_t last_progress = stats::now_ns(), answered_seen = 0;
    bool tx_done = false;
    while (loop.running()) {
        loop.poll();
        meas.poll();
        const uint32_t n = rx.receive(w.rx.burst);
        if (n) {
            last = clk.now();
            if (!first) first = last;
            meas.burst_time(last);
            uint64_t b = 0;
            for (uint32_t i = 0; i < n; ++i) {
                b += rx.wire_bytes(i);
                meas.frame(rx.data(i), rx.len(i), rx.csum_verified(i));
            }
            rx.release();
            rpkts += n;
            rbytes += b;
            publish(rc.packets, rpkts);
            publish(rc.bytes, rbytes);
            meas.publish(rc);
        } else {
            rx.idle();
        }
        tx.reclaim();
        const uint64_t now = n ? last : stats::now_ns();
        const uint64_t answered = meas.unique() + timeouts;
        if (answered != answered_seen) {
            answered_seen = answered;
            last_progress = now;
        }
        const uint64_t issued = tx.issued(), held = tx.held();
        const uint64_t unanswered = issued > answered ? issued - answered : 0;
        if (unanswered > held && now - last_progress > timeout_ns) {
            timeouts += unanswered - held;  // taken by the device, never answered: lost
            last_progress = now;
            publish(tc.timeouts, timeouts);
        }
        if (!tx_done && w.ctl->stop_tx.load(std::memory_order_relaxed)) tx_done = true;
        if (!tx_done) {
            uint64_t room = unanswered < w.outstanding ? w.outstanding - unanswered : 0;
            room = std::min<uint64_t>(room, tx.room(t.burst));
            if (t.count) room = std::min<uint64_t>(room, t.count - issued);
            const uint64_t tnow = clk.now();
            if (room && pacer.limited()) room = pacer.due(tnow, static_cast<uint32_t>(room));
            if (room) {
                signer.begin_burst(tnow);
                const Acquired a = tx.acquire(static_cast<uint32_t>(room));
                no_buffer += a.no_buffer;
                backpressure += a.ring_full;
                if (a.got) {
                    const FrameSpan f = tx.fresh();
                    signer.stamp_burst(f.base, f.offset, f.from, f.to);
                }
            }
            const Transmitted x = tx.transmit();
            backpressure += x.partial;
            if (x.taken && t.departures) t.departures->burst(tnow, x.taken);
            if (t.count && tx.confirmed() >= t.count) {
                tx_done = true;
                stats::set_state(tc, stats::WorkerState::finished);
            }
        }
        const uint64_t sent = tx.confirmed();
        publish(tc.packets, sent);
        publish(tc.bytes, sent * t.wire_bytes);
        publish(tc.backpressure, backpressure);
        publish(tc.no_buffer, no_buffer);
        publish(tc.tx_errors, tx.errors());
        publish(tc.polls, loop.polls());
        publish(rc.polls, loop.polls());
        if (tx.failed()) break;
    }
    tx.finish();
    const uint64_t sent = tx.confirmed(), unconfirmed = tx.issued() - sent;
    signer.prepare_unsent();
    if (unconfirmed) tx.for_each_unconfirmed([&](const uint8_t* f, uint16_t, uint32_t) { signer.unsent(f); });
    if (t.sent_per_stream) *t.sent_per_stream = signer.sent();
    tx.drop_held();
    publish(tc.packets, sent);
    publish(tc.bytes, sent * t.wire_bytes);
    publish(tc.unsent, unconfirmed);
    if (first) {
        publish(rc.first_pkt_ns, first);
        publish(rc.last_pkt_ns, last);
    }
    return !tx.failed();
}

}  // namespace lr::worker
