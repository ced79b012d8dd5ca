// What the OTG HTTP layer serves: one engine's traffic (TrafficService) or a controller's test
// across several engines (ControllerService). Every call throws OtgError for what it refuses.
#pragma once
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "otg/view.h"

namespace lr::otg {

class OtgService {
public:
    virtual ~OtgService() = default;
    // POST /config; returns the warnings.
    virtual std::vector<std::string> set_config(const nlohmann::json& body) = 0;
    // GET /config.
    virtual nlohmann::json config() const = 0;
    // POST /control/state; returns the warnings.
    virtual std::vector<std::string> set_state(const nlohmann::json& body) = 0;
    // The metrics' numbers now (POST /monitor/metrics).
    virtual View view() const = 0;
    // POST /monitor/capture: a pcap file.
    virtual std::string capture(const std::string& port_name) = 0;
    // GET /linerate/flows.
    virtual nlohmann::json extended_flows() const = 0;
};

}  // namespace lr::otg
