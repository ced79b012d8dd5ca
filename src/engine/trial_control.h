// A trial that a controller steers while it runs (`linerate serve`, OTG's flow_transmit): its
// streams start, pause and stop when told (worker::FlowGates), its TX phase lasts until the
// controller ends it (then the receivers drain as in any trial), and every `live_period_s` the
// control thread hands the sink its counters and each stream's counts (Sink::live).
#pragma once
#include <atomic>
#include <memory>

#include "worker/flow_gates.h"

namespace lr::engine {

struct TrialControl {
    explicit TrialControl(size_t streams) : gates(std::make_shared<worker::FlowGates>(streams)) {}
    std::shared_ptr<worker::FlowGates> gates;  // one per stream of the mix
    std::atomic<bool> end_tx{false};           // raised by the controller: the TX phase is over
    double live_period_s = 0.05;
};

}  // namespace lr::engine
