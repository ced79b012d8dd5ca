// The engines' hot loops for AF_XDP are instantiated here, in a file built with -falign-loops=64.
#include "backend/afxdp/afxdp_worker.h"

#include <chrono>
#include <thread>

#include "backend/afxdp/xsk_ops.h"
#include "worker/reflect_engine.h"
#include "worker/rr_engine.h"
#include "worker/rx_engine.h"
#include "worker/tx_engine.h"

namespace lr::afxdp {

bool run_engine(XskSocket& s, const worker::WorkerConfig& w) {
    switch (w.role) {
        case worker::Role::tx: {
            XskTxOps tx(s, w.tx.frame_len);
            return worker::tx_engine(tx, w);
        }
        case worker::Role::rx: {
            XskRxOps rx(s, w.ctl->stop_rx);
            return worker::rx_engine(rx, w);
        }
        case worker::Role::request_response: {
            XskTxOps tx(s, w.tx.frame_len);
            XskRxOps rx(s, w.ctl->stop_rx);
            return worker::rr_engine(tx, rx, w);
        }
        case worker::Role::reflect: {
            XskReflectOps r(s);
            return worker::reflect_engine(r, w);
        }
    }
    return false;
}

bool run_sink_poller(const XdpSink& sink, const lr_sink_qstats& base, const worker::WorkerConfig& w) {
    auto& c = *w.rx_counters;
    uint64_t polls = 0, seen = base.ours, first = 0, last = 0;
    auto publish_all = [&] {
        const auto s = sink.queue_stats(w.queue);
        const uint64_t now = stats::now_ns();
        if (s.ours != seen) {
            if (!first) first = now;
            last = now;
            seen = s.ours;
        }
        stats::publish(c.packets, s.frames - base.frames);
        stats::publish(c.bytes, s.ours_bytes - base.ours_bytes);
        stats::publish(c.rx_ours, s.ours - base.ours);
        stats::publish(c.rx_unique, s.ours - base.ours);  // the sink cannot tell duplicates apart
        stats::publish(c.rx_foreign, s.foreign - base.foreign);
        stats::publish(c.rx_malformed, s.malformed - base.malformed);
        stats::publish(c.rx_stale, s.stale - base.stale);
        stats::publish(c.polls, ++polls);
    };
    while (!w.ctl->stop_rx.load(std::memory_order_relaxed)) {
        publish_all();
        std::this_thread::sleep_for(std::chrono::milliseconds(2));
    }
    publish_all();
    if (w.queue == 0 && w.rx.result) w.rx.result->sink = sink.streams();  // per port, once
    stats::publish(c.first_pkt_ns, first);
    stats::publish(c.last_pkt_ns, last);
    return true;
}

}  // namespace lr::afxdp
