// Simulated devices under test for the throughput searches: what loss ratio a trial at a load
// sees. Used by the unit tests and by tests/bench/search_bench.cpp.
#pragma once
#include <algorithm>
#include <cstdint>
#include <random>

#include "procedures/search.h"

namespace sim {

// Forwards up to `capacity` pps and drops the rest: loss = 1 - capacity / load above it.
struct Clean {
    double capacity;
    double loss(double load) const { return load <= capacity ? 0 : 1 - capacity / load; }
};

// No loss up to `knee`, then a loss ratio that rises with the load: 10 % at twice the knee.
struct Rising {
    double knee;
    double loss(double load) const { return load <= knee ? 0 : std::min(1.0, 0.1 * (load - knee) / knee); }
};

// A clean device of `capacity` that, in `p` of its trials, also loses a few frames (0.01 %)
// below its capacity: noise a strict zero-loss goal cannot tell from overload. Seeded.
struct Noisy {
    double capacity, p;
    std::mt19937_64 rng;
    Noisy(double c, double prob, uint64_t seed) : capacity(c), p(prob), rng(seed) {}
    double loss(double load) {
        std::uniform_real_distribution<double> u(0, 1);
        const double base = load <= capacity ? 0 : 1 - capacity / load;
        return u(rng) < p ? std::max(base, 1e-4) : base;
    }
};

// A measurer over a simulated device: trials always valid, effective duration = intended.
template <class Device>
lr::procedures::Measurer measurer(Device& d) {
    return [&d](double load, double duration, const std::string&) {
        lr::procedures::TrialOutcome o;
        o.loss_ratio = d.loss(load);
        o.offered_pps = load;
        o.effective_s = duration;
        return o;
    };
}

// A measurer over a simulated device through a generator that holds at most `holds` pps: a
// trial above it is invalid and instrument-limited, having offered only what the generator
// could. `flukes` of the first trials at or below it also fall short once (a long stall).
template <class Device>
lr::procedures::Measurer limited_measurer(Device& d, double holds, int& flukes) {
    return [&d, holds, &flukes](double load, double duration, const std::string&) {
        lr::procedures::TrialOutcome o;
        o.effective_s = duration;
        if (load > holds || flukes > 0) {
            if (load <= holds) --flukes;
            o.valid = false;
            o.instrument_limited = true;
            o.offered_pps = std::min(load, holds) * 0.97;
            o.invalid_reason = "the generator offered less than asked";
            return o;
        }
        o.loss_ratio = d.loss(load);
        o.offered_pps = load;
        return o;
    };
}

}  // namespace sim
