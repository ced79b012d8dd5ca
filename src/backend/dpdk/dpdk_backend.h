// The DPDK backend: EAL arguments pass through; any PMD (physical NICs, net_null,
// net_ring, net_af_xdp, net_af_packet, net_pcap).
#pragma once
#include <memory>

#include "engine/backend.h"

namespace lr::dpdk {

std::unique_ptr<engine::Backend> make_dpdk_backend();

// The EAL argument list linerate will use: the user's arguments plus safe defaults
// (--in-memory, --no-telemetry, an lcore map with one lcore per worker) for every
// default the user did not override. Exposed for tests.
std::vector<std::string> effective_eal_args(const std::vector<std::string>& user, unsigned workers,
                                            const std::vector<int>& cpus);

}  // namespace lr::dpdk
