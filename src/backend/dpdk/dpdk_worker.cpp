// Hot loops. Rules: no allocation, lock, syscall or log per packet; counters are published
// with one relaxed store per field per burst; frames were written once when the mempool was
// created, so sending writes nothing into packet data.
#include "backend/dpdk/dpdk_worker.h"

#include "engine/idle_yield.h"
#include "engine/pacer.h"
#include "engine/tx_signer.h"
#include "stats/rx_measure.h"
#include "stats/tsc_clock.h"

#include <cstring>
#include <rte_ethdev.h>
#include <rte_mbuf.h>
#include <rte_mempool.h>

namespace lr::dpdk {
namespace {

using stats::publish;

template <bool Limited>
void tx_loop(const WorkerCtx& w) {
    rte_mbuf* pend[kMaxBurst];
    uint32_t npend = 0;
    uint64_t sent = 0, backpressure = 0, no_buffer = 0, polls = 0;
    engine::IdleYield blocked(w.yield_when_idle);  // the receiver may share this core: let it drain
    auto& c = *w.counters;
    const auto& stop = w.ctl->stop_tx;
    engine::Pacer pacer(w.rate_pps);
    pacer.start();
    engine::TxSigner signer(w.signature, w.layout, w.streams, w.templates);
    while (!stop.load(std::memory_order_relaxed)) {
        uint32_t want = w.burst;
        if constexpr (Limited) {
            const uint64_t left = w.count - sent;
            if (left == 0) break;
            if (left < want) want = static_cast<uint32_t>(left);
        }
        if (pacer.limited()) {
            // Pending packets were already offered once; pace only new ones.
            const uint32_t a = pacer.allowance(sent + npend, want > npend ? want - npend : 0);
            want = npend + a;
            if (want == 0) {
                publish(c.polls, ++polls);
                continue;
            }
        }
        // Mbufs come back from the driver with data, data_len and pkt_len intact, so a raw
        // pool get hands out ready frames.
        if (npend < want) {
            // The burst's timestamp: one clock read, just before its frames are taken and stamped.
            if (signer.on()) signer.begin_burst();
            if (rte_mempool_get_bulk(w.pool, reinterpret_cast<void**>(pend + npend), want - npend) == 0) {
                if (signer.on()) {  // new frames only: re-offered ones keep their stamp
                    // The frame data follows the mbuf header at a fixed offset (pools are made
                    // without private area): no mbuf header read.
                    signer.stamp_burst(reinterpret_cast<void* const*>(pend), sizeof(rte_mbuf) + RTE_PKTMBUF_HEADROOM,
                                       npend, want);
                }
                npend = want;
            } else {
                ++no_buffer;
            }
        }
        ++polls;
        if (npend) {
            const uint16_t n = rte_eth_tx_burst(w.port, w.queue, pend, static_cast<uint16_t>(npend));
            if (n < npend) {
                // Back-pressure: keep the rest and offer it again next burst (counted, and
                // bounded by the watchdog's stall limit and the stop flag).
                ++backpressure;
                if (n) std::memmove(pend, pend + n, (npend - n) * sizeof(pend[0]));
            }
            if (n == 0) blocked.idle();
            npend -= n;
            sent += n;
            publish(c.packets, sent);
            publish(c.bytes, sent * w.wire_bytes);
            publish(c.backpressure, backpressure);
        }
        publish(c.no_buffer, no_buffer);
        publish(c.polls, polls);
    }
    signer.prepare_unsent();
    for (uint32_t i = 0; i < npend && signer.on(); ++i) signer.unsent(rte_pktmbuf_mtod(pend[i], uint8_t*));
    if (w.tx_sent) *w.tx_sent = signer.sent();
    if (npend) rte_mempool_put_bulk(w.pool, reinterpret_cast<void**>(pend), npend);
    publish(c.unsent, npend);
}

void rx_loop(const WorkerCtx& w) {
    rte_mbuf* bufs[kMaxBurst];
    uint64_t packets = 0, bytes = 0, polls = 0, first = 0, last = 0;
    engine::IdleYield idle(w.yield_when_idle);
    stats::RxMeasure meas(w.signature, w.nonce, w.rx_streams, w.rx_result);
    stats::BurstClock clk;
    auto& c = *w.counters;
    const auto& stop = w.ctl->stop_rx;
    const uint16_t burst = static_cast<uint16_t>(w.burst);
    while (!stop.load(std::memory_order_relaxed)) {
        const uint16_t n = rte_eth_rx_burst(w.port, w.queue, bufs, burst);
        publish(c.polls, ++polls);
        meas.poll();
        if (n == 0) {
            idle.idle();
            continue;
        }
        idle.busy();
        last = clk.now();  // one clock read per burst: RX timestamp of every frame in it
        if (!first) first = last;
        meas.burst_time(last);
        uint64_t b = 0;
        for (uint16_t i = 0; i < n; ++i) {
            b += rte_pktmbuf_pkt_len(bufs[i]);
            meas.frame(rte_pktmbuf_mtod(bufs[i], const uint8_t*), rte_pktmbuf_data_len(bufs[i]));
        }
        packets += n;
        bytes += b + 4ull * n;  // + FCS, which the NIC strips
        rte_pktmbuf_free_bulk(bufs, n);
        publish(c.packets, packets);
        publish(c.bytes, bytes);
        meas.publish(c);
    }
    if (first) {
        publish(c.first_pkt_ns, first);
        publish(c.last_pkt_ns, last);
    }
}

}  // namespace

int worker_main(void* arg) {
    const auto& w = *static_cast<const WorkerCtx*>(arg);
    stats::set_state(*w.counters, stats::WorkerState::running);
    if (w.dir == stats::Dir::tx && w.rr_rx && w.reflect) {
        reflect_loop(w);
    } else if (w.dir == stats::Dir::tx && w.rr_rx) {
        rr_loop(w);
    } else if (w.dir == stats::Dir::tx) {
        if (w.count) tx_loop<true>(w);
        else tx_loop<false>(w);
    } else {
        rx_loop(w);
    }
    if (w.counters->state.load(std::memory_order_relaxed) != static_cast<uint32_t>(stats::WorkerState::finished))
        stats::set_state(*w.counters, stats::WorkerState::finished);
    return 0;
}

}  // namespace lr::dpdk
