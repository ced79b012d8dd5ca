// What the OTG metrics show of flows and ports, taken at one moment: one engine's (its
// service's lock held) or a controller's, merged from its engines'.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "otg/flow_numbers.h"

namespace lr::otg {

enum class Transmit { started, stopped, paused };
// The location a port of another engine has in this engine's session: no port of a backend.
inline constexpr const char* kElsewhere = "(another engine)";
const char* transmit_str(Transmit t);

struct FlowView {
    std::string name, tx_port, rx_port;
    Transmit transmit = Transmit::stopped;
    FlowNumbers n;
    double tx_pps = 0, rx_pps = 0, tx_l2_bps = 0, rx_l2_bps = 0, tx_l1_bps = 0, rx_l1_bps = 0;
    bool latency = false, timestamps = false;  // the flow asked for them
};
struct PortView {
    std::string name, location;
    bool link_up = false;
    bool capturing = false;
    Transmit transmit = Transmit::stopped;
    PortNumbers n;
    double tx_pps = 0, rx_pps = 0, tx_bytes_per_s = 0, rx_bytes_per_s = 0;
    double speed_bps = 0;  // 0: unknown
};
struct View {
    std::vector<FlowView> flows;
    std::vector<PortView> ports;
    int64_t realtime_minus_monotonic_ns = 0;  // turns the receive clock into ns since the epoch
};

}  // namespace lr::otg
