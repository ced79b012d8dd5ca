// One receive queue's burst, the unit every role that receives is built from (the RX engine,
// request/response): receive, one clock read (the RX timestamp of every frame in it), classify
// and track each frame (stats::RxMeasure), count the bytes and sizes on the wire, keep what the
// capture asks for, release the buffers, record the burst's arrival, publish the counters.
#pragma once
#include <algorithm>
#include <array>
#include <concepts>

#include "packet/signature.h"
#include "stats/rx_measure.h"
#include "stats/tsc_clock.h"
#include "worker/engine_common.h"
#include "worker/queue_ops.h"

namespace lr::worker {

// How many frames ahead the receive loop prefetches.
inline constexpr uint32_t kPrefetch = 8;
// The same where many flows' frames are classified eight at a time (RxQueue::classify_in_runs):
// a frame is then read with seven others, sooner after its prefetch than one at a time.
inline constexpr uint32_t kClassifyPrefetch = 16;
// How many frames ahead it asks for the state of a frame's flow (RxMeasure::prefetch_flow), when
// there are too many flows for their state to stay in cache: the frame that far ahead has had
// its data fetched kPrefetch - kFlowAhead frames before.
inline constexpr uint32_t kFlowAhead = 4;
// Queue operations whose frames are found through a buffer header (an mbuf), which the loop
// fetches twice as far ahead.
template <class Ops>
concept HasBufferHeaders = requires(Ops o) { o.prefetch_meta(0u); };
// Queue operations that give each burst's receive time themselves (a test's clock); the others'
// bursts are timed by the worker's clock.
template <class Ops>
concept HasBurstTime = requires(Ops o) { { o.burst_time_ns() } -> std::convertible_to<uint64_t>; };

class RxQueue {
public:
    explicit RxQueue(const WorkerConfig& w)
        : r_(w.rx), c_(*w.rx_counters), meas_(r_.sign, r_.nonce, r_.streams, r_.result, r_.flow_totals,
                                                  r_.stack_responder ? LR_NONCE_SIG : LR_NONCE_EXACT),
          cap_(r_.result->capture.active() ? &r_.result->capture : nullptr),
          sizes_(r_.result->sizes.empty() ? nullptr : r_.result->sizes.data()), fetch_flows_(meas_.fetch_flows()) {}

    // One burst; returns the frames measured (0: the queue was empty, and ops.idle() ran).
    // kLookahead (where the operations can, HasLookahead): signed frames are measured one burst
    // behind the queue, the next burst taken before this one is measured (each burst keeps the
    // time it was received at). A burst held is measured first, with or without kLookahead
    // (finish_held: the last one).
    template <bool kLookahead = false, RxQueueOps Ops>
    [[gnu::always_inline]] uint32_t step(Ops& ops) {
        using stats::publish;
        meas_.poll();
        // Many flows classified eight at a time ask twice as far ahead (classify_in_runs).
        const uint32_t ahead = classify_lane_ ? kClassifyPrefetch : kPrefetch;
        uint32_t n = 0;
        bool fetched = false;  // its first frames were asked for while the burst before was measured
        if constexpr (HasLookahead<Ops>) {
            if (held_) {
                n = held_;
                last_ = held_ns_;
                fetched = true;
            }
        }
        if (!n) {
            n = ops.receive(r_.burst);
            if (n == 0) {
                ops.idle();
                return 0;
            }
            last_ = burst_time(ops);
        }
        end_ = n;
        if constexpr (kLookahead && HasLookahead<Ops>) {
            held_ = r_.sign ? ops.receive_ahead(r_.burst) : 0;
            if (held_) {
                held_ns_ = burst_time(ops);
                end_ = n + held_;
                if constexpr (HasBufferHeaders<Ops>)
                    for (uint32_t i = n; i < end_ && i < n + 2 * ahead; ++i) ops.prefetch_meta(i);
            }
        }
        if (!first_) first_ = last_;
        meas_.burst_time(last_);
        // The frames were written by a device or another core: their first cache line is a
        // miss. Ask for the next ones while the current ones are classified. Where finding a
        // frame's data means reading a buffer header (an mbuf), that header is fetched twice as
        // far ahead. (Plain frames are counted, not read.) Frames are asked for up to end_,
        // into the burst taken ahead.
        if (r_.sign && !fetched) {
            if constexpr (HasBufferHeaders<Ops>)
                for (uint32_t i = 0; i < n && i < 2 * ahead; ++i) ops.prefetch_meta(i);
            for (uint32_t i = 0; i < n && i < ahead; ++i) fetch_data(ops, i);
        }
        uint64_t b = 0;
        if (r_.sign && run_lane_) {
            // A few flows, eight frames at a time where the eight-frame lane takes them.
            b = account_in_runs(ops, n);
        } else if (r_.sign && !fetch_flows_) {
            // A few flows: their state stays in cache (stats::RxMeasure::account_frames).
            b = account<false, false>(ops, n);
        } else if (r_.sign && classify_lane_) {
            // Many flows, classified eight frames at a time where the lane takes them.
            b = classify_in_runs(ops, n);
        } else if (r_.sign && !r_.flow_totals) {
            // Many: each frame's flow state is fetched a few frames ahead, so that the misses overlap.
            b = account<false, true>(ops, n);
        } else if (r_.sign) {
            b = account_with_totals(ops, n);
        } else {
            for (uint32_t i = 0; i < n; ++i) b += size_of(ops, i);
            meas_.plain(n);
        }
        // --capture: a pass of its own over the burst, so the counting loop above stays as
        // tight as without it; once the capture is full it is never looked at again.
        if (cap_) [[unlikely]] {
            capture(ops, n);
            if (!cap_->active()) cap_ = nullptr;
        }
        ops.release();
        r_.result->arrivals.burst(last_, n);
        packets_ += n;
        bytes_ += b;
        publish(c_.packets, packets_);
        publish(c_.bytes, bytes_);
        meas_.publish(c_);
        return n;
    }
    // After the last step with kLookahead: the burst it holds, measured (0: none held).
    template <RxQueueOps Ops>
    uint32_t finish_held(Ops& ops) {
        return held_ ? step<false>(ops) : 0;
    }
    // Distinct test frames received so far.
    uint64_t unique() const { return meas_.unique(); }
    // Frames the eight-frame lane took (RxMeasure::run_frames), and of those, the frames
    // accounted eight flows at a time (RxMeasure::flows_frames).
    uint64_t run_frames() const { return meas_.run_frames(); }
    uint64_t flows_frames() const { return meas_.flows_frames(); }
    // The clock of the last burst that brought frames (0: none yet).
    uint64_t last_ns() const { return last_; }
    // After the last step: when the first and last frames came.
    void finish() {
        meas_.finish();
        if (!first_) return;
        stats::publish(c_.first_pkt_ns, first_);
        stats::publish(c_.last_pkt_ns, last_);
    }

private:
    // Frame i's data asked for: where the operations can say where it usually lies without
    // reading its buffer header, there (the header may not have come yet); else where the
    // header says.
    template <RxQueueOps Ops>
    [[gnu::always_inline]] static void fetch_data(Ops& ops, uint32_t i) {
        if constexpr (HasDataHint<Ops>)
            ops.prefetch_data(i);
        else
            __builtin_prefetch(ops.data(i));
    }
    // The time of the burst the queue has just given.
    template <RxQueueOps Ops>
    [[gnu::always_inline]] uint64_t burst_time(Ops& ops) {
        if constexpr (HasBurstTime<Ops>)
            return ops.burst_time_ns();
        else
            return clk_.now();
    }
    // A signed burst, each frame classified and accounted in turn; returns its bytes on the
    // wire. kFetchFlows: each frame's flow state is asked for kFlowAhead frames before.
    // kSized: each frame's successors fetched and its size counted here (false: the caller did).
    // Frames [from, to) of the burst's n.
    template <bool kTotals, bool kFetchFlows, bool kSized = true, RxQueueOps Ops>
    [[gnu::always_inline]] uint64_t account(Ops& ops, uint32_t n, uint32_t from = 0, uint32_t to = UINT32_MAX) {
        to = std::min(to, n);
        if constexpr (kFetchFlows)
            for (uint32_t k = from; k < to && k < from + kFlowAhead; ++k)
                meas_.template prefetch_flow<kTotals>(ops.data(k), ops.len(k));
        uint64_t b = 0;
        // Forced inline: GCC had stopped inlining it, a call per frame. (On a lambda the
        // attribute takes GCC's own spelling, after the parameters.)
        auto next = [&](uint32_t i, lr_wire_sig& s, uint32_t& wire) __attribute__((always_inline)) {
            if constexpr (kSized) {
                const uint64_t wb = fetch_ahead_and_size(ops, i);
                b += wb;
                wire = static_cast<uint32_t>(wb);
            } else {
                wire = 0;  // read for the flows' totals only, which the caller's frames have not
            }
            if constexpr (kFetchFlows)
                if (i + kFlowAhead < n) meas_.template prefetch_flow<kTotals>(ops.data(i + kFlowAhead), ops.len(i + kFlowAhead));
            // The size is read for the flows' totals only: without them, a constant.
            return meas_.template classify_or_account<!kFetchFlows>(ops.data(i), ops.len(i), ops.csum_verified(i), s,
                                                                    kTotals ? wire : 0);
        };
        meas_.account_frames<kTotals>(from, to, next);
        return b;
    }
    // A burst of a few flows, eight frames at a time: each eight that are all 60 bytes long go to
    // the eight-frame lane (stats::RxMeasure::account_run), and frame by frame if it declines
    // them; the rest of the burst frame by frame. Returns its bytes on the wire.
    template <RxQueueOps Ops>
    [[gnu::always_inline]] uint64_t account_in_runs(Ops& ops, uint32_t n) {
        uint64_t b = 0;
        uint32_t i = 0;
        for (; i + stats::kRunFrames <= n; i += stats::kRunFrames) {
            const uint8_t* p[stats::kRunFrames];
            uint32_t other_len = 0;
            unsigned verified = 0;
            take_eight<kPrefetch>(ops, i, p, verified, other_len, b);
            if (other_len) [[unlikely]] {
                account<false, false, false>(ops, n, i, i + stats::kRunFrames);
            } else if (!meas_.account_run(p, verified)) [[unlikely]] {
                // Not eight of one flow in order (flows interleaved, say): classified together
                // where they can be, then accounted together if they are of eight flows, else
                // one by one.
                if (meas_.template classify_run<true>(p, verified, sigs_[0]))
                    account_eight(sigs_[0], i);
                else
                    account<false, false, false>(ops, n, i, i + stats::kRunFrames);
            }
        }
        return b + account<false, false>(ops, n, i, n);
    }
    // A burst of many flows, eight frames at a time: each eight that are all 60 bytes long are
    // classified together (stats::RxMeasure::classify_run), their flows' state asked for at
    // once, and accounted frame by frame after the next eight are classified, by when that state
    // has come; eight it declines, and the rest of the burst, frame by frame, each frame's flow
    // state fetched a few frames ahead. Returns its bytes on the wire.
    template <RxQueueOps Ops>
    [[gnu::always_inline]] uint64_t classify_in_runs(Ops& ops, uint32_t n) {
        uint64_t b = 0;
        uint32_t i = 0;
        // Whether the eight before frame i were classified and are not accounted yet (their
        // signatures in sigs_[last]).
        bool pending = false;
        unsigned last = 0;
        for (; i + stats::kRunFrames <= n; i += stats::kRunFrames) {
            const uint8_t* p[stats::kRunFrames];
            uint32_t other_len = 0;
            unsigned verified = 0;
            take_eight<kClassifyPrefetch>(ops, i, p, verified, other_len, b);
            const unsigned slot = last ^ 1;
            const bool took = !other_len && meas_.classify_run(p, verified, sigs_[slot]);
            if (took) meas_.prefetch_flows(sigs_[slot]);
            if (pending) account_eight(sigs_[last], i - stats::kRunFrames);
            pending = took;
            if (took) [[likely]]
                last = slot;
            else
                account<false, true, false>(ops, n, i, i + stats::kRunFrames);
        }
        if (pending) account_eight(sigs_[last], i - stats::kRunFrames);
        return b + account<false, true>(ops, n, i, n);
    }
    // Frames [i, i + 8) for a lane: where they are (p), which the device checked the L4
    // checksum of (bit j of `verified`: frame i + j), whether any is not 60 bytes long
    // (`other_len` not 0), each frame's successors fetched kAhead frames ahead; their bytes on
    // the wire added to `b`. The eight fetches come first (checked against end_, the burst taken
    // ahead included, once where all of them lie within it), then the eight headers are read.
    template <uint32_t kAhead, RxQueueOps Ops>
    [[gnu::always_inline]] void take_eight(Ops& ops, uint32_t i, const uint8_t** p, unsigned& verified,
                                           uint32_t& other_len, uint64_t& b) {
        constexpr uint32_t kMetaAhead = HasBufferHeaders<Ops> ? 2 * kAhead : kAhead;
        const uint32_t n = end_;
        if (i + kMetaAhead + stats::kRunFrames <= n) [[likely]] {
            for (uint32_t j = 0; j < stats::kRunFrames; ++j) {
                if constexpr (HasBufferHeaders<Ops>) ops.prefetch_meta(i + kMetaAhead + j);
                fetch_data(ops, i + kAhead + j);
            }
        } else {
            for (uint32_t j = 0; j < stats::kRunFrames; ++j) {
                if constexpr (HasBufferHeaders<Ops>)
                    if (i + kMetaAhead + j < n) ops.prefetch_meta(i + kMetaAhead + j);
                if (i + kAhead + j < n) fetch_data(ops, i + kAhead + j);
            }
        }
        for (uint32_t j = 0; j < stats::kRunFrames; ++j) {
            b += size_of(ops, i + j);
            p[j] = ops.data(i + j);
            other_len |= ops.len(i + j) ^ packet::KnownHeaders::kMinLen;
            verified |= unsigned{ops.csum_verified(i + j)} << j;
        }
    }
    // Frames [i, i + 8), which classify_run took: together where they are of eight flows that
    // account_flows takes, else frame by frame.
    [[gnu::always_inline]] void account_eight(const stats::RunSigs& sigs, uint32_t i) {
        if (!meas_.account_flows(sigs)) account_classified(sigs, i);
    }
    // Frames [i, i + 8), which classify_run took (their signatures in `sigs`), accounted frame
    // by frame.
    [[gnu::always_inline]] void account_classified(const stats::RunSigs& sigs, uint32_t i) {
        auto next = [&](uint32_t k, lr_wire_sig& s, uint32_t& wire) __attribute__((always_inline)) {
            s.nonce = r_.nonce;
            s.stream = static_cast<uint16_t>(sigs.stream[k - i]);
            s.seq = sigs.seq[k - i];
            s.ts = sigs.ts[k - i];
            s.seq_bits = 48;
            s.has_ts = 1;
            wire = 0;  // read for the flows' totals only, which these paths have not
            return int{LR_OURS};
        };
        meas_.account_frames<false>(i, i + stats::kRunFrames, next);
    }
    // With each flow's totals (the OTG server's): out of line, so the loop without them stays
    // as tight as it was.
    template <RxQueueOps Ops>
    [[gnu::noinline]] uint64_t account_with_totals(Ops& ops, uint32_t n) {
        return account<true, true>(ops, n);
    }
    // Frame i's size on the wire (FCS included), counted per size when sizes vary.
    template <RxQueueOps Ops>
    [[gnu::always_inline]] uint64_t size_of(Ops& ops, uint32_t i) {
        const uint64_t wb = ops.wire_bytes(i);
        if (sizes_) ++sizes_[std::min<uint64_t>(wb, stats::kSizeSlots - 1)];
        return wb;
    }
    // The same for a signed frame, whose successors are fetched first: the frame kPrefetch
    // ahead, and its buffer header (where there is one) twice as far (up to end_).
    template <uint32_t kAhead = kPrefetch, RxQueueOps Ops>
    [[gnu::always_inline]] uint64_t fetch_ahead_and_size(Ops& ops, uint32_t i) {
        const uint32_t n = end_;
        if constexpr (HasBufferHeaders<Ops>)
            if (i + 2 * kAhead < n) ops.prefetch_meta(i + 2 * kAhead);
        if (i + kAhead < n) fetch_data(ops, i + kAhead);
        return size_of(ops, i);
    }
    // The burst's frames into the capture, classified again (by the same rules) only when the
    // capture keeps some classes and not others.
    template <RxQueueOps Ops>
    void capture(Ops& ops, uint32_t n) {
        for (uint32_t i = 0; i < n && cap_->active(); ++i) {
            int cls = 1;
            if (cap_->filters() && r_.sign) {
                const auto c = packet::sig_classify(ops.data(i), ops.len(i), r_.nonce, r_.streams);
                cls = c.cls == packet::FrameClass::ours ? 1 : c.cls == packet::FrameClass::malformed ? 2 : 0;
            }
            cap_->take(ops.data(i), ops.len(i), last_, cls);
        }
    }

    const RxSetup& r_;
    stats::QueueCounters& c_;
    stats::RxMeasure meas_;
    stats::BurstClock clk_;
    stats::FrameCapture* cap_;
    uint64_t* sizes_;  // sizes that vary: frames per size
    bool fetch_flows_;  // fetch each frame's flow state ahead (RxMeasure::fetch_flows)
    bool run_lane_ = meas_.run_lane();  // eight frames at a time where it can (RxMeasure::run_lane)
    bool classify_lane_ = meas_.classify_lane();  // many flows: classified eight at a time (RxMeasure::classify_lane)
    stats::RunSigs sigs_[2];  // the signatures of the last two eights classify_run took
    uint64_t packets_ = 0, bytes_ = 0, first_ = 0, last_ = 0;
    // The frames asked for ahead go up to end_ (the current burst's, then the burst taken ahead).
    uint32_t end_ = 0;
    // kLookahead: the burst taken ahead (its frames, its time).
    uint32_t held_ = 0;
    uint64_t held_ns_ = 0;
};

}  // namespace lr::worker
