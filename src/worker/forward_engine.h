// The forwarding engine of `linerate impair`, written once for every backend: per burst,
// receive on one port's queue and hand each frame to the impairer (worker/impairer.h: counted,
// dropped or held), then take what is due from it and send it on the other port's queue, as
// many as that device takes now (the rest wait in the impairer, counted as held). Received
// counts on the RX counters, sent on the TX counters as the device confirmed them, and every
// impairment decision in the impairer's counts, published once per burst.
#pragma once
#include <algorithm>
#include <cstring>
#include <sys/prctl.h>
#include <time.h>

#include "stats/tsc_clock.h"
#include "worker/engine_common.h"
#include "worker/impairer.h"
#include "worker/queue_ops.h"

namespace lr::worker {

// An idle forwarder: it spins (or yields a shared core) while a departure is due within
// kForwardSpinNs, so it leaves on time; otherwise it naps in slices of at most kForwardNapNs
// (timer slack 1 ns), so a frame that arrives meanwhile waits at most that long in the ring
// before it is received (its delay starts then) and an idle path costs little CPU.
inline constexpr uint64_t kForwardSpinNs = 30'000, kForwardNapNs = 15'000;

namespace detail {
inline void forward_nap(uint64_t wait_ns, bool shares_core) {
    if (wait_ns > kForwardSpinNs || wait_ns == UINT64_MAX) {
        const timespec ts{0, static_cast<long>(kForwardNapNs)};
        nanosleep(&ts, nullptr);
    } else if (shares_core) {
        sched_yield();
    } else {
#if defined(__x86_64__) || defined(__i386__)
        __builtin_ia32_pause();
#endif
    }
}
}  // namespace detail

template <RxQueueOps Rx, TxQueueOps Tx>
bool forward_engine(Rx& rx, Tx& tx, const WorkerConfig& w) {
    using stats::publish;
    Impairer& imp = *w.fwd.impairer;
    auto& rc = *w.rx_counters;
    auto& tc = *w.tx_counters;
    auto& ic = *w.fwd.counts;
    LoopFrame loop(w.ctl->stop_rx, w.yield_when_idle);
    stats::BurstClock clk;
    prctl(PR_SET_TIMERSLACK, 1UL);  // its naps end when asked
    uint64_t packets = 0, bytes = 0, backpressure = 0, no_buffer = 0, first = 0, last = 0;
    while (loop.running()) {
        loop.poll();
        tx.reclaim();
        const uint32_t n = rx.receive(w.rx.burst);
        uint64_t now = clk.now();
        if (n) {
            last = now;
            if (!first) first = now;
            for (uint32_t i = 0; i < n; ++i) {
                bytes += rx.wire_bytes(i);
                imp.arrive(rx.data(i), rx.len(i), now);
            }
            rx.release();
            packets += n;
        } else {
            rx.idle();
        }
        uint32_t sent = 0;
        if (const uint32_t ready = imp.ready(now, w.tx.burst)) {
            const uint32_t want = tx.avail(tx.room(ready));
            if (want) {
                const Acquired a = tx.acquire(want);
                no_buffer += a.no_buffer;
                backpressure += a.ring_full;
                const FrameSpan f = tx.fresh();
                for (uint32_t i = 0; i < a.got; ++i) {
                    const uint32_t len = imp.front_len();
                    std::memcpy(f.fresh_frame(i), imp.front_data(), len);
                    tx.set_frame(f.from + i, static_cast<uint16_t>(len), 0);
                    imp.pop_front(now);
                }
                sent = a.got;
            }
        }
        const Transmitted x = tx.transmit();
        backpressure += x.partial;
        publish(rc.packets, packets);
        publish(rc.bytes, bytes);
        publish(rc.polls, loop.polls());
        publish(tc.packets, tx.confirmed());
        publish(tc.bytes, tx.confirmed_bytes());
        publish(tc.backpressure, backpressure);
        publish(tc.no_buffer, no_buffer);
        publish(tc.tx_errors, tx.errors());
        publish(tc.polls, loop.polls());
        ic.publish(imp.counts());
        if (tx.failed()) break;
        if (n == 0 && sent == 0 && x.taken == 0) {
            // Nothing arrived or left: frames the device has not taken yet are looked at again
            // at once; otherwise wait for the next departure (spinning when it is close).
            if (tx.held()) {
                loop.idle();
            } else {
                now = clk.now();
                const uint64_t next = imp.next_event(now);
                detail::forward_nap(next == UINT64_MAX ? next : next > now ? next - now : 0, w.yield_when_idle);
            }
        } else {
            loop.busy();
        }
    }
    tx.finish();
    publish(tc.packets, tx.confirmed());
    publish(tc.bytes, tx.confirmed_bytes());
    publish(tc.unsent, tx.issued() - tx.confirmed());
    tx.drop_held();
    ic.publish(imp.counts());
    if (first) {
        publish(rc.first_pkt_ns, first);
        publish(rc.last_pkt_ns, last);
    }
    return !tx.failed();
}

}  // namespace lr::worker
