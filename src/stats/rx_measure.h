// Receive-side measurement shared by every backend's RX loop: classify each frame (ours,
// foreign, malformed), track each stream's sequence, and measure latency and jitter.
// One instance per RX worker; single writer. Queue-level totals are published per burst to
// the worker's QueueCounters; per-stream detail is handed over once, after the worker ends.
#pragma once
#include <algorithm>
#include <cstring>
#include <cstdint>
#include <memory>
#include <type_traits>
#include <vector>

#include "packet/known_header.h"
#include "packet/signature.h"
#include "packet/wire.h"
#include "stats/counters.h"
#include "stats/counts_exchange.h"
#include "stats/gaps.h"
#include "stats/capture.h"
#include "stats/latency.h"
#include "stats/run_lane.h"
#include "stats/seq_tracker.h"

namespace lr::stats {

// A stream's (a flow's) receive state. What every frame of it in order updates (the jitter,
// the latency sum, extremes and run, the count received, the highest sequence and the window's
// word holding it) is its first cache line; the rest of the tracker follows. `latency` is kept
// for a mix of streams only (RxResult::stream_latency): its runs go to its stream's buckets
// as they end (BucketsByStream, added to the histogram when the receiver ends), and its sum
// and extremes when the receiver ends, with a count: every arrival the
// tracker counted (received, duplicate or late) but those that had no latency
// (`latency_skipped`). The rare values are kept behind the window.
struct alignas(64) StreamRx {
    Jitter jitter;
    LatencyRun latency;
    SeqTracker seq;
    uint64_t latency_skipped = 0;  // a mix's: frames of ours without a timestamp, or with one ahead
    // A mix's: the extremes of the latencies LatencyRun leaves out (LatencyRun::kWide ns or more).
    uint64_t wide_min = UINT64_MAX, wide_max = 0;
    // The frames of ours whose latency went to the buckets.
    uint64_t latency_count() const {
        const auto c = seq.counts();
        return c.received + c.duplicates + c.late - latency_skipped;
    }
    uint64_t latency_min() const {
        return std::min<uint64_t>(latency.min == UINT32_MAX ? UINT64_MAX : latency.min, wide_min);
    }
    uint64_t latency_max() const { return std::max<uint64_t>(latency.max, wide_max); }
};
static_assert(sizeof(Jitter) + sizeof(LatencyRun) + SeqTracker::kHotBytes <= 64);
// Two lines a stream: with thousands of streams, their first lines lie close together (the
// tracker's window lies apart). 1152 bytes a stream, with the window in it, gave 4096 streams on
// the net_ring pair 3 % fewer frames a second (docs/benchmarks.md).
static_assert(sizeof(StreamRx) == 128);

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
    // the worker runs, each flow keeps its sum, extremes and the run of its latest bucket in
    // the line its frames touch anyway (StreamRx::latency), and adds a run to its stream's
    // bucket when the run ends, in a table of its own (stats::BucketsByStream). When it ends,
    // it adds that table, the runs, sums and extremes, with each flow's count
    // (StreamRx::latency_count), to the histograms (RxMeasure::finish).
    std::vector<StreamLatency> stream_latency;
    // Their buckets while the worker runs (stats::BucketsByStream): StreamLatency::kBuckets x
    // the mix's streams 16-bit counters, zero; sized before the trial (else by the receiver, as
    // it starts).
    std::vector<uint16_t> stream_buckets;
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

// A mix's latency buckets while the receiver runs, bucket by bucket: one bucket's counters of
// every stream side by side (RxResult::stream_buckets). A stream's own histogram
// (StreamLatency, 4.9 KB) puts the buckets its latencies fall in on a line and a page of their
// own; with thousands of streams, the end of a run was a miss in the cache and often in the
// TLB too (20 MB of histograms for 4096 streams). Here the few buckets a link's latencies fall
// in are a few lines per 32 streams, in a few pages (8 KB for 4096 streams a bucket): the
// counters are 16 bits wide, so that the buckets a link's latencies span stay in a core's L2
// cache (80 buckets of 4096 streams: 640 KB; as 64-bit counters they were 2.5 MB, and every
// run's end a miss in L2). A counter that passes 65,535 hands its 65,536s to its stream's
// histogram (spill, out of line: once per 65,536 frames of a stream and bucket at the most).
// Added to the histograms when the receiver ends (RxMeasure::finish), and zeroed again.
// Nothing marks the buckets used: a stream's counts lie between the buckets of its extremes,
// which its flows keep anyway (a flag stored per run was a byte store, which the compiler
// must assume aliases everything, and it kept the loop's state in memory).
class BucketsByStream {
public:
    using Counter = uint16_t;
    static_assert(std::is_same_v<Counter, decltype(RxResult::stream_buckets)::value_type>);
    // The counters a table for `streams` streams holds.
    static size_t table_size(size_t streams) { return size_t{StreamLatency::kBuckets} * streams; }
    // `table`: table_size(streams) counters, zero; `hist`: the streams' histograms.
    BucketsByStream(Counter* table, size_t streams, StreamLatency* hist)
        : counts_(table), streams_(streams), hist_(hist) {}
    // Bucket `bucket`'s counter of stream `stream`, to be added to (add).
    [[gnu::always_inline]] Counter* counter(unsigned bucket, uint32_t stream) const {
        return &counts_[bucket * streams_ + stream];
    }
    // `count` more in the counter `c` (one of this table's).
    [[gnu::always_inline]] void add(Counter* c, uint64_t count) const {
        const uint64_t sum = *c + count;
        *c = static_cast<Counter>(sum);
        if (sum > kCounterMax) [[unlikely]]
            spill(c, sum - static_cast<Counter>(sum));
    }
    // Every count of stream m into its histogram, and the table to zero. Only the buckets
    // between those of the least of the extremes[m].min and the greatest extremes[m].max are
    // read (a stream with min above max has none), bucket by bucket: the table in the order it
    // lies.
    void add_to_histograms(const StreamLatency::Totals* extremes) {
        uint64_t least = UINT64_MAX, greatest = 0;
        for (size_t m = 0; m < streams_; ++m)
            if (extremes[m].min <= extremes[m].max) {
                least = std::min(least, extremes[m].min);
                greatest = std::max(greatest, extremes[m].max);
            }
        if (least > greatest) return;
        const unsigned hi = StreamLatency::bucket_of(greatest);
        for (unsigned b = StreamLatency::bucket_of(least); b <= hi; ++b)
            for (size_t m = 0; m < streams_; ++m)
                if (Counter& c = counts_[b * streams_ + m]) {
                    hist_[m].add_to_bucket(b, c);
                    c = 0;
                }
    }

private:
    static constexpr uint64_t kCounterMax = UINT16_MAX;
    // What a counter could not hold, into its stream's histogram.
    [[gnu::noinline]] void spill(const Counter* c, uint64_t amount) const {
        const size_t at = static_cast<size_t>(c - counts_);
        hist_[at % streams_].add_to_bucket(static_cast<unsigned>(at / streams_), amount);
    }
    Counter* counts_;
    size_t streams_;
    StreamLatency* hist_;
};

// A mix's latency runs that ended (LatencyRun), each added to its bucket kDepth runs later:
// its counter is asked for as the run ends, and added to once kDepth more runs have ended (or
// the receiver ends), by then in cache. With thousands of streams whose latency moves, nearly
// every frame ends a run, on a line last touched a few thousand frames before: added to in
// place, the end stalled on that line (13 % of a receiver's time with 4096 streams on a
// net_ring pair, when each stream had its own histogram); added to one run later, the line was
// often still on its way (5 % of the time at the add). Until kDepth runs have ended, the slots
// point at a counter of their own, with nothing to add.
class EndedRuns {
public:
    static constexpr uint32_t kDepth = 8;
    using Counter = BucketsByStream::Counter;
    EndedRuns() = default;
    EndedRuns(const EndedRuns&) = delete;  // the slots may point at its own counter
    EndedRuns& operator=(const EndedRuns&) = delete;
    // A run ended: `count` more in `counter`, one of `table`'s.
    [[gnu::always_inline]] void end(const BucketsByStream& table, Counter* counter, uint64_t count) {
        uint32_t at = at_;
        end_at(table, at, counter, count);
        at_ = at;
    }
    // The runs of the set bits of `mask`, run j's counter counter_of(j) and its count count[j]:
    // the slot's position kept in a register through the loop (in the member, each run's
    // position was a store and a load the next run waited for).
    template <class CounterOf>
    [[gnu::always_inline]] void end_each(const BucketsByStream& table, unsigned mask, const uint64_t* count,
                                         CounterOf&& counter_of) {
        uint32_t at = at_;
        for (; mask; mask &= mask - 1) {
            const unsigned j = static_cast<unsigned>(__builtin_ctz(mask));
            end_at(table, at, counter_of(j), count[j]);
        }
        at_ = at;
    }
    // Eight runs ended at once (account_flows8's, every lane's): counter[j], count[j]. They
    // take the eight slots, whose runs go to their counters first (in any order: the adds
    // commute), so the position is where it was.
    static_assert(kDepth == kRunFrames, "eight runs take every slot");
    [[gnu::always_inline]] void end_eight(const BucketsByStream& table, Counter* const* counter, const uint64_t* count) {
        for (uint32_t k = 0; k < kDepth; ++k) __builtin_prefetch(counter[k], 1);
        for (uint32_t k = 0; k < kDepth; ++k) {
            table.add(counter_[k], count_[k]);  // &none_: adds 0, so never spills
            counter_[k] = counter[k];
            count_[k] = count[k];
        }
    }
    // Every pending run into its counter.
    void apply(const BucketsByStream& table) {
        for (uint32_t k = 0; k < kDepth; ++k) {
            table.add(counter_[k], count_[k]);  // &none_: adds 0, so never spills
            counter_[k] = &none_;
            count_[k] = 0;
        }
    }

private:
    [[gnu::always_inline]] void end_at(const BucketsByStream& table, uint32_t& at, Counter* counter, uint64_t count) {
        __builtin_prefetch(counter, 1);
        const uint32_t k = at++ % kDepth;
        table.add(counter_[k], count_[k]);  // &none_: adds 0, so never spills
        counter_[k] = counter;
        count_[k] = count;
    }
    static_assert(kDepth == 8, "one &none_ per slot below");
    Counter* counter_[kDepth] = {&none_, &none_, &none_, &none_, &none_, &none_, &none_, &none_};
    uint64_t count_[kDepth] = {};
    uint32_t at_ = 0;
    Counter none_ = 0;
};

// RxResult::stream_buckets, sized for its mix if it was not.
inline BucketsByStream::Counter* sized_stream_buckets(RxResult& r) {
    const size_t n = BucketsByStream::table_size(r.stream_latency.size());
    if (r.stream_buckets.size() != n) r.stream_buckets.assign(n, 0);
    return r.stream_buckets.data();
}

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
          by_stream_(sized_stream_buckets(*out), out->stream_latency.size(), out->stream_latency.data()),
          flows_live_(out->flows_live.get()),
          tx_shift_(flow_totals && out->tx_clock_shift.size() >= streams ? out->tx_clock_shift.data() : nullptr) {
        out_->streams.resize(streams);
        streams_ = out_->streams.data();
        if (totals_) out_->flow_totals.resize(streams);
        run_lane_ = sig_ && !fetch_flows() && !stream_lat_ && run_lane_enabled();
        classify_lane_ = sig_ && fetch_flows() && !totals_ && run_lane_enabled();
        if (run_lane_ || classify_lane_) run_header_ = run_header(nonce);
        if (flows_live_) flows_live_->buf.resize(streams);
        own_streams_ = stream_lat_ && out->stream_of.size() == streams && out->stream_latency.size() == streams;
        for (uint32_t f = 0; f < streams && own_streams_; ++f) own_streams_ = out->stream_of[f] == f;
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
        const uint32_t wire = len + packet::kFcsLen;
        auto next = [&](uint32_t, lr_wire_sig& s, uint32_t& w) {
            w = wire;
            return classify_or_account(p, len, csum_verified, s, wire);
        };
        account_one(next);
    }
    // A burst (worker/rx_step.h) is classified and accounted frame by frame, in one pass
    // (account_frames), each frame's classification (classify_or_account) beside its
    // accounting. With many flows their state is not in cache: the receive loop asks for the
    // state of a frame's flow a few frames ahead (prefetch_flow), so that the misses overlap.
    // Above this many flows it does (below, their state stays in cache).
    static constexpr uint32_t kFetchFlowsAbove = 16;
    bool fetch_flows() const { return nstreams_ > kFetchFlowsAbove || totals_; }
    // Whether runs of eight minimum-size frames of one flow go through the eight-frame lane
    // (stats::account_run8) before the frame-by-frame path: a few flows (their known headers
    // learnt), no per-stream latency histograms and no flow totals, and a CPU with the lane's
    // instructions.
    bool run_lane() const { return run_lane_; }
    // Eight frames, each 60 bytes long (`verified`: bit i, the device checked frame i's L4
    // checksum): true when the lane took and accounted all eight; false: none, for
    // account_frames.
    bool account_run(const uint8_t* const* p, unsigned verified) {
        const packet::KnownHeaders::Run* entry = known_.run_entry(p[0]);
        if (!entry || !account_run8(p, verified, *entry, streams_[entry->stream], *lat_, now48_)) return false;
        t_.ours += kRunFrames;
        run_frames_ += kRunFrames;
        return true;
    }
    // Whether runs of eight 60-byte frames of many flows are classified eight at a time
    // (stats::classify_run8) before they are accounted frame by frame: without the flows'
    // totals, on a CPU with the lane's instructions. (With run_lane(), eight frames of a few
    // flows that account_run declined are classified so too.)
    bool classify_lane() const { return classify_lane_; }
    // Eight frames, each 60 bytes long: true when classify_run8 took all eight (their
    // signatures in `out`, to be accounted by account_frames); false: none.
    // kLearn (a few flows, where account_run declined them): the known-header lane learns the
    // first frame's headers, so that account_run can take its flow's next eight.
    template <bool kLearn = false>
    bool classify_run(const uint8_t* const* p, unsigned verified, RunSigs& out) {
        if (!classify_run8(p, verified, run_header_, nstreams_, out)) return false;
        run_frames_ += kRunFrames;
        if constexpr (kLearn) {
            lr_wire_sig s{};
            s.nonce = nonce_;
            s.stream = static_cast<uint16_t>(out.stream[0]);
            known_.learn(p[0], packet::KnownHeaders::kMinLen, s);
        }
        return true;
    }
    // Eight frames classify_run took (`sigs`), each of another flow, accounted together where
    // stats::account_flows8 takes them (each its flow's next, with a latency it can keep): true;
    // false: none was, for account_frames.
    bool account_flows(const RunSigs& sigs) {
        EndedRunsOf8 ended;
        const BucketsByStream* own = own_streams_ ? &by_stream_ : nullptr;
        if (!account_flows8(sigs, streams_, stream_lat_ != nullptr, *lat_, now48_, ended, own)) return false;
        t_.ours += kRunFrames;
        flows_frames_ += kRunFrames;
        const BucketsByStream by_stream = by_stream_;
        const uint16_t* const stream_of = stream_of_;
        auto counter_of = [&](unsigned j) __attribute__((always_inline)) {
            return by_stream.counter(static_cast<unsigned>(ended.bucket[j]), stream_of[sigs.stream[j]]);
        };
        if (ended.mask == 0xff) [[likely]] {  // a mix whose latencies move: nearly every frame ends a run
            BucketsByStream::Counter* counter[kRunFrames];
            for (unsigned j = 0; j < kRunFrames; ++j) counter[j] = counter_of(j);
            ended_.end_eight(by_stream, counter, ended.count);
        } else if (ended.mask) {
            ended_.end_each(by_stream, ended.mask, ended.count, counter_of);
        }
        return true;
    }
    // Asks for the state of the flows of eight frames classify_run took, to be there when
    // they are accounted (after the next eight are classified).
    [[gnu::always_inline]] void prefetch_flows(const RunSigs& sigs) const {
        for (uint32_t k = 0; k < kRunFrames; ++k) __builtin_prefetch(&streams_[sigs.stream[k]], 1);
    }
    // Frames the eight-frame lane took so far, and of those, the frames account_flows took
    // (for tests and benchmarks).
    uint64_t run_frames() const { return run_frames_; }
    uint64_t flows_frames() const { return flows_frames_; }
    // A frame's class by the run's rules (the fast lane, then the general ones), its signature
    // in `s`, without accounting for it.
    int classify(const uint8_t* p, uint32_t len, bool csum_verified, lr_wire_sig& s) const {
        const int fast = packet::classify_fast(p, len, nonce_, nstreams_, csum_verified, s);
        return fast >= 0 ? fast : classify_general(p, len, csum_verified, s);
    }
    // The pass's classification: LR_OURS for a frame the fast lane takes (its layout's
    // constants then known where it is accounted), kAccounted for any other, which is
    // classified by the general rules and accounted for here, out of line. `wire`: its size
    // on the wire (FCS included), for the flows' totals.
    // kKnown: a frame whose headers match those of a frame of its flow the fast lane took is
    // taken without its checks (packet::KnownHeaders), and the fast lane's frames are learnt;
    // for a few flows (with many, the entries would change hands at every frame).
    static constexpr int kAccounted = -1;
    template <bool kKnown = false>
    [[gnu::always_inline]] int classify_or_account(const uint8_t* p, uint32_t len, bool csum_verified, lr_wire_sig& s,
                                                   uint32_t wire) {
        if constexpr (kKnown)
            if (known_.match(p, len, csum_verified, nonce_, s)) [[likely]]
                return LR_OURS;
        if (packet::classify_fast(p, len, nonce_, nstreams_, csum_verified, s) >= 0) [[likely]] {
            if constexpr (kKnown) known_.learn(p, len, s);
            return LR_OURS;
        }
        account_general(p, len, csum_verified, wire);
        return kAccounted;
    }
    // A hint, not a classification: asks for the state of the flow (its StreamRx and, when
    // kept, its FlowRxTotals) a frame would be of if it had the fast lane's layout (IPv4, UDP,
    // the full signature), to be there when the frame is accounted a few frames later. A frame
    // of another layout, or not of ours, asks in vain for some flow's state or for a line
    // beyond it (the id is not checked: a prefetch never faults), and costs that; nothing is
    // read beyond the frame's `len` bytes. Measured against classifying the whole burst first
    // and fetching each frame's state then (two passes): a fifth more frames a second with
    // 4096 streams, and fewer instructions (docs/benchmarks.md).
    // kTotals: the flows' totals are kept (fetch_flows() then holds), and fetched too.
    template <bool kTotals = false>
    [[gnu::always_inline]] void prefetch_flow(const uint8_t* p, uint32_t len) const {
        constexpr uint32_t kStreamAt = 14 + 20 + 8 + LR_UDP_STREAM;
        if (len < kStreamAt + 2) [[unlikely]]
            return;
        uint16_t id;
        std::memcpy(&id, p + kStreamAt, 2);
        const uint32_t f = __builtin_bswap16(id);
        __builtin_prefetch(reinterpret_cast<const void*>(reinterpret_cast<uintptr_t>(streams_) + f * sizeof(StreamRx)), 1);
        if constexpr (kTotals)
            __builtin_prefetch(reinterpret_cast<const void*>(reinterpret_cast<uintptr_t>(out_->flow_totals.data()) +
                                                             f * sizeof(FlowRxTotals)),
                               1);
    }
    // Accounts for a burst of `n` frames, where `next(i, s, wire)` classifies frame i: returns
    // its class and, for one of ours, fills its signature `s` and its size on the wire `wire`
    // (FCS included; read for the flows' totals only); kAccounted: nothing left to do. What
    // nearly every frame needs (one of ours, in order, with a timestamp) is kept in locals
    // through the burst, which the compiler holds in registers (stores to the streams' state
    // could alias members, not locals), and added once at the end; rarer outcomes (another
    // class, a sequence out of order, no latency) go to the tallies out of line.
    template <bool kTotals, class Next>
    [[gnu::always_inline]] void account_frames(uint32_t n, Next&& next) {
        account_frames<kTotals>(0, n, next);
    }
    // The same for frames [from, to) of a burst.
    template <bool kTotals, class Next>
    [[gnu::always_inline]] void account_frames(uint32_t from, uint32_t to, Next&& next) {
        StreamRx* const streams = streams_;
        LatencyHistogram* const hist = lat_;
        StreamLatency* const stream_lat = stream_lat_;
        BucketsByStream& by_stream = by_stream_;
        const uint16_t* const stream_of = stream_of_;
        const uint64_t now48 = now48_;
        uint64_t ours = 0, no_latency_count = 0;
        LatencyHistogram::Totals lat;  // its count is the frames of ours with a latency, set after the loop
        EndedRuns& ended = ended_;
        for (uint32_t i = from; i < to; ++i) {
            lr_wire_sig s;
            uint32_t wire;
            const int cls = next(i, s, wire);
            if (cls != LR_OURS) [[unlikely]] {
                if (cls != kAccounted) count_other(cls);
                continue;
            }
            ++ours;
            auto& st = streams[s.stream];
            [[maybe_unused]] FlowRxTotals* ft = nullptr;
            if constexpr (kTotals) {
                ft = &out_->flow_totals[s.stream];
                ft->bytes += wire;
                if (!ft->first_ns) ft->first_ns = now_;
                ft->last_ns = now_;
            }
            const auto a = st.seq.arrive(s.seq, s.seq_bits);
            if (a.kind != SeqTracker::Arrival::in_order || a.skipped) [[unlikely]]
                count_out_of_order(a);
            if (!s.has_ts) [[unlikely]] {
                no_latency(st);
                ++no_latency_count;
                continue;
            }
            uint64_t ts = s.ts;
            if constexpr (kTotals)
                if (tx_shift_) ts = (ts + tx_shift_[s.stream]) & LR_SIG48_MASK;
            const uint64_t l = (now48 - ts) & LR_SIG48_MASK;
            if (l >= (uint64_t(1) << 47)) [[unlikely]] {  // a timestamp from the future would wrap: ignore it
                no_latency(st);
                ++no_latency_count;
                continue;
            }
            const unsigned fine = LatencyHistogram::bucket_of(l);
            hist->add_to_bucket(fine, 1);
            lat.add_value(l);
            st.jitter.add_transit(static_cast<int64_t>(l));
            if constexpr (kTotals) {
                ++ft->lat_n;
                ft->lat_sum += l;
                ft->lat_min = std::min(ft->lat_min, l);
                ft->lat_max = std::max(ft->lat_max, l);
            }
            if (stream_lat)
                if (!st.latency.add(l, StreamLatency::bucket_from_finer<LatencyHistogram::kSubBits>(fine, l),
                                    [&](unsigned b, uint64_t count) __attribute__((always_inline)) {
                                        ended.end(by_stream, by_stream.counter(b, stream_of[s.stream]), count);
                                    })) [[unlikely]]
                    wide_latency(st, l);
        }
        t_.ours += ours;
        lat.count = ours - no_latency_count;
        hist->add(lat);
    }
    // Distinct test frames received so far.
    uint64_t unique() const { return t_.unique(); }
    // Queue totals, one relaxed store each (call once per burst).
    void publish(QueueCounters& c) const;

private:
    // One frame, `next` as account_frames() takes it, with the flows' totals when kept.
    template <class Next>
    void account_one(Next&& next) {
        if (totals_)
            account_frames<true>(1, next);
        else
            account_frames<false>(1, next);
    }
    // A frame the fast lane passed on, by the general rules.
    [[gnu::noinline]] void account_general(const uint8_t* p, uint32_t len, bool csum_verified, uint32_t wire) {
        lr_wire_sig g;
        const int cls = classify_general(p, len, csum_verified, g);
        auto next = [&](uint32_t, lr_wire_sig& s, uint32_t& w) {
            s = g;
            w = wire;
            return cls;
        };
        account_one(next);
    }
    // A mix's latency of LatencyRun::kWide ns or more (over 4 s): its extremes.
    [[gnu::noinline]] static void wide_latency(StreamRx& st, uint64_t l) {
        st.wide_min = std::min(st.wide_min, l);
        st.wide_max = std::max(st.wide_max, l);
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
    BucketsByStream by_stream_;  // a mix's buckets while the receiver runs
    bool own_streams_ = false;   // a mix whose every flow is a stream of its own (flow f is stream f)
    CountsExchange<FlowLive>* flows_live_;
    const uint64_t* tx_shift_;  // RxResult::tx_clock_shift, or null
    uint32_t seen_ = 0, flows_seen_ = 0;
    bool finished_ = false;
    bool run_lane_ = false, classify_lane_ = false;
    uint64_t run_frames_ = 0, flows_frames_ = 0;
    RunHeader run_header_;  // classify_run8's, for this run's nonce
    uint64_t now_ = 0, now48_ = 0;
    Tally t_;
    EndedRuns ended_;  // a mix's: applied by finish()
    packet::KnownHeaders known_;  // the known-header lane's entries (classify_or_account<true>)
};

}  // namespace lr::stats
