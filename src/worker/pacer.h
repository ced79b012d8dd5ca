// TX pacing: the single place where a worker's sending rate is limited. It keeps a schedule
// of departure times (constant rate, bursts, or Poisson), on the worker's TSC clock, and says
// how many frames are due now: per packet, so at low rates frames leave at their own due
// times, not a burst at a time.
//
// Stalls and catch-up. A worker preempted for a few milliseconds, or slowed by a system call
// or a device that would not take frames, finds itself behind its schedule. Up to the
// catch-up window (--catch-up) it sends the late frames at once, so the trial still offers
// exactly its count at exactly its rate; only a worker further behind gives up the oldest
// slots, counting them and the time they spanned, so the rate offered never exceeds the one
// asked for, not even after a link outage. Every time the worker is more than kStallNs behind
// is a stall: counted, with the longest one and the largest backlog sent late at once to
// recover (docs/measurement.md, "Pacing and stalls").
#pragma once
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

namespace lr::worker {

// Behind the schedule by more than this is a stall: a worker that runs is never further off
// than a loop iteration (or a sleep's wake-up, which starts 100 us early).
inline constexpr uint64_t kStallNs = 100'000;
// The default catch-up window: stalls of several milliseconds on a shared host are made up for.
inline constexpr uint64_t kDefaultCatchUpNs = 20'000'000;

struct PacingPlan {
    double pps = 0;              // 0: unlimited (recorded: the mean rate of `gaps`)
    // recorded: the gaps of `gaps` in turn (a replayed capture's timing, scaled)
    enum class Kind { cbr, burst, poisson, recorded } kind = Kind::cbr;
    const std::vector<double>* gaps = nullptr;  // recorded: ns from each departure to the next
    uint32_t burst = 1;          // frames per burst (Kind::burst)
    uint64_t seed = 1;           // Kind::poisson
    uint32_t max_burst = 64;     // the engine's burst: the least lateness it always makes up for
    uint64_t catch_up_ns = kDefaultCatchUpNs;  // the lateness made up for; 0: no more than two bursts' time
};

// What a paced worker's schedule went through; published into its counters.
struct PacingRecord {
    uint64_t skipped = 0;          // slots given up: the worker was further behind than the window
    uint64_t behind_ns = 0;        // the time those slots spanned
    uint64_t stalls = 0;           // times the worker fell more than kStallNs behind
    uint64_t longest_stall_ns = 0; // the furthest behind it was
    uint64_t largest_catch_up = 0; // the most frames owed at once (sent late, back to back)
};

class Pacer {
public:
    explicit Pacer(const PacingPlan& p = {})
        : p_(p), gap_(p.pps > 0 ? 1e9 / p.pps : 0), rng_(p.seed * 0x9E3779B97F4A7C15ull + 1) {
        const double burst_time = gap_ * std::max<uint32_t>(p.max_burst, p.kind == PacingPlan::Kind::burst ? p.burst : 1);
        window_ns_ = std::max(2.0 * burst_time, static_cast<double>(p.catch_up_ns));
    }
    bool limited() const { return p_.pps > 0; }
    void start(uint64_t now_ns) { next_ = static_cast<double>(now_ns); }

    // Frames due at `now` (at most `want`), taken from the schedule.
    uint32_t due(uint64_t now_ns, uint32_t want) {
        const double now = static_cast<double>(now_ns);
        if (now - next_ > static_cast<double>(kStallNs)) [[unlikely]]
            behind(now);
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
                case PacingPlan::Kind::recorded:
                    ++n;
                    next_ += recorded_gap();
                    break;
            }
        }
        if (stalled_ && next_ > now) stalled_ = false;  // caught up: the next stall is a new one
        return n;
    }
    // When the next frame is due (ns on the caller's clock).
    uint64_t next_due() const { return static_cast<uint64_t>(next_); }
    // When the n-th next frame is due (cbr: the schedule is exact; other patterns: on average).
    uint64_t nth_due(uint32_t n) const { return static_cast<uint64_t>(next_ + (n ? n - 1 : 0) * gap_); }
    const PacingRecord& record() const { return rec_; }
    // Bumped whenever the record changes (rarely: only behind schedule), so a worker publishes
    // it only then.
    uint64_t record_version() const { return version_; }

private:
    // Behind the schedule by more than a stall: count it, and give up what lies beyond the
    // catch-up window.
    void behind(double now) {
        const double late = now - next_;
        if (!stalled_) {
            stalled_ = true;
            ++rec_.stalls;
        }
        rec_.longest_stall_ns = std::max(rec_.longest_stall_ns, static_cast<uint64_t>(late));
        if (late > window_ns_) skip_to(now - window_ns_);
        // What is owed now leaves back to back: on average one frame per gap of lateness.
        const auto owed = static_cast<uint64_t>((now - next_) / gap_) + 1;
        rec_.largest_catch_up = std::max(rec_.largest_catch_up, owed);
        ++version_;
    }
    void skip_to(double t) {
        rec_.behind_ns += static_cast<uint64_t>(t - next_);
        if (p_.kind == PacingPlan::Kind::cbr) {
            const double k = std::ceil((t - next_) / gap_);
            rec_.skipped += static_cast<uint64_t>(k);
            next_ += k * gap_;
            return;
        }
        while (next_ < t) {  // the other patterns: slot by slot (rare: only after a long stall)
            ++rec_.skipped;
            if (p_.kind == PacingPlan::Kind::poisson) {
                next_ += exponential_gap();
            } else if (p_.kind == PacingPlan::Kind::recorded) {
                next_ += recorded_gap();
            } else if (++in_burst_ == p_.burst) {
                in_burst_ = 0;
                next_ += gap_ * p_.burst;
            }
        }
    }
    double recorded_gap() {
        const double g = (*p_.gaps)[gap_at_];
        if (++gap_at_ == p_.gaps->size()) gap_at_ = 0;
        return g;
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
    double window_ns_ = 0;  // lateness made up for
    double next_ = 0;
    uint32_t in_burst_ = 0;
    size_t gap_at_ = 0;
    uint64_t rng_;
    bool stalled_ = false;
    PacingRecord rec_;
    uint64_t version_ = 0;
};

}  // namespace lr::worker
