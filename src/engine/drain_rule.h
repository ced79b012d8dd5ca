#pragma once
// When a drain is over. Once the senders stop, frames may still be on their way; the drain ends
// when everything sent has arrived, when nothing new came for a quiet window, or when --drain
// runs out. A trial and an OTG flow use this one rule.

#include <algorithm>

namespace lr::engine {

struct DrainRule {
    double start_s;  // when the senders stopped
    double limit_s;  // --drain
    double window_s;  // the quiet window

    // The quiet window: 100 ms, or twice the worst latency seen, whichever is longer; never
    // longer than --drain itself.
    DrainRule(double start, double limit, double max_latency_s)
        : start_s(start), limit_s(limit), window_s(std::min(std::max(0.1, 2 * max_latency_s), limit)) {}

    // Nothing new arrived for the window, counted from the last arrival (a receiver that waited
    // for its core is still delivering), never from before the stop.
    bool quiet(double now, double last_rx_change_s) const {
        return now - std::max(last_rx_change_s, start_s) >= window_s;
    }
    bool expired(double now) const { return now - start_s >= limit_s; }
};

}  // namespace lr::engine
