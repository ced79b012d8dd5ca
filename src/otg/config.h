// An OTG Config (POST /config, as snappi 1.62.0 sends it) read into linerate's terms: ports,
// their layer 1 settings and captures, and each flow as a complete linerate stream. Every
// model default applies to what the request leaves out; what linerate cannot honour is
// refused, every refusal at once, each at its JSON path (docs/otg-fields.md).
#pragma once
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "otg/otg_error.h"
#include "spec/stream_spec.h"

namespace lr::otg {

// The most distinct packets of one flow (a frame, and a signed flow id, each): a flow's
// fields' patterns must repeat within this many packets. The whole config's flows together
// stay within packet::kMaxSignedFlows.
inline constexpr uint64_t kMaxFlowFrames = 4096;

struct OtgPort {
    std::string name, location;
};

struct OtgLayer1 {
    std::string name;
    std::vector<std::string> ports;
    double speed_bps = 0;  // L1 bits/s; 0: not given
    unsigned mtu = 0;      // 0: not given (the model's default is 1500)
    std::optional<bool> promiscuous;
    std::string path;  // "layer1[0]"
};

struct OtgCapture {
    std::string name;
    std::vector<std::string> ports;
    std::string path;  // "captures[0]"
};

// A time given in bytes (at the sending port's speed), resolved once the speed is known.
struct ByteTime {
    double bytes = 0;
    std::string path;  // "flows[0].duration.fixed_packets.delay.bytes"
};

struct OtgFlow {
    std::string name, path;             // path: "flows[3]"
    std::string tx_port;                // OTG port name
    std::vector<std::string> rx_ports;  // OTG port names (rx_names; the deprecated rx_name as one)
    // Complete but for what resolve_counts_and_rates() fills in: name, frame and flow_frames
    // (one per distinct packet, in OTG's order), size, rate (unless a percentage), count,
    // bursts, delay, pattern cbr. `ports` is empty: the server names the tx port's location.
    spec::StreamSpec stream;
    std::optional<double> rate_percent;   // rate.percentage: of the tx port's speed
    std::optional<double> fixed_seconds;  // duration.fixed_seconds: a count once the rate is known
    std::optional<ByteTime> delay_bytes;            // the start delay, in bytes
    std::optional<ByteTime> inter_burst_gap_bytes;  // the gap between bursts, in bytes
    bool metrics = false, loss = false, timestamps = false, latency = false;  // what metrics it asked for
    bool dst_mac_auto = false;  // ethernet.dst auto (also when absent: the model's default): the server fills it in
};

struct OtgConfig {
    nlohmann::json as_set;  // the body as received (GET /config echoes it)
    std::vector<OtgPort> ports;
    std::vector<OtgLayer1> layer1;
    std::vector<OtgCapture> captures;
    std::vector<OtgFlow> flows;
    std::vector<std::string> warnings;  // for the response's "warnings"
};

// Reads a Config body. Throws OtgError (HTTP 400) listing every refusal.
OtgConfig parse_config(const nlohmann::json& body);

// The tx port's speed in L1 bits/s (its layer1 speed, the link's, or --line-rate), or none
// when unknown.
using PortSpeed = std::function<std::optional<double>(const std::string& port_name)>;

// What needs the ports' speeds: rate percentages become L1 bit rates, fixed_seconds a count
// (llround(pps x seconds) at the flow's mean frame size, at least 1 frame), delays and gaps in
// bytes times. Throws OtgError naming each field whose port's speed is unknown.
void resolve_counts_and_rates(OtgConfig& config, const PortSpeed& port_speed_l1_bps);

}  // namespace lr::otg
