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

XdpReflector::XdpReflector(const RxMatch& m, const std::string& ifname, unsigned ifindex, XdpMode mode) {
    skel_ = lr_xdp_reflect__open();
    if (!skel_) throw EnvError(fmt::format("couldn't open the XDP reflector: {}", std::strerror(errno)));
    apply_match(skel_->rodata, m);
    if (const int err = lr_xdp_reflect__load(skel_); err != 0) {
        lr_xdp_reflect__destroy(skel_);
        skel_ = nullptr;
        throw EnvError(fmt::format("couldn't load the XDP reflector: {}", std::strerror(-err)));
    }
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
    const int ncpu = libbpf_num_possible_cpus();
    if (ncpu <= 0) return sum;
    std::vector<lr_xdp_qstats> v(static_cast<size_t>(ncpu));
    for (uint32_t q = 0; q < queues && q < LR_MAX_QUEUES; ++q) {
        if (bpf_map__lookup_elem(skel_->maps.qstats, &q, sizeof q, v.data(), v.size() * sizeof(v[0]), 0) != 0)
            continue;
        for (const auto& c : v) {
            sum.received += c.received;
            sum.redirected += c.redirected;
            sum.passed += c.passed;
        }
    }
    return sum;
}

uint32_t XdpReflector::prog_id() const {
    bpf_prog_info info{};
    uint32_t len = sizeof(info);
    if (bpf_obj_get_info_by_fd(bpf_program__fd(skel_->progs.lr_xdp_reflect), &info, &len) != 0) return 0;
    return info.id;
}

}  // namespace lr::afxdp
