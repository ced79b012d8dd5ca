// `linerate impair`: the path it emulates between two ports, as the options give it
// (spec/impair_options.cpp) and every forwarding worker's impairer runs it (worker/impairer.h).
#pragma once
#include <bit>
#include <cstdint>
#include <string>

namespace lr::spec {

enum class JitterDist : uint8_t { normal, uniform, pareto };

// Jitter is clamped at this many times its scale: a normal sample never gets there, a Pareto
// one about once in a million frames.
inline constexpr double kJitterClamp = 100.0;

// What one direction does to the frames it carries, fixed before the run.
struct ImpairPlan {
    uint64_t delay_ns = 0;
    uint64_t jitter_ns = 0;  // normal: the standard deviation; uniform: the half-width; pareto: the scale
    JitterDist dist = JitterDist::normal;
    bool jitter_reorders = false;  // jitter may reorder frames; else each leaves no sooner than the one before
    double loss = 0;               // Bernoulli: the probability of losing a frame (when !gilbert)
    bool gilbert = false;          // Gilbert-Elliott: a good and a bad state
    double ge_p = 0, ge_r = 1;     // P(good -> bad), P(bad -> good), per frame
    double ge_loss_bad = 1, ge_loss_good = 0;  // the loss probability in each state
    double duplicate = 0;          // probability that a frame is sent twice
    double reorder = 0;            // probability that a candidate frame skips the delay
    uint32_t reorder_gap = 1;      // every Nth frame is a candidate
    double corrupt = 0;            // probability that a frame has one payload bit flipped
    double rate_bps = 0;           // the link's rate in bits/s (0: none): L1 (preamble, SFD and gap counted)...
    bool rate_l2 = false;          // ...or L2 (the frames alone)
    double rate_pps = 0;           // or in frames/s (0: none)
    uint32_t limit = 100000;       // frames held at most: the delay line and the link's queue
    uint32_t slot_bytes = 2048;    // the largest frame held (bytes, without FCS)
    uint64_t seed = 1;
    // The longest delay a frame may get: the delay and the jitter's reach (its half-width when
    // uniform, its clamp otherwise): the timing wheel's horizon.
    uint64_t horizon_ns() const {
        const double reach = dist == JitterDist::uniform ? 1.0 : kJitterClamp;
        return delay_ns + static_cast<uint64_t>(reach * static_cast<double>(jitter_ns));
    }
    // The timing wheel: buckets of 2^wheel_shift() ns (about a microsecond, coarser for long
    // horizons: at most 2^20 of them), a power of two of them spanning more than the horizon.
    unsigned wheel_shift() const {
        unsigned shift = 10;
        while ((horizon_ns() >> shift) > (uint64_t{1} << 20)) ++shift;
        return shift;
    }
    uint64_t wheel_buckets() const { return std::bit_ceil((horizon_ns() >> wheel_shift()) + 2); }
    // The memory one direction's impairer holds: `limit` slots of `slot_bytes` and their
    // bookkeeping (kSlotBookkeeping bytes each), and the wheel's two lists' ends per bucket.
    static constexpr uint64_t kSlotBookkeeping = 41;
    uint64_t memory_bytes() const {
        return uint64_t{limit} * (slot_bytes + kSlotBookkeeping) + wheel_buckets() * 2 * sizeof(uint32_t);
    }
    // A bound on the mean delay (the delay and one jitter scale: a Pareto jitter's mean is
    // 0.24 of its scale above the median): at a rate R, R times this is at least the frames
    // the path holds on average, which --limit must cover.
    uint64_t mean_delay_bound_ns() const { return delay_ns + jitter_ns; }
    // The mean loss ratio the plan asks for (Gilbert-Elliott: weighted by the states' shares).
    double mean_loss() const {
        if (!gilbert) return loss;
        const double bad = ge_p + ge_r > 0 ? ge_p / (ge_p + ge_r) : 0;
        return bad * ge_loss_bad + (1 - bad) * ge_loss_good;
    }
};

enum class ImpairDirection : uint8_t { both, a_to_b, b_to_a };

struct ImpairSpec {
    std::string a, b;  // --between A,B: interfaces (afxdp) or DPDK ports
    uint16_t queues = 1;
    ImpairDirection direction = ImpairDirection::both;
    ImpairPlan plan;   // slot_bytes: set from the ports' largest frame when the spec is built
    std::string loss_typed, rate_typed;  // as given, for messages
    bool limit_given = false;
};

}  // namespace lr::spec
