#include "backend/afxdp/xdp_prog.h"

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <cerrno>
#include <cstring>
#include <fmt/format.h>
#include <linux/if_link.h>
#include <unistd.h>
#include <vector>

#include "util/error.h"
#include "xdp_rx.skel.h"

namespace lr::afxdp {

static_assert(sizeof(lr_xdp_qstats) == 32, "lr_xdp_qstats layout is shared with bpf/xdp_rx.bpf.c");
static_assert(LR_MAX_QUEUES == 64, "XSKMAP size is shared with bpf/xdp_rx.bpf.c");

const char* xdp_mode_str(XdpMode m) {
    switch (m) {
        case XdpMode::auto_mode: return "auto";
        case XdpMode::native: return "native";
        case XdpMode::skb: return "skb";
    }
    return "?";
}

XdpMode parse_xdp_mode(const std::string& s) {
    if (s == "auto") return XdpMode::auto_mode;
    if (s == "native" || s == "drv") return XdpMode::native;
    if (s == "skb" || s == "generic") return XdpMode::skb;
    throw UsageError(fmt::format("invalid --xdp-mode \"{}\": expected auto, native or skb", s));
}

XdpRxProgram::XdpRxProgram(const RxMatch& m) {
    skel_ = lr_xdp_rx__open();
    if (!skel_) throw EnvError(fmt::format("couldn't open the XDP receive program: {}", std::strerror(errno)));
    apply_match(skel_->rodata, m);
    if (const int err = lr_xdp_rx__load(skel_); err != 0) {
        lr_xdp_rx__destroy(skel_);
        skel_ = nullptr;
        throw EnvError(fmt::format("couldn't load the XDP receive program into the kernel: {} (needs root or "
                                   "CAP_BPF+CAP_NET_ADMIN; see `linerate probe`)",
                                   std::strerror(-err)));
    }
}

XdpRxProgram::~XdpRxProgram() {
    if (link_fd_ >= 0) close(link_fd_);  // detaches
    if (skel_) lr_xdp_rx__destroy(skel_);
}

uint32_t attached_xdp_prog_id(unsigned ifindex) {
    bpf_xdp_query_opts q{};
    q.sz = sizeof(q);
    if (bpf_xdp_query(static_cast<int>(ifindex), 0, &q) != 0) return 0;
    if (q.prog_id) return q.prog_id;
    if (q.drv_prog_id) return q.drv_prog_id;
    if (q.skb_prog_id) return q.skb_prog_id;
    return q.hw_prog_id;
}

int attach_xdp_link(int prog_fd, const std::string& ifname, unsigned ifindex, XdpMode mode, XdpMode& obtained) {
    if (const uint32_t id = attached_xdp_prog_id(ifindex))
        throw EnvError(fmt::format("couldn't attach XDP program to {}: another XDP program (id {}) is attached. "
                                   "linerate never detaches a program it did not attach; remove it yourself "
                                   "(ip link set dev {} xdp off) if nothing uses it",
                                   ifname, id, ifname));
    std::vector<XdpMode> tries;
    if (mode == XdpMode::auto_mode) tries = {XdpMode::native, XdpMode::skb};
    else tries = {mode};
    int err = 0;
    for (XdpMode m : tries) {
        bpf_link_create_opts o{};
        o.sz = sizeof(o);
        o.flags = m == XdpMode::native ? XDP_FLAGS_DRV_MODE : XDP_FLAGS_SKB_MODE;
        const int fd = bpf_link_create(prog_fd, static_cast<int>(ifindex), BPF_XDP, &o);
        if (fd >= 0) {
            obtained = m;
            return fd;
        }
        err = errno;
    }
    throw EnvError(fmt::format("couldn't attach XDP program to {} in {} mode: {}", ifname, xdp_mode_str(mode),
                               std::strerror(err)));
}

void XdpRxProgram::attach(const std::string& ifname, unsigned ifindex, XdpMode mode) {
    link_fd_ = attach_xdp_link(prog_fd(), ifname, ifindex, mode, mode_);
}

void XdpRxProgram::add_socket(uint32_t q, int xsk_fd) {
    if (q >= LR_MAX_QUEUES) throw UsageError(fmt::format("queue {} is beyond linerate's limit of {}", q, LR_MAX_QUEUES));
    if (bpf_map__update_elem(skel_->maps.xsks, &q, sizeof q, &xsk_fd, sizeof xsk_fd, 0) != 0)
        throw EnvError(fmt::format("couldn't register the AF_XDP socket of queue {}: {}", q, std::strerror(errno)));
}

uint32_t prog_id_of(int prog_fd) {
    bpf_prog_info info{};
    uint32_t len = sizeof(info);
    return bpf_obj_get_info_by_fd(prog_fd, &info, &len) == 0 ? info.id : 0;
}

std::vector<uint8_t> lookup_percpu_raw(const bpf_map* map, uint32_t key, size_t value_size) {
    const int ncpu = libbpf_num_possible_cpus();
    if (ncpu <= 0) return {};
    std::vector<uint8_t> v(static_cast<size_t>(ncpu) * value_size);
    if (bpf_map__lookup_elem(map, &key, sizeof key, v.data(), v.size(), 0) != 0) return {};
    return v;
}

lr_xdp_qstats XdpRxProgram::queue_stats(uint32_t q) const {
    lr_xdp_qstats sum{};
    for (const auto& c : lookup_percpu<lr_xdp_qstats>(skel_->maps.qstats, q)) {
        sum.received += c.received;
        sum.redirected += c.redirected;
        sum.passed += c.passed;
        sum.redirect_failed += c.redirect_failed;
    }
    return sum;
}

int XdpRxProgram::prog_fd() const { return bpf_program__fd(skel_->progs.lr_xdp_rx); }

uint32_t XdpRxProgram::prog_id() const { return prog_id_of(prog_fd()); }

}  // namespace lr::afxdp
