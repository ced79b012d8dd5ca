// linerate's XDP reflector (bpf/xdp_reflect.bpf.c): linerate test frames go straight back
// out of the interface (XDP_TX) with addresses and ports swapped. Attached with a bpf_link.
#pragma once
#include <cstdint>
#include <optional>
#include <string>

#include "backend/afxdp/xdp_prog.h"

struct lr_xdp_reflect;

namespace lr::afxdp {

class XdpReflector {
public:
    // Reflects frames with a valid signature of any run, or only of run `nonce` when given.
    // ifindex 0: loaded, not attached (tests run it with bpf_prog_test_run).
    XdpReflector(const RxMatch& m, const std::string& ifname, unsigned ifindex, XdpMode mode,
                 std::optional<uint32_t> nonce = std::nullopt);
    ~XdpReflector();
    XdpReflector(const XdpReflector&) = delete;
    XdpReflector& operator=(const XdpReflector&) = delete;
    XdpMode attached_mode() const { return mode_; }
    // Summed over CPUs and the interface's queues: redirected = reflected.
    lr_xdp_qstats stats(unsigned queues) const;
    uint32_t prog_id() const;
    int prog_fd() const;

private:
    lr_xdp_reflect* skel_ = nullptr;
    int link_fd_ = -1;
    XdpMode mode_ = XdpMode::auto_mode;
};

}  // namespace lr::afxdp
