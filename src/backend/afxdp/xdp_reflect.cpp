#include "backend/afxdp/xdp_reflect.h"

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <cerrno>
#include <cstring>
#include <fmt/format.h>
#include <unistd.h>
#include <vector>

#include "util/error.h"
#include "xdp_reflect.skel.h"

namespace lr::afxdp {

XdpReflector::XdpReflector(const RxMatch& m, const std::string& ifname, unsigned ifindex, XdpMode mode,
                           std::optional<uint32_t> nonce) {
    skel_ = lr_xdp_reflect__open();
    if (!skel_) throw EnvError(fmt::format("couldn't open the XDP reflector: {}", std::strerror(errno)));
    apply_match(skel_->rodata, m);
    skel_->rodata->reflect_nonce = nonce ? uint64_t(*nonce) + 1 : 0;
    if (const int err = lr_xdp_reflect__load(skel_); err != 0) {
        lr_xdp_reflect__destroy(skel_);
        skel_ = nullptr;
        throw EnvError(fmt::format("couldn't load the XDP reflector: {}", std::strerror(-err)));
    }
    if (ifindex == 0) return;  // loaded, not attached: for tests (bpf_prog_test_run)
    try {
        link_fd_ = attach_xdp_link(bpf_program__fd(skel_->progs.lr_xdp_reflect), ifname, ifindex, mode, mode_);
    } catch (...) {
        lr_xdp_reflect__destroy(skel_);
        skel_ = nullptr;
        throw;
    }
}

XdpReflector::~XdpReflector() {
    if (link_fd_ >= 0) close(link_fd_);
    if (skel_) lr_xdp_reflect__destroy(skel_);
}

lr_xdp_qstats XdpReflector::stats(unsigned queues) const {
    lr_xdp_qstats sum{};
    for (uint32_t q = 0; q < queues && q < LR_MAX_QUEUES; ++q) {
        for (const auto& c : lookup_percpu<lr_xdp_qstats>(skel_->maps.qstats, q)) {
            sum.received += c.received;
            sum.redirected += c.redirected;
            sum.passed += c.passed;
        }
    }
    return sum;
}

int XdpReflector::prog_fd() const { return bpf_program__fd(skel_->progs.lr_xdp_reflect); }

uint32_t XdpReflector::prog_id() const { return prog_id_of(bpf_program__fd(skel_->progs.lr_xdp_reflect)); }

}  // namespace lr::afxdp
