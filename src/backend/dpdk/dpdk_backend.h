// The DPDK backend: EAL arguments pass through; any PMD (physical NICs, net_null, net_ring,
// net_af_xdp, net_af_packet, net_pcap).
#pragma once
#include <memory>

#include "backend/backend.h"

namespace lr::dpdk {

std::unique_ptr<backend::Backend> make_dpdk_backend();

}  // namespace lr::dpdk
