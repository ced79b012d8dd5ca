// Where a controller finds a port: `ENGINE-HOST:PORT;LOCAL-PORT` in the port's OTG location
// (an engine's `linerate serve` address, then that engine's own name for the port), or a name
// that a location map file turns into one:
//
//   location_map:
//     - location: p1                          # what scripts write as ports[].location
//       endpoint: "engine-a:8443;ens1f0"      # the engine's address ; its port
#pragma once
#include <map>
#include <optional>
#include <string>

namespace lr::otg {

struct Endpoint {
    std::string host;  // a name or address (IPv6 without brackets)
    int port = 0;
    std::string local;  // the engine's port: an interface (afxdp) or a DPDK device
    std::string engine() const;  // "host:port" ("[v6]:port"): the engine's name in messages and labels
};

// "host:port;local" or "[v6]:port;local". None for anything else (the caller says why).
std::optional<Endpoint> parse_endpoint(const std::string& text);

class LocationMap {
public:
    LocationMap() = default;
    // Reads a YAML location map. Throws UsageError naming the file and the entry.
    static LocationMap load(const std::string& path);
    // A location's endpoint: the map's entry for it, else the location itself parsed. Throws
    // std::invalid_argument saying what a location must be.
    Endpoint resolve(const std::string& location) const;
    const std::string& path() const { return path_; }
    size_t size() const { return entries_.size(); }

private:
    std::string path_;
    std::map<std::string, Endpoint> entries_;
};

}  // namespace lr::otg
