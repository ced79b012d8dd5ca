// The plain-kernel backend: one AF_XDP socket per queue (libxdp), linerate's own XDP
// receive program (bpf/xdp_rx.bpf.c) attached with a bpf_link. No DPDK, no hugepages.
#pragma once
#include <memory>

#include <vector>

#include "backend/backend.h"
#include "util/privileges.h"

namespace lr::afxdp {

std::unique_ptr<backend::Backend> make_afxdp_backend();

// The capabilities the backend needs to set up (checked before anything is touched; `probe`
// lists them). CAP_IPC_LOCK is not among them: it is needed only when RLIMIT_MEMLOCK is below
// the UMEM's size, and registering the UMEM says so.
std::vector<util::CapNeed> afxdp_capabilities();

}  // namespace lr::afxdp
