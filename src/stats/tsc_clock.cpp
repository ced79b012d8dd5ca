#include "stats/tsc_clock.h"

#include <cstdlib>
#include <fstream>
#include <thread>

namespace lr::stats {
namespace {

#ifdef LR_HAVE_TSC
// One (tick, ns) pair, taken where the two TSC reads around the clock read are closest.
struct Pair {
    uint64_t tick, ns;
};
Pair sample() {
    Pair best{};
    uint64_t window = ~uint64_t(0);
    for (int i = 0; i < 16; ++i) {
        const uint64_t a = __rdtsc();
        const uint64_t n = now_ns();
        const uint64_t b = __rdtsc();
        if (b - a < window) {
            window = b - a;
            best = {a + (b - a) / 2, n};
        }
    }
    return best;
}
#endif

TscRate calibrate() {
    TscRate r;
    if (const char* e = std::getenv("LINERATE_CLOCK"); e && std::string(e) == "monotonic") {
        r.why = "LINERATE_CLOCK=monotonic";
        return r;
    }
#ifdef LR_HAVE_TSC
    std::string cs;
    std::ifstream("/sys/devices/system/clocksource/clocksource0/current_clocksource") >> cs;
    if (cs != "tsc") {
        r.why = "the kernel's clocksource is " + (cs.empty() ? std::string("unknown") : cs) + ", not tsc";
        return r;
    }
    const Pair p0 = sample();
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    const Pair p1 = sample();
    if (p1.tick <= p0.tick || p1.ns <= p0.ns) {
        r.why = "the TSC did not advance";
        return r;
    }
    const uint64_t dt = p1.tick - p0.tick, dn = p1.ns - p0.ns;
    r.mult = static_cast<uint64_t>((static_cast<unsigned __int128>(dn) << 32) / dt);
    r.anchor_ticks = dt * 1'000'000 / dn;  // 1 ms
    // Sanity: 100 MHz .. 10 GHz.
    if (r.anchor_ticks < 100'000 || r.anchor_ticks > 10'000'000) {
        r.why = "implausible TSC rate";
        r.mult = 0;
        return r;
    }
    r.usable = true;
#else
    r.why = "no TSC on this architecture";
#endif
    return r;
}

}  // namespace

const TscRate& tsc_rate() {
    static const TscRate r = calibrate();
    return r;
}

std::string clock_source_name() {
    const TscRate& r = tsc_rate();
    if (r.usable) return "TSC re-anchored to CLOCK_MONOTONIC every 1 ms";
    return "CLOCK_MONOTONIC (TSC not used: " + r.why + ")";
}

}  // namespace lr::stats
