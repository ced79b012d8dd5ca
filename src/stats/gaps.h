// The gaps between departures (at a sender) or arrivals (at a receiver), as a worker sees
// them: one clock read per burst, so the first frame of a burst gets the gap since the
// previous burst and the others a gap of 0 (they were handed over, or found, together).
// Single writer (the worker); read by the control thread after join().
#pragma once
#include <cmath>
#include <cstdint>

#include "stats/latency.h"

namespace lr::stats {

class GapStats {
public:
    // Per burst, so per-frame cheap: the frames after a burst's first are only counted (their
    // zero gaps join the histogram when it is read).
    void burst(uint64_t t_ns, uint32_t frames) {
        if (!frames) return;
        if (frames_ == 0) {
            first_ = t_ns;
            first_frames_ = frames;
        } else {
            const uint64_t g = t_ns > last_ ? t_ns - last_ : 0;
            h_.add(g);  // its sum is the gaps' sum: the zero gaps add nothing
            sumsq_ += static_cast<double>(g) * static_cast<double>(g);
        }
        zeros_ += frames - 1;
        frames_ += frames;
        last_ = t_ns;
    }
    void merge(const GapStats& o) {
        h_.merge(o.h_);
        zeros_ += o.zeros_;
        sumsq_ += o.sumsq_;
        frames_ += o.frames_;
        if (o.first_ && (!first_ || o.first_ < first_)) first_ = o.first_;
        if (o.last_ > last_) last_ = o.last_;
    }
    uint64_t frames() const { return frames_; }
    uint64_t gaps() const { return h_.count() + zeros_; }
    double mean_ns() const { return gaps() ? static_cast<double>(h_.sum()) / static_cast<double>(gaps()) : 0; }
    double stddev_ns() const {
        if (gaps() < 2) return 0;
        const double m = mean_ns();
        return std::sqrt(std::max(0.0, sumsq_ / static_cast<double>(gaps()) - m * m));
    }
    uint64_t percentile_ns(double q) const { return all().percentile(q); }
    uint64_t max_ns() const { return h_.max(); }
    double zero_fraction() const {
        return gaps() ? static_cast<double>(h_.count_of(0) + zeros_) / static_cast<double>(gaps()) : 0;
    }
    // The rate of the frames after the first burst over the time from the first burst to the
    // last: for a paced sender, its offered rate, free of start and stop effects.
    double rate_pps() const {
        return last_ > first_ ? static_cast<double>(frames_ - first_frames_) * 1e9 / static_cast<double>(last_ - first_) : 0;
    }
    uint64_t first_ns() const { return first_; }
    uint64_t last_ns() const { return last_; }

private:
    // Every gap: the histogram of the gaps between bursts, plus the zero gaps within them.
    LatencyHistogram all() const {
        LatencyHistogram a = h_;
        if (zeros_) a.add(0, zeros_);
        return a;
    }
    LatencyHistogram h_;  // the gaps between bursts
    uint64_t zeros_ = 0;  // the frames after each burst's first: gaps of 0
    uint64_t frames_ = 0, first_frames_ = 0, first_ = 0, last_ = 0;
    double sumsq_ = 0;
};

}  // namespace lr::stats
