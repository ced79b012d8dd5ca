// The plain-kernel backend: one AF_XDP socket per queue (libxdp), linerate's own XDP
// receive program (bpf/xdp_rx.bpf.c) attached with a bpf_link. No DPDK, no hugepages.
#pragma once
#include <memory>

#include "backend/backend.h"

namespace lr::afxdp {

std::unique_ptr<backend::Backend> make_afxdp_backend();

}  // namespace lr::afxdp
