// What this host and one interface can do for linerate, and exactly what is missing:
// capabilities, bpffs, memlock, XDP attach modes, AF_XDP socket modes, DPDK and hugepages,
// the timestamp clock. Each check loads or binds for real and undoes it at once.
#pragma once
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace lr::host {

struct Check {
    std::string name;
    bool ok = false;
    std::string detail;
    bool needed_by_afxdp = true;  // a failed check makes the afxdp backend unusable
};

struct ProbeReport {
    std::string iface, kernel, driver;
    unsigned rx_queues = 0, tx_queues = 0, mtu = 0;
    std::vector<Check> checks;
    nlohmann::json json;  // every finding, for --json
    bool afxdp_usable() const;
};

// Throws UsageError when the interface does not exist.
ProbeReport probe_interface(const std::string& iface);

}  // namespace lr::host
