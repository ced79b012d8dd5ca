// The AF_XDP socket: UMEM registration, socket creation in the requested copy mode, and the
// state that outlives a trial. The hot loops are the queue engines over xsk_ops.h.
#include "backend/afxdp/xsk_socket.h"

#include <linux/bpf.h>
#include <net/if.h>

#include "backend/afxdp/xdp_prog.h"

#include <cerrno>
#include <chrono>
#include <cstring>
#include <fmt/format.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <linux/capability.h>
#include <sys/resource.h>
#include <thread>
#include <xdp/xsk.h>

#include "util/error.h"
#include "util/privileges.h"

static_assert(LR_XDP_HEADROOM == XDP_PACKET_HEADROOM, "bpf/lr_shared.h names the kernel's XDP headroom");

namespace lr::afxdp {

struct XskSocket::Rings {
    xsk_ring_prod fill{}, tx{};
    xsk_ring_cons comp{}, rx{};
};

XskSocket::XskSocket(const XskConfig& cfg) : cfg_(cfg), r_(new Rings) {
    umem_size_ = static_cast<size_t>(cfg.frames) * kChunk;
    umem_area_ = mmap(nullptr, umem_size_, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
    if (umem_area_ == MAP_FAILED) {
        umem_area_ = nullptr;
        delete r_;
        throw EnvError(fmt::format("couldn't map {} MiB of UMEM for {} queue {}: {}", umem_size_ >> 20, cfg.ifname,
                                   cfg.queue, std::strerror(errno)));
    }
    // A queue whose last socket was just closed (a run that ended a moment before, on this
    // port) stays bound until the kernel's deferred release of that socket's buffer pool has
    // run: bind() says EBUSY meanwhile. So EBUSY is tried again, with the UMEM registered anew
    // each time, for up to kBusyTries x kBusyWait (a second) before it is reported; a queue
    // that another live socket holds is reported after that second.
    constexpr int kBusyTries = 50;
    constexpr auto kBusyWait = std::chrono::milliseconds(20);
    int err = 0;
    for (int attempt = 1;; ++attempt) {
        register_umem(cfg);
        err = create_socket(cfg);
        if (err != -EBUSY || attempt == kBusyTries) break;
        xsk_umem__delete(umem_);
        umem_ = nullptr;
        std::this_thread::sleep_for(kBusyWait);
    }
    if (err) {
        xsk_umem__delete(umem_);
        munmap(umem_area_, umem_size_);
        delete r_;
        std::string hint = cfg.mode == spec::XskMode::zero_copy
                               ? " (the driver has no zero-copy AF_XDP support here; use --xsk-mode auto or copy)"
                               : "";
        if (err == -EBUSY) {
            const unsigned ifindex = if_nametoindex(cfg.ifname.c_str());
            const uint32_t id = ifindex ? attached_xdp_prog_id(ifindex) : 0;
            hint = fmt::format(" (another AF_XDP socket is bound to this queue: another linerate, or another AF_XDP "
                               "program, is running on {}{})",
                               cfg.ifname, id ? fmt::format("; XDP program id {} is attached to it", id) : "");
        }
        throw EnvError(fmt::format("couldn't create the {} AF_XDP socket on {} queue {}: {}{}",
                                   spec::to_string(cfg.mode), cfg.ifname, cfg.queue, std::strerror(-err), hint));
    }
    free_tx_.reserve(cfg.tx_chunks);
    for (uint32_t i = cfg.tx_chunks; i-- > 0;) free_tx_.push_back(static_cast<uint64_t>(i) * kChunk);
    chunk_trial_.assign(cfg.frames, 0);
    chunk_len_.assign(cfg.frames, 0);
    chunk_tag_.assign(cfg.frames, 0);
    if (cfg.rx) {
        // Hand chunks to the kernel now, before the XDP program is attached, so the first
        // frames never find an empty fill ring.
        const uint32_t n = std::min(cfg.frames - cfg.tx_chunks, 2 * cfg.ring);
        uint32_t idx = 0;
        const uint32_t got = xsk_ring_prod__reserve(&r_->fill, n, &idx);
        for (uint32_t i = 0; i < got; ++i)
            *xsk_ring_prod__fill_addr(&r_->fill, idx + i) = static_cast<uint64_t>(cfg.tx_chunks + i) * kChunk;
        xsk_ring_prod__submit(&r_->fill, got);
    }
}

XskSocket::~XskSocket() {
    if (xsk_) xsk_socket__delete(xsk_);
    if (umem_) xsk_umem__delete(umem_);
    if (umem_area_) munmap(umem_area_, umem_size_);
    delete r_;
}

void XskSocket::register_umem(const XskConfig& cfg) {
    xsk_umem_config uc{};
    uc.fill_size = 2 * cfg.ring;
    uc.comp_size = 2 * cfg.ring;
    uc.frame_size = kChunk;
    uc.frame_headroom = 0;
    if (int err = xsk_umem__create(&umem_, umem_area_, umem_size_, &r_->fill, &r_->comp, &uc); err) {
        umem_ = nullptr;
        munmap(umem_area_, umem_size_);
        umem_area_ = nullptr;
        delete r_;
        r_ = nullptr;
        rlimit ml{};
        getrlimit(RLIMIT_MEMLOCK, &ml);
        // The kernel pins the UMEM against RLIMIT_MEMLOCK unless the process holds CAP_IPC_LOCK.
        if (err == -ENOBUFS || err == -ENOMEM || err == -EPERM)
            if (ml.rlim_cur != RLIM_INFINITY && !util::has_capability(CAP_IPC_LOCK))
                throw EnvError(fmt::format(
                    "couldn't register {} MiB of UMEM for {} queue {}: {}; RLIMIT_MEMLOCK is {} KiB and this process "
                    "lacks CAP_IPC_LOCK: raise the limit (ulimit -l, prlimit --memlock, LimitMEMLOCK= in a systemd "
                    "unit), grant CAP_IPC_LOCK, or use fewer --descriptors",
                    umem_size_ >> 20, cfg.ifname, cfg.queue, std::strerror(-err), ml.rlim_cur >> 10));
        throw EnvError(fmt::format("couldn't register UMEM for {} queue {}: {}", cfg.ifname, cfg.queue,
                                   std::strerror(-err)));
    }
}

int XskSocket::create_socket(const XskConfig& cfg) {
    auto create = [&](uint16_t bind) {
        xsk_socket_config sc{};
        sc.rx_size = cfg.rx ? cfg.ring : 0;
        sc.tx_size = cfg.tx ? cfg.ring : 0;
        sc.libbpf_flags = XSK_LIBXDP_FLAGS__INHIBIT_PROG_LOAD;  // our own program, our own XSKMAP
        sc.bind_flags = static_cast<uint16_t>(bind | XDP_USE_NEED_WAKEUP);
        return xsk_socket__create(&xsk_, cfg.ifname.c_str(), cfg.queue, umem_, cfg.rx ? &r_->rx : nullptr,
                                  cfg.tx ? &r_->tx : nullptr, &sc);
    };
    if (cfg.mode == spec::XskMode::copy) return create(XDP_COPY);
    int err = create(XDP_ZEROCOPY);
    zero_copy_ = err == 0;
    if (err && cfg.mode == spec::XskMode::auto_mode) err = create(XDP_COPY);
    return err;
}

int XskSocket::fd() const { return xsk_socket__fd(xsk_); }

xdp_statistics XskSocket::stats() const {
    xdp_statistics s{};
    socklen_t len = sizeof(s);
    if (getsockopt(fd(), SOL_XDP, XDP_STATISTICS, &s, &len) != 0) s = {};
    return s;
}

xsk_ring_prod& XskSocket::fill_ring() { return r_->fill; }
xsk_ring_prod& XskSocket::tx_ring() { return r_->tx; }
xsk_ring_cons& XskSocket::comp_ring() { return r_->comp; }
xsk_ring_cons& XskSocket::rx_ring() { return r_->rx; }

void XskSocket::reclaim_stale() {
    uint32_t idx = 0;
    const uint32_t n = xsk_ring_cons__peek(&r_->comp, 2 * cfg_.ring, &idx);
    for (uint32_t i = 0; i < n; ++i) free_tx_.push_back(*xsk_ring_cons__comp_addr(&r_->comp, idx + i));
    if (n) xsk_ring_cons__release(&r_->comp, n);
}

void XskSocket::load_templates(const std::vector<std::vector<uint8_t>>& frames) {
    if (frames == loaded_ || frames.empty()) return;
    // Chunks the kernel has not completed may still be read by it: wait for them first.
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(1);
    while (free_tx_.size() < cfg_.tx_chunks && std::chrono::steady_clock::now() < deadline) {
        reclaim_stale();
        if (xsk_ring_prod__needs_wakeup(&r_->tx)) sendto(fd(), nullptr, 0, MSG_DONTWAIT, nullptr, 0);
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    if (free_tx_.size() < cfg_.tx_chunks)
        throw EnvError(fmt::format("{} queue {}: the kernel never completed {} frames sent earlier; cannot load new "
                                   "frames",
                                   cfg_.ifname, cfg_.queue, cfg_.tx_chunks - free_tx_.size()));
    auto* base = umem();
    for (uint32_t i = 0; i < cfg_.tx_chunks; ++i) {
        const auto& f = frames[i % frames.size()];
        std::memcpy(base + static_cast<size_t>(i) * kChunk, f.data(), f.size());
    }
    loaded_ = frames;
}

uint64_t XskSocket::flush_rx() {
    if (!cfg_.rx) return 0;
    uint64_t total = 0;
    for (;;) {
        uint32_t idx = 0, fidx = 0;
        const uint32_t n = xsk_ring_cons__peek(&r_->rx, kMaxBurst, &idx);
        if (n == 0) break;
        if (xsk_ring_prod__reserve(&r_->fill, n, &fidx) != n) break;  // cannot happen: we recycle what we take
        for (uint32_t i = 0; i < n; ++i)
            *xsk_ring_prod__fill_addr(&r_->fill, fidx + i) =
                xsk_umem__extract_addr(xsk_ring_cons__rx_desc(&r_->rx, idx + i)->addr);
        xsk_ring_prod__submit(&r_->fill, n);
        xsk_ring_cons__release(&r_->rx, n);
        total += n;
    }
    return total;
}

}  // namespace lr::afxdp
