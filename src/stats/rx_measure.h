// Receive-side measurement shared by every backend's RX loop: classify each frame (ours,
// foreign, malformed), track each stream's sequence, and measure latency and jitter.
// One instance per RX worker; single writer. Queue-level totals are published per burst to
// the worker's QueueCounters; per-stream detail is handed over once, after the worker ends.
#pragma once
#include <algorithm>
#include <cstdint>
#include <memory>
#include <vector>

#include "packet/signature.h"
#include "packet/wire.h"
#include "stats/counters.h"
#include "stats/counts_exchange.h"
#include "stats/gaps.h"
#include "stats/capture.h"
#include "stats/latency.h"
#include "stats/seq_tracker.h"

namespace lr::stats {

// A stream's (a flow's) receive state. What every frame of it in order updates (the jitter,
// the latency sum and extremes, the count received, the highest sequence and the window's word
// holding it) is its first cache line; the rest of the tracker follows. `latency` is kept for
// a mix of streams only (RxResult::stream_latency), and goes to its stream's histogram when the
// receiver ends, with a count: every arrival the tracker counted (received, duplicate or late)
// but those that had no latency (`latency_skipped`: rare, so kept behind the window).
struct alignas(64) StreamRx {
    Jitter jitter;
    LatencySpan latency;
    SeqTracker seq;
    uint64_t latency_skipped = 0;  // a mix's: frames of ours without a timestamp, or with one ahead
    // The frames of ours whose latency went to the buckets.
    uint64_t latency_count() const {
        const auto c = seq.counts();
        return c.received + c.duplicates + c.late - latency_skipped;
    }
};
static_assert(sizeof(Jitter) + sizeof(LatencySpan) + SeqTracker::kHotBytes <= 64);

// What an RX worker hands to the control thread when it ends.
struct RxResult {
    std::vector<StreamRx> streams;  // indexed by stream id
    // RX clock minus the TX timestamp. With `live`, the worker writes live->buf and the
    // control thread merges each interval's buffer in here; without it, the worker writes
    // here directly and the control thread reads it after join().
    LatencyHistogram latency;
    std::unique_ptr<LatencyExchange> live;
    // XDP counting sink instead of user-space tracking: per stream {frames, highest seq + 1}.
    std::vector<std::pair<uint64_t, uint64_t>> sink;
    // Gaps between the receive bursts (every frame the queue received).
    GapStats arrivals;
    // --capture: the first frames received (configured before the trial; inactive otherwise).
    FrameCapture capture;
    // A mix of streams: latency per stream (indexed by the stream's place in the mix; each
    // signed stream id maps to its stream through `stream_of`, sized before the trial). While
    // the worker runs it adds to the buckets only, and each flow's sum and extremes to the
    // flow's StreamRx::latency, in the line its frames touch anyway (in the histogram they
    // would be a second line of a 4.9 KB structure for every frame). It adds those, with each
    // flow's count (StreamRx::latency_count), to the histograms when it ends (RxMeasure::finish).
    std::vector<StreamLatency> stream_latency;
    std::vector<uint16_t> stream_of;
    // Sizes that vary: frames received per size on the wire (FCS included; the last entry
    // holds every larger frame). Empty otherwise.
    std::vector<uint64_t> sizes;
    // Streams: each flow's counts, copied out on the control thread's request (live views).
    std::unique_ptr<CountsExchange<FlowLive>> flows_live;
    // Per flow (indexed as `streams`), when the receiver keeps them (RxMeasure's flow_totals).
    std::vector<FlowRxTotals> flow_totals;
    // Streams sent by another host (an engine of several): per stream id, what turns its TX
    // timestamps into this host's CLOCK_MONOTONIC, modulo 2^48 (0 for a stream stamped here).
    // Read only with flow_totals (a controlled trial) and one entry per stream; empty: every
    // stamp is this host's.
    std::vector<uint64_t> tx_clock_shift;
};

// Frames received per size (RxResult::sizes): one entry per byte up to this.
inline constexpr uint32_t kSizeSlots = 9024;

class RxMeasure {
public:
    // signature=false: every frame counts as ours (plain frames, no sequence tracking).
    // flow_totals: also each flow's bytes, latency extremes and sum, and first and last
    // arrival (FlowRxTotals), which the OTG server reports; off, they cost nothing.
    // nonce_mode: LR_NONCE_EXACT, or LR_NONCE_SIG for frames that come back through a host's own
    // stack (bpf/lr_wire.h).
    RxMeasure(bool signature, uint32_t nonce, uint32_t streams, RxResult* out, bool flow_totals = false,
              int nonce_mode = LR_NONCE_EXACT)
        : sig_(signature), totals_(flow_totals), nonce_(nonce), nonce_mode_(nonce_mode), nstreams_(streams), out_(out),
          live_(out->live.get()),
          lat_(live_ ? &live_->buf[0] : &out->latency),
          stream_of_(out->stream_of.empty() ? nullptr : out->stream_of.data()),
          stream_lat_(out->stream_latency.empty() ? nullptr : out->stream_latency.data()),
          flows_live_(out->flows_live.get()),
          tx_shift_(flow_totals && out->tx_clock_shift.size() >= streams ? out->tx_clock_shift.data() : nullptr) {
        out_->streams.resize(streams);
        streams_ = out_->streams.data();
        if (totals_) out_->flow_totals.resize(streams);
        if (flows_live_) flows_live_->buf.resize(streams);
    }
    // After the last frame: each stream's latency totals (its flows' sums, extremes and
    // counts) into its histogram. Once; a second call does nothing.
    void finish();
    void burst_time(uint64_t rx_ns) {
        now_ = rx_ns;
        now48_ = rx_ns & LR_SIG48_MASK;
    }
    // Once per loop iteration (with or without frames): answers the control thread's request
    // for the interval's latency histogram (see LatencyExchange).
    void poll() {
        if (flows_live_ && flows_live_->asked(flows_seen_)) [[unlikely]]
            copy_flows();
        if (!live_) return;
        const uint32_t r = live_->request.load(std::memory_order_acquire);
        if (r == seen_) return;
        seen_ = r;
        lat_ = &live_->buf[r & 1];
        live_->done.store(r, std::memory_order_release);
    }
    // `n` plain frames (a run without signatures): each counts as a distinct test frame.
    void plain(uint32_t n) { t_.ours += n; }
    // One received frame (without FCS). `csum_verified`: the device already checked its L4
    // checksum, which is then not summed again. The rules are bpf/lr_wire.h's, inlined here.
    void frame(const uint8_t* p, uint32_t len, bool csum_verified = false) {
        if (!sig_) {  // plain frames: each one counts as a distinct test frame
            ++t_.ours;
            return;
        }
        lr_wire_sig s{};
        const int8_t cls = static_cast<int8_t>(classify(p, len, csum_verified, s));
        const uint16_t wire = static_cast<uint16_t>(len + packet::kFcsLen);
        account(&cls, &s, &wire, nullptr, 1);
    }
    // The same for a burst (worker/rx_step.h), in one of two ways. With a few streams, their
    // state stays in cache: each frame is classified and accounted in turn (account_frames).
    // With many, it does not: every frame of the burst is classified first and the state its
    // stream will touch fetched (classify_burst: its flow's first line, StreamRx, and its
    // stream's latency bucket), then all are accounted (account), so that the misses
    // overlap instead of stalling each frame in turn. Signed runs only.
    // At most this many streams (and no flows' totals) take the single pass.
    static constexpr uint32_t kOnePassStreams = 16;
    bool one_pass() const { return !totals_ && nstreams_ <= kOnePassStreams; }
    // The fast lane inline, the general rules (every other frame) out of line. Only the latter
    // sees `s`'s address, so that a caller's `s` may stay in registers.
    [[gnu::always_inline]] int classify(const uint8_t* p, uint32_t len, bool csum_verified, lr_wire_sig& s) const {
        return classify_as(nonce_, nstreams_, p, len, csum_verified, s);
    }
    // The single pass's classification: LR_OURS for a frame the fast lane takes (its layout's
    // constants then known where it is accounted), kAccounted for any other, which is
    // classified by the general rules and accounted for here, out of line.
    static constexpr int kAccounted = -1;
    [[gnu::always_inline]] int classify_or_account(const uint8_t* p, uint32_t len, bool csum_verified,
                                                   lr_wire_sig& s) {
        if (packet::classify_fast(p, len, nonce_, nstreams_, csum_verified, s) >= 0) [[likely]]
            return LR_OURS;
        account_general(p, len, csum_verified);
        return kAccounted;
    }
    // The first of the two passes: classifies `n` frames (`frame(i)` gives frame i as a
    // FrameRef) into their classes and signatures, and for each of ours asks for the state
    // accounting for it will touch: its flow's first line (StreamRx) and, in a mix, its stream's
    // latency bucket, which goes to bucket[i] (null: none) for account() to increment without
    // finding it again. The members it reads are copied to locals first: the stores to the
    // arrays would otherwise oblige the compiler to load them again for every frame.
    struct FrameRef {
        const uint8_t* p;
        uint32_t len;
        bool csum_verified;
    };
    template <class Frame>
    [[gnu::always_inline]] void classify_burst(uint32_t n, int8_t* cls, lr_wire_sig* sig, uint64_t** bucket,
                                               Frame&& frame) const {
        const StreamRx* const streams = streams_;
        StreamLatency* const stream_lat = stream_lat_;
        const uint16_t* const stream_of = stream_of_;
        const uint64_t* const tx_shift = tx_shift_;
        const uint64_t now48 = now48_;
        const uint32_t nonce = nonce_, nstreams = nstreams_;
        for (uint32_t i = 0; i < n; ++i) {
            const FrameRef f = frame(i);
            lr_wire_sig s;
            const int c = classify_as(nonce, nstreams, f.p, f.len, f.csum_verified, s);
            cls[i] = static_cast<int8_t>(c);
            sig[i] = s;
            uint64_t* b = nullptr;
            if (c == LR_OURS) {
                __builtin_prefetch(&streams[s.stream], 1);  // classify checked s.stream < nstreams_
                if (stream_lat && s.has_ts) {
                    const uint64_t ts = tx_shift ? (s.ts + tx_shift[s.stream]) & LR_SIG48_MASK : s.ts;
                    b = stream_lat[stream_of[s.stream]].bucket_for((now48 - ts) & LR_SIG48_MASK);
                    __builtin_prefetch(b, 1);
                }
            }
            bucket[i] = b;
        }
    }
    // The second pass: accounts for `n` classified frames, their classes, signatures, sizes on
    // the wire (FCS included) and buckets as classify_burst() left them (null: each bucket is
    // found as its frame is accounted, as for a single frame).
    [[gnu::always_inline]] void account(const int8_t* cls, const lr_wire_sig* sig, const uint16_t* wire,
                                        uint64_t* const* bucket, uint32_t n) {
        auto next = [&](uint32_t i, lr_wire_sig& s) {
            s = sig[i];
            return cls[i];
        };
        if (totals_) [[unlikely]]
            account_with_totals(cls, sig, wire, bucket, n);
        else
            account_frames<false>(n, nullptr, next, bucket);
    }
    // Accounts for a burst of `n` frames, where `next(i, s)` classifies frame i: returns its
    // class and, for one of ours, fills its signature `s` (kAccounted: nothing left to do).
    // `wire`: their sizes on the wire, read for the flows' totals only. `bucket`: each frame's
    // stream latency bucket as classify_burst() found it (null: found here). What nearly every
    // frame needs (one of ours, in order, with a timestamp) is kept in locals through the burst,
    // which the compiler holds in registers (stores to the streams' state could alias members,
    // not locals), and added once at the end; rarer outcomes (another class, a sequence out of
    // order, no latency) go to the tallies out of line.
    template <bool kTotals, class Next>
    [[gnu::always_inline]] void account_frames(uint32_t n, const uint16_t* wire, Next&& next,
                                               uint64_t* const* bucket = nullptr) {
        StreamRx* const streams = streams_;
        LatencyHistogram* const hist = lat_;
        StreamLatency* const stream_lat = stream_lat_;
        const uint16_t* const stream_of = stream_of_;
        const uint64_t now48 = now48_;
        uint64_t ours = 0;
        LatencyHistogram::Totals lat;
        for (uint32_t i = 0; i < n; ++i) {
            lr_wire_sig s;
            const int cls = next(i, s);
            if (cls != LR_OURS) [[unlikely]] {
                if (cls != kAccounted) count_other(cls);
                continue;
            }
            ++ours;
            auto& st = streams[s.stream];
            [[maybe_unused]] FlowRxTotals* ft = nullptr;
            if constexpr (kTotals) {
                ft = &out_->flow_totals[s.stream];
                ft->bytes += wire[i];
                if (!ft->first_ns) ft->first_ns = now_;
                ft->last_ns = now_;
            }
            const auto a = st.seq.arrive(s.seq, s.seq_bits);
            if (a.kind != SeqTracker::Arrival::in_order || a.skipped) [[unlikely]]
                count_out_of_order(a);
            if (!s.has_ts) [[unlikely]] {
                no_latency(st);
                continue;
            }
            uint64_t ts = s.ts;
            if constexpr (kTotals)
                if (tx_shift_) ts = (ts + tx_shift_[s.stream]) & LR_SIG48_MASK;
            const uint64_t l = (now48 - ts) & LR_SIG48_MASK;
            if (l >= (uint64_t(1) << 47)) [[unlikely]] {  // a timestamp from the future would wrap: ignore it
                no_latency(st);
                continue;
            }
            hist->add_bucket(l);
            lat.add(l);
            st.jitter.add_transit(static_cast<int64_t>(l));
            if constexpr (kTotals) {
                ++ft->lat_n;
                ft->lat_sum += l;
                ft->lat_min = std::min(ft->lat_min, l);
                ft->lat_max = std::max(ft->lat_max, l);
            }
            if (stream_lat) {
                st.latency.add(l);
                if (bucket)
                    ++*bucket[i];
                else
                    stream_lat[stream_of[s.stream]].add_bucket(l);
            }
        }
        t_.ours += ours;
        hist->add(lat);
    }
    // Distinct test frames received so far.
    uint64_t unique() const { return t_.unique(); }
    // Queue totals, one relaxed store each (call once per burst).
    void publish(QueueCounters& c) const;

private:
    // classify() with the run's nonce and stream count given (a caller's locals).
    [[gnu::always_inline]] int classify_as(uint32_t nonce, uint32_t nstreams, const uint8_t* p, uint32_t len,
                                           bool csum_verified, lr_wire_sig& s) const {
        const int fast = packet::classify_fast(p, len, nonce, nstreams, csum_verified, s);
        if (fast >= 0) [[likely]]
            return fast;
        lr_wire_sig general;
        const int cls = classify_general(p, len, csum_verified, general);
        s = general;
        return cls;
    }
    // Out of line, so the loop without the flows' totals stays as tight as it was.
    [[gnu::noinline]] void account_with_totals(const int8_t* cls, const lr_wire_sig* sig, const uint16_t* wire,
                                               uint64_t* const* bucket, uint32_t n) {
        account_frames<true>(
            n, wire,
            [&](uint32_t i, lr_wire_sig& s) {
                s = sig[i];
                return cls[i];
            },
            bucket);
    }
    // A frame the fast lane passed on, by the general rules.
    [[gnu::noinline]] void account_general(const uint8_t* p, uint32_t len, bool csum_verified) {
        lr_wire_sig g;
        const int cls = classify_general(p, len, csum_verified, g);
        account_frames<false>(1, nullptr, [&](uint32_t, lr_wire_sig& s) {
            s = g;
            return cls;
        });
    }
    // A frame of ours without a latency (no timestamp, or one from the future).
    [[gnu::noinline]] void no_latency(StreamRx& st) const {
        if (stream_lat_) ++st.latency_skipped;
    }
    // A frame not of ours.
    [[gnu::noinline]] void count_other(int cls) {
        switch (cls) {
            case LR_MALFORMED: ++t_.malformed; break;
            case LR_STALE:
                ++t_.foreign;
                ++t_.stale;
                break;
            default: ++t_.foreign; break;
        }
    }
    // One of ours that did not come next in its stream.
    [[gnu::noinline]] void count_out_of_order(SeqTracker::Arrived a) {
        switch (a.kind) {
            case SeqTracker::Arrival::in_order: t_.gaps += a.skipped; break;  // sequences skipped
            case SeqTracker::Arrival::reordered:
                ++t_.reordered;
                if (t_.gaps) --t_.gaps;  // it fills a gap counted earlier
                break;
            case SeqTracker::Arrival::duplicate: ++t_.dup; break;
            case SeqTracker::Arrival::late: ++t_.late; break;
        }
    }
    void copy_flows();
    [[gnu::noinline]] int classify_general(const uint8_t* p, uint32_t len, bool csum_verified, lr_wire_sig& s) const;
    // The queue's tallies of what it received. `unique` is not kept: every frame of ours
    // arrived in order, reordered (both unique), again (a duplicate) or too late.
    struct Tally {
        uint64_t ours = 0, foreign = 0, malformed = 0, stale = 0;
        uint64_t dup = 0, reordered = 0, late = 0, gaps = 0;
        uint64_t unique() const { return ours - dup - late; }
    };

    bool sig_;
    bool totals_;
    uint32_t nonce_;
    int nonce_mode_;  // the fast lane checks all 32 bits; a frame it passes on is checked as this says
    uint32_t nstreams_;
    RxResult* out_;
    StreamRx* streams_;  // out_->streams, sized once
    LatencyExchange* live_;
    LatencyHistogram* lat_;
    const uint16_t* stream_of_;
    StreamLatency* stream_lat_;
    CountsExchange<FlowLive>* flows_live_;
    const uint64_t* tx_shift_;  // RxResult::tx_clock_shift, or null
    uint32_t seen_ = 0, flows_seen_ = 0;
    bool finished_ = false;
    uint64_t now_ = 0, now48_ = 0;
    Tally t_;
};

}  // namespace lr::stats
