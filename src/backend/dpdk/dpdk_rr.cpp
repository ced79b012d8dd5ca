// Request/response loop (the netperf RR figure): one worker sends requests on a queue and
// receives the reflected responses on the same queue, keeping at most `outstanding` requests
// unanswered. Responses are matched by signature (distinct sequences of our streams); a
// request unanswered for the response timeout is written off as a timeout so the window
// cannot stall. One worker owns both the TX and the RX counters of the queue pair.
#include <cstring>
#include <rte_ethdev.h>
#include <rte_mbuf.h>
#include <rte_mempool.h>

#include "backend/dpdk/dpdk_worker.h"
#include "engine/pacer.h"
#include "engine/idle_yield.h"
#include "engine/tx_signer.h"
#include "stats/rx_measure.h"
#include "stats/tsc_clock.h"

namespace lr::dpdk {

using stats::publish;

void rr_loop(const WorkerCtx& w) {
    const WorkerCtx& r = *w.rr_rx;
    auto& tc = *w.counters;
    auto& rc = *r.counters;
    stats::set_state(rc, stats::WorkerState::running);
    engine::TxSigner signer(w.signature, w.layout, w.streams, w.templates);
    stats::RxMeasure meas(r.signature, r.nonce, r.rx_streams, r.rx_result);
    stats::BurstClock clk;
    engine::Pacer pacer(w.rate_pps);
    pacer.start();
    rte_mbuf* pend[kMaxBurst];
    rte_mbuf* bufs[kMaxBurst];
    uint32_t npend = 0;
    uint64_t sent = 0, timeouts = 0, backpressure = 0, polls = 0, rpkts = 0, rbytes = 0, first = 0, last = 0;
    const uint64_t timeout_ns = static_cast<uint64_t>(w.response_timeout_s * 1e9);
    uint64_t last_progress = stats::now_ns(), answered_seen = 0;
    bool tx_done = false;
    const uint16_t burst = static_cast<uint16_t>(w.burst);
    while (!r.ctl->stop_rx.load(std::memory_order_relaxed)) {
        ++polls;
        meas.poll();
        const uint16_t n = rte_eth_rx_burst(r.port, r.queue, bufs, burst);
        if (n) {
            last = clk.now();
            if (!first) first = last;
            meas.burst_time(last);
            uint64_t b = 0;
            for (uint16_t i = 0; i < n; ++i) {
                b += rte_pktmbuf_pkt_len(bufs[i]);
                meas.frame(rte_pktmbuf_mtod(bufs[i], const uint8_t*), rte_pktmbuf_data_len(bufs[i]));
            }
            rte_pktmbuf_free_bulk(bufs, n);
            rpkts += n;
            rbytes += b + 4ull * n;
            publish(rc.packets, rpkts);
            publish(rc.bytes, rbytes);
            meas.publish(rc);
        }
        const uint64_t answered = meas.unique() + timeouts;
        const uint64_t now = n ? last : stats::now_ns();
        if (answered != answered_seen) {
            answered_seen = answered;
            last_progress = now;
        }
        // A response that arrives after its request was written off counts in both: guard
        // against answered exceeding what was issued.
        const uint64_t issued = sent + npend;
        const uint64_t inflight = issued > answered ? issued - answered : 0;
        if (inflight > npend && now - last_progress > timeout_ns) {
            timeouts += inflight - npend;  // unanswered for too long: lost, stop waiting
            last_progress = now;
            publish(tc.timeouts, timeouts);
        }
        if (!tx_done && w.ctl->stop_tx.load(std::memory_order_relaxed)) tx_done = true;
        if (!tx_done) {
            uint64_t want = inflight < w.outstanding ? w.outstanding - inflight : 0;
            want = std::min<uint64_t>(want, w.burst - npend);
            if (w.count) want = std::min<uint64_t>(want, w.count - sent - npend);
            if (pacer.limited()) want = pacer.allowance(sent + npend, static_cast<uint32_t>(want));
            if (want && rte_mempool_get_bulk(w.pool, reinterpret_cast<void**>(pend + npend),
                                             static_cast<unsigned>(want)) == 0) {
                signer.begin_burst();
                for (uint32_t i = npend; i < npend + want; ++i) signer.stamp(rte_pktmbuf_mtod(pend[i], uint8_t*));
                npend += static_cast<uint32_t>(want);
            }
            if (npend) {
                const uint16_t k = rte_eth_tx_burst(w.port, w.queue, pend, static_cast<uint16_t>(npend));
                if (k < npend) {
                    ++backpressure;
                    if (k) std::memmove(pend, pend + k, (npend - k) * sizeof(pend[0]));
                }
                npend -= k;
                sent += k;
                publish(tc.packets, sent);
                publish(tc.bytes, sent * w.wire_bytes);
                publish(tc.backpressure, backpressure);
            }
            if (w.count && sent == w.count) {
                tx_done = true;
                stats::set_state(tc, stats::WorkerState::finished);
            }
        }
        publish(tc.polls, polls);
        publish(rc.polls, polls);
    }
    signer.prepare_unsent();
    for (uint32_t i = 0; i < npend; ++i) signer.unsent(rte_pktmbuf_mtod(pend[i], uint8_t*));
    if (w.tx_sent) *w.tx_sent = signer.sent();
    if (npend) rte_mempool_put_bulk(w.pool, reinterpret_cast<void**>(pend), npend);
    publish(tc.unsent, npend);
    if (first) {
        publish(rc.first_pkt_ns, first);
        publish(rc.last_pkt_ns, last);
    }
    stats::set_state(rc, stats::WorkerState::finished);
}

void reflect_loop(const WorkerCtx& w) {
    const WorkerCtx& r = *w.rr_rx;
    auto& tc = *w.counters;
    auto& rc = *r.counters;
    stats::set_state(rc, stats::WorkerState::running);
    rte_mbuf* bufs[kMaxBurst];
    rte_mbuf* back[kMaxBurst];
    rte_mbuf* other[kMaxBurst];
    uint64_t rpkts = 0, rbytes = 0, tpkts = 0, tbytes = 0, foreign = 0, dropped = 0, backpressure = 0, polls = 0;
    uint64_t first = 0, last = 0;
    engine::IdleYield idle(r.yield_when_idle);
    const uint16_t burst = static_cast<uint16_t>(w.burst);
    while (!w.ctl->stop_tx.load(std::memory_order_relaxed) && !r.ctl->stop_rx.load(std::memory_order_relaxed)) {
        publish(tc.polls, ++polls);
        publish(rc.polls, polls);
        const uint16_t n = rte_eth_rx_burst(r.port, r.queue, bufs, burst);
        if (n == 0) {
            idle.idle();
            continue;
        }
        idle.busy();
        last = stats::now_ns();
        if (!first) first = last;
        uint16_t nb = 0, no = 0;
        uint64_t b = 0, bb = 0;
        for (uint16_t i = 0; i < n; ++i) {
            const uint32_t len = rte_pktmbuf_data_len(bufs[i]);
            b += rte_pktmbuf_pkt_len(bufs[i]) + 4;
            if (packet::reflect_swap(rte_pktmbuf_mtod(bufs[i], uint8_t*), len)) {
                back[nb++] = bufs[i];
                bb += rte_pktmbuf_pkt_len(bufs[i]) + 4;
            } else {
                other[no++] = bufs[i];
            }
        }
        if (no) rte_pktmbuf_free_bulk(other, no);  // not linerate's: a DPDK port has no kernel to pass it to
        foreign += no;
        uint16_t sent = 0;
        for (int tries = 0; sent < nb && tries < 8; ++tries) {  // bounded retries, then drop and count
            const uint16_t k = rte_eth_tx_burst(w.port, w.queue, back + sent, static_cast<uint16_t>(nb - sent));
            if (k < nb - sent) ++backpressure;
            sent = static_cast<uint16_t>(sent + k);
        }
        if (sent < nb) {
            // Exact bytes of what the device accepted: take out the frames it never did.
            for (uint16_t i = sent; i < nb; ++i) bb -= rte_pktmbuf_pkt_len(back[i]) + 4;
            rte_pktmbuf_free_bulk(back + sent, nb - sent);
            dropped += nb - sent;
        }
        rpkts += n;
        rbytes += b;
        tpkts += sent;
        tbytes += bb;
        publish(rc.packets, rpkts);
        publish(rc.bytes, rbytes);
        publish(rc.rx_ours, rpkts - foreign);
        publish(rc.rx_unique, rpkts - foreign);
        publish(rc.rx_foreign, foreign);
        publish(tc.packets, tpkts);
        publish(tc.bytes, tbytes);
        publish(tc.backpressure, backpressure);
        publish(tc.unsent, dropped);
    }
    if (first) {
        publish(rc.first_pkt_ns, first);
        publish(rc.last_pkt_ns, last);
    }
    stats::set_state(rc, stats::WorkerState::finished);
}

}  // namespace lr::dpdk
