// One sending queue's burst, the unit every role that sends its own frames is built from (the
// TX engine, request/response): collect confirmations, decide how many new frames may go
// (the caller's room, then pacing), take ready-made frames, stamp them with the burst's clock
// read, offer what is held to the device, publish. Counts only what the device confirmed;
// frames it never took are `unsent`, never sent. (Queues that carry streams compose their
// frames instead: worker/tx_streams_engine.h.)
#pragma once
#include <algorithm>
#include <sys/prctl.h>

#include "stats/tsc_clock.h"
#include "worker/engine_common.h"
#include "worker/pacer.h"
#include "worker/queue_ops.h"
#include "worker/tx_signer.h"

namespace lr::worker {

struct TxStepResult {
    uint32_t got = 0;    // new frames taken and stamped
    uint32_t taken = 0;  // frames the device took
};

template <TxQueueOps Ops>
class TxQueue {
public:
    // The queue's own copy of `ops`, a local of the engine: its scalars stay in registers
    // across the driver calls.
    TxQueue(Ops ops, const WorkerConfig& w)
        : ops_(ops), t_(w.tx), c_(*w.tx_counters), pacer_(t_.pacing),
          signer_(t_.sign, t_.layout, t_.streams, t_.templates), capturing_(t_.capture != nullptr),
          // The clock is read once per burst when something needs it: pacing, the stamp, or the
          // departure record of a paced or signed run (an unpaced plain run reads no clock).
          timed_(signer_.on() || pacer_.limited()) {
        if (pacer_.limited()) prctl(PR_SET_TIMERSLACK, 1UL);  // its sleeps end when asked
        if (timed_) pacer_.start(clk_.now());
    }
    Ops& ops() { return ops_; }
    bool timed() const { return timed_; }
    bool paced() const { return pacer_.limited(); }
    uint64_t now() { return timed_ ? clk_.now() : 0; }
    // When the next frame is due (paced).
    uint64_t next_due() const { return pacer_.next_due(); }

    // One burst at `now` (now()), taking at most `room` new frames. Inlined into its loop, so
    // the queue's state stays in registers as it did when the loop was one function.
    [[gnu::always_inline]] TxStepResult step(uint64_t now, uint32_t room) {
        using stats::publish;
        TxStepResult r;
        if (room && pacer_.limited()) room = pacer_.due(now, room);
        if (room) {
            if (signer_.on()) signer_.begin_burst(now);  // the burst's timestamp
            const Acquired a = ops_.acquire(room);
            r.got = a.got;
            no_buffer_ += a.no_buffer;
            backpressure_ += a.ring_full;
            if (r.got && signer_.on()) {
                const FrameSpan f = ops_.fresh();
                signer_.stamp_burst(f.base, f.offset, f.from, f.to);
            }
            if (capturing_ && r.got) [[unlikely]]
                capture(ops_.fresh(), now);
        }
        const Transmitted x = ops_.transmit();
        r.taken = x.taken;
        backpressure_ += x.partial;
        if (timed_ && x.taken && t_.departures) t_.departures->burst(now, x.taken);
        const uint64_t sent = ops_.confirmed();
        publish(c_.packets, sent);
        publish(c_.bytes, sent * t_.wire_bytes);
        publish(c_.backpressure, backpressure_);
        publish(c_.no_buffer, no_buffer_);
        publish(c_.tx_errors, ops_.errors());
        publish_pacing_(c_, pacer_);
        return r;
    }

    // After the last step: let the device confirm what it holds (bounded), hand over what each
    // stream sent, and count what it never took as unsent.
    void finish() {
        using stats::publish;
        ops_.finish();
        const uint64_t sent = ops_.confirmed(), unconfirmed = ops_.issued() - sent;
        signer_.prepare_unsent();
        if (signer_.on() && unconfirmed)
            ops_.for_each_unconfirmed([&](const uint8_t* f, uint16_t, uint32_t) { signer_.unsent(f); });
        if (t_.sent_per_stream) *t_.sent_per_stream = signer_.sent();
        ops_.drop_held();
        publish(c_.packets, sent);
        publish(c_.bytes, sent * t_.wire_bytes);
        publish(c_.tx_errors, ops_.errors());
        publish(c_.unsent, unconfirmed);
    }

private:
    // --capture-filter sent: the burst's frames as stamped, until the capture is full (one
    // branch per burst after that). Counted as captured when taken for sending: a frame the
    // device then refuses is re-offered, never stamped again.
    void capture(const FrameSpan& f, uint64_t now) {
        if (!t_.capture->active()) return;
        if (!now) now = stats::now_ns();  // an unpaced plain run reads no clock otherwise
        for (uint32_t i = f.from; i < f.to && t_.capture->active(); ++i)
            t_.capture->take(static_cast<const uint8_t*>(f.base[i]) + f.offset, t_.frame_len, now, 1);
    }

    Ops ops_;
    const TxSetup& t_;
    stats::QueueCounters& c_;
    Pacer pacer_;
    TxSigner signer_;
    stats::BurstClock clk_;
    PacingPublisher publish_pacing_;
    const bool capturing_;  // a register, not a load per burst
    const bool timed_;
    uint64_t backpressure_ = 0, no_buffer_ = 0;
};

}  // namespace lr::worker
