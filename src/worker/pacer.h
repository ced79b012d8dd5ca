// TX pacing: the single place where a worker's sending rate is limited. It keeps a schedule
// of departure times (constant rate, bursts, or Poisson), on the worker's TSC clock, and says
// how many frames are due now: per packet, so at low rates frames leave at their own due
// times, not a burst at a time.
//
// It never catches up beyond a tolerance: a worker up to the tolerance late (two bursts' worth
// of time, at least 1 ms) sends the late frames at once, so a brief preemption or a slow
// system call does not lower the average; a worker further behind skips the slots it missed,
// counting them and the time lost, so the rate offered never exceeds the one asked for, not
// even after a stall or a link outage.
#pragma once
#include <cmath>
#include <cstdint>

namespace lr::worker {

struct PacingPlan {
    double pps = 0;              // 0: unlimited
    enum class Kind { cbr, burst, poisson } kind = Kind::cbr;
    uint32_t burst = 1;          // frames per burst (Kind::burst)
    uint64_t seed = 1;           // Kind::poisson
    uint32_t max_burst = 64;     // the engine's burst: sets how late a frame may still leave
};

class Pacer {
public:
    explicit Pacer(const PacingPlan& p = {})
        : p_(p), gap_(p.pps > 0 ? 1e9 / p.pps : 0), rng_(p.seed * 0x9E3779B97F4A7C15ull + 1) {
        const double burst_time = gap_ * std::max<uint32_t>(p.max_burst, p.kind == PacingPlan::Kind::burst ? p.burst : 1);
        tolerance_ns_ = std::max(2.0 * burst_time, 1e6);
    }
    bool limited() const { return p_.pps > 0; }
    void start(uint64_t now_ns) { next_ = static_cast<double>(now_ns); }

    // Frames due at `now` (at most `want`), taken from the schedule.
    uint32_t due(uint64_t now_ns, uint32_t want) {
        const double now = static_cast<double>(now_ns);
        if (now - next_ > tolerance_ns_) skip_to(now - tolerance_ns_);
        uint32_t n = 0;
        while (n < want && next_ <= now) {
            switch (p_.kind) {
                case PacingPlan::Kind::cbr: {
                    // Several at once without a loop: every slot up to `now`, at most `want`.
                    const double k = std::min<double>(std::floor((now - next_) / gap_) + 1, want - n);
                    n += static_cast<uint32_t>(k);
                    next_ += k * gap_;
                    break;
                }
                case PacingPlan::Kind::burst:
                    ++n;
                    if (++in_burst_ == p_.burst) {
                        in_burst_ = 0;
                        next_ += gap_ * p_.burst;
                    }
                    break;
                case PacingPlan::Kind::poisson:
                    ++n;
                    next_ += exponential_gap();
                    break;
            }
        }
        return n;
    }
    // When the next frame is due (ns on the caller's clock).
    uint64_t next_due() const { return static_cast<uint64_t>(next_); }
    // When the n-th next frame is due (cbr: the schedule is exact; other patterns: on average).
    uint64_t nth_due(uint32_t n) const { return static_cast<uint64_t>(next_ + (n ? n - 1 : 0) * gap_); }
    // Slots given up because the worker was too far behind, and the time they spanned.
    uint64_t skipped() const { return skipped_; }
    uint64_t behind_ns() const { return static_cast<uint64_t>(behind_ns_); }

private:
    void skip_to(double t) {
        behind_ns_ += t - next_;
        if (p_.kind == PacingPlan::Kind::cbr) {
            const double k = std::ceil((t - next_) / gap_);
            skipped_ += static_cast<uint64_t>(k);
            next_ += k * gap_;
            return;
        }
        while (next_ < t) {  // burst and poisson: slot by slot (rare: only after a stall)
            ++skipped_;
            if (p_.kind == PacingPlan::Kind::poisson) {
                next_ += exponential_gap();
            } else if (++in_burst_ == p_.burst) {
                in_burst_ = 0;
                next_ += gap_ * p_.burst;
            }
        }
    }
    double exponential_gap() {
        // xorshift64*: a uniform in (0, 1], then the inverse of the exponential distribution.
        rng_ ^= rng_ >> 12;
        rng_ ^= rng_ << 25;
        rng_ ^= rng_ >> 27;
        const uint64_t r = rng_ * 0x2545F4914F6CDD1Dull;
        const double u = (static_cast<double>(r >> 11) + 1.0) * (1.0 / 9007199254740992.0);
        return -std::log(u) * gap_;
    }

    PacingPlan p_;
    double gap_;
    double tolerance_ns_ = 0;
    double next_ = 0;
    uint32_t in_burst_ = 0;
    uint64_t rng_;
    uint64_t skipped_ = 0;
    double behind_ns_ = 0;
};

}  // namespace lr::worker
