// Latency statistics: a log-linear histogram with bounded relative error (HDR-like), and
// RFC 3550 interarrival jitter. Single writer (the RX worker); merged by the control thread.
#pragma once
#include <array>
#include <atomic>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <vector>

namespace lr::stats {

// Values in nanoseconds, 0 .. 2^40 (about 18 minutes). Each power-of-two range is split
// into 2^SubBits linear buckets, so a reported percentile is within 1/2^SubBits of the true
// value (0.8 % with 7 bits: LatencyHistogram, 35 KB; 6.3 % with 4 bits: StreamLatency, 4.9 KB,
// one per stream of a mix); values below 2^SubBits ns are exact.
template <unsigned SubBits>
class Histogram {
public:
    static constexpr unsigned kSubBits = SubBits;
    static constexpr unsigned kSub = 1u << kSubBits;
    static constexpr unsigned kMaxExp = 40;
    static constexpr unsigned kBuckets = (kMaxExp - kSubBits + 2) * kSub;  // exponents kSubBits..kMaxExp, plus the exact range

    void add(uint64_t ns) {  // per received frame: inline
        ++counts_[bucket_of(ns)];
        ++count_;
        sum_ += ns;
        min_ = ns < min_ ? ns : min_;
        max_ = ns > max_ ? ns : max_;
    }
    // `times` values of `ns` at once.
    void add(uint64_t ns, uint64_t times) {
        counts_[bucket_of(ns)] += times;
        count_ += times;
        sum_ += ns * times;
        min_ = ns < min_ ? ns : min_;
        max_ = ns > max_ ? ns : max_;
    }
    // Values added a burst at a time: each goes to its bucket as it comes (add_bucket), while
    // the totals build up in a local Totals (registers, not the histogram's memory) that is
    // added once at the end of the burst.
    struct Totals {
        uint64_t count = 0, sum = 0, min = UINT64_MAX, max = 0;
        void add(uint64_t ns) {
            ++count;
            add_value(ns);
        }
        // The sum and extremes only, where the caller knows the count.
        void add_value(uint64_t ns) {
            sum += ns;
            min = ns < min ? ns : min;
            max = ns > max ? ns : max;
        }
    };
    void add_bucket(uint64_t ns) { ++counts_[bucket_of(ns)]; }
    // `times` values in the bucket of `ns`, their totals added separately (add(Totals)): a
    // histogram rebuilt from another's buckets (a controller's, from its engines').
    void add_bucket(uint64_t ns, uint64_t times) { counts_[bucket_of(ns)] += times; }
    void add(const Totals& t) {
        count_ += t.count;
        sum_ += t.sum;
        min_ = t.min < min_ ? t.min : min_;
        max_ = t.max > max_ ? t.max : max_;
    }
    // `times` values in bucket b (LatencyRun: a run of values in one bucket).
    void add_to_bucket(unsigned b, uint64_t times) { counts_[b] += times; }
    // Values that fell in bucket b, and in the bucket of `ns` (exact below 2^SubBits ns).
    uint64_t bucket_count(unsigned b) const { return counts_[b]; }
    uint64_t count_of(uint64_t ns) const { return counts_[bucket_of(ns)]; }
    void merge(const Histogram& o);
    void reset() { *this = Histogram{}; }
    uint64_t count() const { return count_; }
    uint64_t min() const { return count_ ? min_ : 0; }
    uint64_t max() const { return max_; }
    uint64_t sum() const { return sum_; }
    double mean() const { return count_ ? static_cast<double>(sum_) / static_cast<double>(count_) : 0; }
    // Value at quantile q in [0, 1]: the midpoint of the bucket holding it (exact below 128 ns),
    // clamped to [min, max].
    uint64_t percentile(double q) const;
    // Values at most `ns` (to the bucket: a bucket counts when its upper end is at most ns + 1).
    uint64_t count_at_most(uint64_t ns) const;

    // Values below 2^(SubBits+1) are their own bucket; above, with 2^e <= ns < 2^(e+1), the
    // range of exponent e starts at bucket (e - SubBits + 1) * kSub, and ns's top SubBits + 1
    // bits (kSub plus the linear step) are its place there: both are one formula, without a
    // branch, in terms of the shift e - SubBits (0 for the exact values).
    static unsigned bucket_of(uint64_t ns) {
        // The top bit's index, at least kSubBits: 63 ^ clz is one bit-scan (bit_width - 1 was three more).
        const unsigned e = 63u ^ static_cast<unsigned>(__builtin_clzll(ns | kSub));
        if (e > kMaxExp) [[unlikely]]
            return kBuckets - 1;
        const unsigned shift = e - kSubBits;
        return shift * kSub + static_cast<unsigned>(ns >> shift);
    }
    // The bucket of `ns` here, from its bucket `fine` in a finer histogram (more sub-bits, the
    // same kMaxExp): no second bit-scan. Above the finer one's exact range, a bucket is its
    // shift times its kSub plus the value's top bits; with D fewer sub-bits here, the shift
    // grows by D and D bits fewer are kept, which comes to fine / 2^D + D * kSub (the last
    // bucket, which takes every larger value, maps to the last bucket too). Within the finer
    // one's exact range, `ns` decides.
    template <unsigned FinerSubBits>
    [[gnu::always_inline]] static unsigned bucket_from_finer(unsigned fine, uint64_t ns) {
        static_assert(FinerSubBits > SubBits);
        constexpr unsigned kD = FinerSubBits - SubBits;
        if (fine < 2u << FinerSubBits) [[unlikely]]
            return bucket_of(ns);
        return (fine >> kD) + kD * kSub;
    }
    static uint64_t bucket_low(unsigned b);
    static uint64_t bucket_high(unsigned b);  // exclusive

private:
    std::array<uint64_t, kBuckets> counts_{};
    uint64_t count_ = 0, sum_ = 0, min_ = UINT64_MAX, max_ = 0;
};

using LatencyHistogram = Histogram<7>;
using StreamLatency = Histogram<4>;
extern template class Histogram<7>;
extern template class Histogram<4>;

// One flow's latencies for the histogram of the stream it belongs to (a mix's StreamLatency),
// which it is added to later, in 24 bytes that share a cache line with the flow's other
// per-frame state (stats::StreamRx): the sum; the extremes of the latencies below kWide ns, in
// 32 bits each (the caller keeps the rare others' apart); and the run: the bucket of the
// latest latencies and how many there were, handed on (to be added to the histogram) only when
// a latency falls in another bucket, and added at the end (flush). While a flow's latency
// holds within its bucket (a sixteenth of a power of two), its frames touch this line and not
// the histogram's: with thousands of streams, one cache miss a frame fewer.
struct LatencyRun {
    static constexpr uint64_t kWide = UINT32_MAX;  // this and more: extremes kept by the caller
    static constexpr unsigned kBucketBits = 10;
    static_assert(StreamLatency::kBuckets <= 1u << kBucketBits);
    static constexpr uint64_t kBucketMask = (uint64_t(1) << kBucketBits) - 1, kOne = uint64_t(1) << kBucketBits;

    uint64_t sum = 0;
    uint32_t min = UINT32_MAX, max = 0;  // of the latencies below kWide (min UINT32_MAX: none)
    uint64_t run = 0;                    // bucket | count << kBucketBits

    // Adds `ns`, whose bucket in a StreamLatency is `b`; when that ends the run,
    // `end_run(bucket, count)` is given the run ended, for the histogram. False when `ns` is
    // kWide or more: its extremes are the caller's to keep.
    template <class EndRun>
    [[gnu::always_inline]] bool add(uint64_t ns, unsigned b, EndRun&& end_run) {
        sum += ns;
        if ((run & kBucketMask) == b) [[likely]] {
            run += kOne;
        } else {
            end_run(static_cast<unsigned>(run & kBucketMask), run >> kBucketBits);
            run = b | kOne;
        }
        // New extremes are rare once a stream has run a while: a branch each, which stores
        // nothing when not taken. A latency of kWide or more is above any maximum kept.
        if (ns > max) [[unlikely]] {
            if (ns >= kWide) return false;
            max = static_cast<uint32_t>(ns);
        }
        if (ns < min) [[unlikely]]
            min = static_cast<uint32_t>(ns);
        return true;
    }
    // The run so far into `h`.
    void flush(StreamLatency& h) {
        h.add_to_bucket(static_cast<unsigned>(run & kBucketMask), run >> kBucketBits);
        run = 0;
    }
};

// Live latency: hands interval histograms from an RX worker to the control thread without
// either side touching a histogram the other is using. The worker adds samples to
// buf[done & 1]. To take an interval, the control thread (which has cleared the other
// buffer) raises `request`; at its next poll the worker moves to buf[request & 1] and
// publishes `done = request` (release), after which the buffer it left is the control
// thread's to read, merge and clear. One relaxed-cost load per worker poll; no locks.
struct LatencyExchange {
    LatencyHistogram buf[2];
    alignas(64) std::atomic<uint32_t> request{0};  // written by the control thread
    alignas(64) std::atomic<uint32_t> done{0};     // written by the worker
};

// The control thread's side of one LatencyExchange.
class LatencyTaker {
public:
    // Asks the worker to switch buffers, unless the previous request is still unanswered.
    void request(LatencyExchange& x);
    // If the worker has answered, merges the buffer it left into `total` and `iv`, clears it
    // and returns true; false while the request is unanswered (or none is pending).
    bool collect(LatencyExchange& x, LatencyHistogram& total, LatencyHistogram& iv);
    bool pending() const { return pending_; }
    // Once the worker has ended: both buffers.
    void final(LatencyExchange& x, LatencyHistogram& total, LatencyHistogram& iv);

private:
    uint32_t req_ = 0;
    bool pending_ = false;
};

// RFC 3550 section 6.4.1 interarrival jitter: J += (|D| - J) / 16, with D the difference of
// transit times of consecutive packets. Kept in integer nanoseconds scaled by 2^12, as RFC 3550
// appendix A.8 keeps it scaled by 16: one integer add and shift per frame instead of a chain
// of floating-point operations, within 2^-8 ns of the exact value (transit times below 2^47 ns).
class Jitter {
public:
    void add(uint64_t tx_ns, uint64_t rx_ns) { add_transit(static_cast<int64_t>(rx_ns - tx_ns)); }
    // One frame's transit time (receive clock minus its TX timestamp), in ns.
    void add_transit(int64_t transit) {
        if (last_ != kNoTransit) {
            const int64_t d = transit - last_;
            j_ += ((d < 0 ? -d : d) * kScale - j_) >> 4;  // arithmetic shift (C++20): floor
        }
        last_ = transit;
    }
    double ns() const { return static_cast<double>(j_) / kScale; }
    // For a lane that takes the transits' differences itself (stats::account_run8): whether a
    // transit came before, the last one, and `k` transits whose absolute differences from
    // their predecessors, times kScale, are `scaled`, the last of them `last`.
    bool started() const { return last_ != kNoTransit; }
    int64_t last() const { return last_; }
    void add_scaled(const int64_t* scaled, unsigned k, int64_t last) {
        int64_t j = j_;
        for (unsigned i = 0; i < k; ++i) j += (scaled[i] - j) >> 4;
        j_ = j;
        last_ = last;
    }
    static constexpr int64_t kScale = 1 << 12;
    // J * kScale, then the last transit, 8 bytes each (for a lane that updates several at once,
    // stats::account_flows8).
    static constexpr bool fields_in_order() { return offsetof(Jitter, j_) == 0 && offsetof(Jitter, last_) == 8; }
    // The last transit before the first (transit times are far inside +-2^62).
    static constexpr int64_t kNoTransit = INT64_MIN;

private:
    int64_t j_ = 0;  // J * kScale
    int64_t last_ = kNoTransit;
};

}  // namespace lr::stats
