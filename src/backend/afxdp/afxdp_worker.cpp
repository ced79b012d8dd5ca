// The engines' hot loops for AF_XDP are instantiated here, in a file built with -falign-loops=64.
#include "backend/afxdp/afxdp_worker.h"

#include "backend/afxdp/xsk_ops.h"
#include "worker/connect_engine.h"
#include "worker/forward_engine.h"
#include "worker/reflect_engine.h"
#include "worker/rr_engine.h"
#include "worker/rx_engine.h"
#include "worker/sink_engine.h"
#include "worker/tx_engine.h"

namespace lr::afxdp {

bool run_engine(XskSocket* rs, XskSocket* ts, const worker::WorkerConfig& w) {
    switch (w.role) {
        case worker::Role::tx: {
            XskTxOps tx(*ts, w.tx.frame_len);
            return worker::tx_engine(tx, w);
        }
        case worker::Role::rx: {
            XskRxOps rx(*rs, w.ctl->stop_rx);
            return worker::rx_engine(rx, w);
        }
        case worker::Role::request_response: {
            XskTxOps tx(*ts, w.tx.frame_len);
            XskRxOps rx(*rs, w.ctl->stop_rx);
            return worker::rr_engine(tx, rx, w);
        }
        case worker::Role::reflect: {
            XskReflectOps r(*rs);
            return worker::reflect_engine(r, w);
        }
        case worker::Role::forward: {
            XskRxOps rx(*rs, w.ctl->stop_rx);
            XskTxOps tx(*ts, w.tx.frame_len);
            return worker::forward_engine(rx, tx, w);
        }
        case worker::Role::connect: {
            XskTxOps tx(*ts, w.tx.frame_len);
            XskRxOps rx(*rs, w.ctl->stop_rx);
            return worker::connect_engine(tx, rx, w);
        }
    }
    return false;
}

namespace {

// The XDP counting sink's maps, for one queue, counted from the trial's start.
class XdpSinkOps {
public:
    XdpSinkOps(const XdpSink& sink, const lr_sink_qstats& base, uint32_t queue)
        : sink_(sink), base_(base), queue_(queue) {}
    worker::SinkTotals totals() const {
        const auto s = sink_.queue_stats(queue_);
        return {s.frames - base_.frames, s.ours - base_.ours,         s.ours_bytes - base_.ours_bytes,
                s.foreign - base_.foreign, s.malformed - base_.malformed, s.stale - base_.stale};
    }
    std::vector<std::pair<uint64_t, uint64_t>> streams() const { return sink_.streams(); }

private:
    const XdpSink& sink_;
    const lr_sink_qstats& base_;
    uint32_t queue_;
};
static_assert(worker::SinkQueueOps<XdpSinkOps>);

}  // namespace

bool run_sink_poller(const XdpSink& sink, const lr_sink_qstats& base, const worker::WorkerConfig& w) {
    return worker::sink_engine(XdpSinkOps(sink, base, w.queue), w);
}

}  // namespace lr::afxdp
