#include "stats/latency.h"

#include <algorithm>
#include <bit>

namespace lr::stats {

template <unsigned B>
uint64_t Histogram<B>::bucket_low(unsigned b) {
    if (b < kSub) return b;
    const unsigned e = b / kSub + kSubBits - 1;
    return (uint64_t(1) << e) + (uint64_t(b % kSub) << (e - kSubBits));
}

template <unsigned B>
uint64_t Histogram<B>::bucket_high(unsigned b) {
    if (b < kSub) return b + 1;
    const unsigned e = b / kSub + kSubBits - 1;
    return bucket_low(b) + (uint64_t(1) << (e - kSubBits));
}

template <unsigned B>
void Histogram<B>::merge(const Histogram& o) {
    for (unsigned i = 0; i < kBuckets; ++i) counts_[i] += o.counts_[i];
    count_ += o.count_;
    sum_ += o.sum_;
    min_ = std::min(min_, o.min_);
    max_ = std::max(max_, o.max_);
}

template <unsigned B>
uint64_t Histogram<B>::percentile(double q) const {
    if (!count_) return 0;
    q = std::clamp(q, 0.0, 1.0);
    // Rank of the value: the smallest value with at least ceil(q * count) values <= it.
    uint64_t rank = static_cast<uint64_t>(q * static_cast<double>(count_) + 0.999999);
    rank = std::clamp<uint64_t>(rank, 1, count_);
    uint64_t seen = 0;
    for (unsigned b = 0; b < kBuckets; ++b) {
        seen += counts_[b];
        if (seen >= rank) {
            const uint64_t mid = b < kSub ? b : (bucket_low(b) + bucket_high(b) - 1) / 2;
            return std::clamp(mid, min(), max_);
        }
    }
    return max_;
}

template <unsigned B>
uint64_t Histogram<B>::count_at_most(uint64_t ns) const {
    uint64_t n = 0;
    for (unsigned b = 0; b < kBuckets && (b < kSub ? b : bucket_high(b) - 1) <= ns; ++b) n += counts_[b];
    return n;
}

template class Histogram<7>;
template class Histogram<4>;

void LatencyTaker::request(LatencyExchange& x) {
    if (pending_) return;
    x.request.store(++req_, std::memory_order_release);  // buf[req_ & 1] was cleared by collect()
    pending_ = true;
}

bool LatencyTaker::collect(LatencyExchange& x, LatencyHistogram& total, LatencyHistogram& iv) {
    if (!pending_ || x.done.load(std::memory_order_acquire) != req_) return false;
    auto& h = x.buf[(req_ - 1) & 1];  // the buffer the worker has just left
    total.merge(h);
    iv.merge(h);
    h.reset();
    pending_ = false;
    return true;
}

void LatencyTaker::final(LatencyExchange& x, LatencyHistogram& total, LatencyHistogram& iv) {
    for (auto& h : x.buf) {
        total.merge(h);
        iv.merge(h);
        h.reset();
    }
    pending_ = false;
}

}  // namespace lr::stats
