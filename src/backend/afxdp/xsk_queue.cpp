// AF_XDP hot loops. Per burst: reap completions, reserve, fill descriptors, submit, and kick
// only when the kernel asks (needs_wakeup). ENOBUFS/EAGAIN/EBUSY/ENETDOWN on a kick are
// transient: counted, never fatal. No allocation, lock or log per packet.
#include "backend/afxdp/xsk_queue.h"

#include <cerrno>
#include <cstring>
#include <fmt/format.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <xdp/xsk.h>

#include "engine/pacer.h"
#include "engine/idle_yield.h"
#include "engine/tx_signer.h"
#include "stats/rx_measure.h"
#include "stats/tsc_clock.h"
#include "util/error.h"

namespace lr::afxdp {

struct XskQueue::Rings {
    xsk_ring_prod fill{}, tx{};
    xsk_ring_cons comp{}, rx{};
};

const char* copy_mode_str(CopyMode m) {
    switch (m) {
        case CopyMode::auto_mode: return "auto";
        case CopyMode::copy: return "copy";
        case CopyMode::zero_copy: return "zero-copy";
    }
    return "?";
}

CopyMode parse_copy_mode(const std::string& s) {
    if (s == "auto") return CopyMode::auto_mode;
    if (s == "copy") return CopyMode::copy;
    if (s == "zero-copy" || s == "zc") return CopyMode::zero_copy;
    throw UsageError(fmt::format("invalid --xsk-mode \"{}\": expected auto, copy or zero-copy", s));
}

XskQueue::XskQueue(const XskConfig& cfg) : cfg_(cfg), r_(new Rings) {
    umem_size_ = static_cast<size_t>(cfg.frames) * kChunk;
    umem_area_ = mmap(nullptr, umem_size_, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
    if (umem_area_ == MAP_FAILED) {
        umem_area_ = nullptr;
        delete r_;
        throw EnvError(fmt::format("couldn't map {} MiB of UMEM for {} queue {}: {}", umem_size_ >> 20, cfg.ifname,
                                   cfg.queue, std::strerror(errno)));
    }
    xsk_umem_config uc{};
    uc.fill_size = 2 * cfg.ring;
    uc.comp_size = 2 * cfg.ring;
    uc.frame_size = kChunk;
    uc.frame_headroom = 0;
    if (int err = xsk_umem__create(&umem_, umem_area_, umem_size_, &r_->fill, &r_->comp, &uc); err) {
        munmap(umem_area_, umem_size_);
        delete r_;
        throw EnvError(fmt::format("couldn't register UMEM for {} queue {}: {}", cfg.ifname, cfg.queue,
                                   std::strerror(-err)));
    }
    auto create = [&](uint16_t bind) {
        xsk_socket_config sc{};
        sc.rx_size = cfg.rx ? cfg.ring : 0;
        sc.tx_size = cfg.tx ? cfg.ring : 0;
        sc.libbpf_flags = XSK_LIBXDP_FLAGS__INHIBIT_PROG_LOAD;  // our own program, our own XSKMAP
        sc.bind_flags = static_cast<uint16_t>(bind | XDP_USE_NEED_WAKEUP);
        return xsk_socket__create(&xsk_, cfg.ifname.c_str(), cfg.queue, umem_, cfg.rx ? &r_->rx : nullptr,
                                  cfg.tx ? &r_->tx : nullptr, &sc);
    };
    int err = 0;
    if (cfg.mode == CopyMode::copy) {
        err = create(XDP_COPY);
    } else {
        err = create(XDP_ZEROCOPY);
        zero_copy_ = err == 0;
        if (err && cfg.mode == CopyMode::auto_mode) err = create(XDP_COPY);
    }
    if (err) {
        xsk_umem__delete(umem_);
        munmap(umem_area_, umem_size_);
        delete r_;
        const char* hint = cfg.mode == CopyMode::zero_copy
                               ? " (the driver has no zero-copy AF_XDP support here; use --xsk-mode auto or copy)"
                               : "";
        throw EnvError(fmt::format("couldn't create the {} AF_XDP socket on {} queue {}: {}{}",
                                   copy_mode_str(cfg.mode), cfg.ifname, cfg.queue, std::strerror(-err), hint));
    }
    if (cfg.rx) {
        // Hand chunks to the kernel now, before the XDP program is attached, so the first
        // frames never find an empty fill ring.
        const uint32_t n = std::min(cfg.frames - cfg.rx_first_chunk, 2 * cfg.ring);
        uint32_t idx = 0;
        const uint32_t got = xsk_ring_prod__reserve(&r_->fill, n, &idx);
        for (uint32_t i = 0; i < got; ++i)
            *xsk_ring_prod__fill_addr(&r_->fill, idx + i) = static_cast<uint64_t>(cfg.rx_first_chunk + i) * kChunk;
        xsk_ring_prod__submit(&r_->fill, got);
    }
}

XskQueue::~XskQueue() {
    if (xsk_) xsk_socket__delete(xsk_);
    if (umem_) xsk_umem__delete(umem_);
    if (umem_area_) munmap(umem_area_, umem_size_);
    delete r_;
}

int XskQueue::fd() const { return xsk_socket__fd(xsk_); }

xdp_statistics XskQueue::stats() const {
    xdp_statistics s{};
    socklen_t len = sizeof(s);
    if (getsockopt(fd(), SOL_XDP, XDP_STATISTICS, &s, &len) != 0) s = {};
    return s;
}

void XskQueue::load_templates(const std::vector<std::vector<uint8_t>>& frames) {
    auto* base = static_cast<uint8_t*>(umem_area_);
    for (uint32_t i = 0; i < cfg_.frames; ++i) {
        const auto& f = frames[i % frames.size()];
        std::memcpy(base + static_cast<size_t>(i) * kChunk, f.data(), f.size());
    }
}

namespace {

using stats::publish;

bool transient(int err) { return err == ENOBUFS || err == EAGAIN || err == EBUSY || err == ENETDOWN; }

}  // namespace

bool XskQueue::tx_loop(const LoopCtx& c) {
    auto& ctr = *c.counters;
    // Free UMEM chunks: a stack of addresses. Chunks hold ready frames; only descriptors move.
    std::vector<uint64_t> free_chunks(cfg_.frames);
    for (uint32_t i = 0; i < cfg_.frames; ++i) free_chunks[i] = static_cast<uint64_t>(cfg_.frames - 1 - i) * kChunk;
    size_t nfree = free_chunks.size();
    uint64_t submitted = 0, completed = 0, backpressure = 0, no_buffer = 0, kick_errors = 0, polls = 0;
    engine::IdleYield blocked(c.yield_when_idle);  // the receiver may share this core
    const int sfd = fd();
    auto reap = [&] {
        uint32_t idx = 0;
        const uint32_t n = xsk_ring_cons__peek(&r_->comp, 2 * cfg_.ring, &idx);
        for (uint32_t i = 0; i < n; ++i) free_chunks[nfree++] = *xsk_ring_cons__comp_addr(&r_->comp, idx + i);
        if (n) xsk_ring_cons__release(&r_->comp, n);
        completed += n;
        return n;
    };
    bool fatal = false;
    auto kick = [&] {
        if (!xsk_ring_prod__needs_wakeup(&r_->tx)) return;
        if (sendto(sfd, nullptr, 0, MSG_DONTWAIT, nullptr, 0) < 0) {
            ++kick_errors;  // transient ones are only counted; anything else ends the worker
            if (!transient(errno)) fatal = true;
        }
    };
    const auto& stop = c.ctl->stop_tx;
    engine::Pacer pacer(c.rate_pps);
    pacer.start();
    engine::TxSigner signer(c.signature, c.layout, c.streams, c.templates);
    auto* umem = static_cast<uint8_t*>(umem_area_);
    while (!stop.load(std::memory_order_relaxed) && !fatal) {
        ++polls;
        reap();
        uint64_t want = c.burst;
        if (c.count) {
            if (submitted >= c.count) {
                if (completed >= c.count) break;
                kick();
                publish(ctr.packets, completed);
                publish(ctr.bytes, completed * c.wire_bytes);
                publish(ctr.polls, polls);
                continue;
            }
            want = std::min<uint64_t>(want, c.count - submitted);
        }
        if (pacer.limited()) want = pacer.allowance(submitted, static_cast<uint32_t>(want));
        if (nfree < want) {
            ++no_buffer;  // every chunk is in flight: the kernel has not completed them yet
            want = nfree;
        }
        uint32_t idx = 0;
        const uint32_t got = want ? xsk_ring_prod__reserve(&r_->tx, static_cast<uint32_t>(want), &idx) : 0;
        if (got < want) ++backpressure;
        if (got && signer.on()) signer.begin_burst();
        for (uint32_t i = 0; i < got; ++i) {
            xdp_desc* d = xsk_ring_prod__tx_desc(&r_->tx, idx + i);
            d->addr = free_chunks[--nfree];
            d->len = c.frame_len;
            d->options = 0;
            if (signer.on()) signer.stamp(umem + d->addr);
        }
        if (got) xsk_ring_prod__submit(&r_->tx, got);
        submitted += got;
        kick();
        if (got == 0) blocked.idle();
        publish(ctr.packets, completed);  // what the kernel completed = what the device took
        publish(ctr.bytes, completed * c.wire_bytes);
        publish(ctr.backpressure, backpressure);
        publish(ctr.no_buffer, no_buffer);
        publish(ctr.tx_errors, kick_errors);
        publish(ctr.polls, polls);
    }
    // Let descriptors already submitted complete (bounded), so they are counted as sent.
    const uint64_t deadline = stats::now_ns() + 200'000'000;
    while (!fatal && completed < submitted && stats::now_ns() < deadline) {
        if (reap() == 0) kick();
    }
    publish(ctr.packets, completed);
    publish(ctr.bytes, completed * c.wire_bytes);
    publish(ctr.tx_errors, kick_errors);
    publish(ctr.unsent, submitted - completed);
    signer.prepare_unsent();
    if (signer.on() && submitted > completed) {
        // Chunks not back on the free stack never completed: their sequences were not sent.
        std::vector<bool> is_free(cfg_.frames, false);
        for (size_t i = 0; i < nfree; ++i) is_free[free_chunks[i] / kChunk] = true;
        for (uint32_t k = 0; k < cfg_.frames; ++k)
            if (!is_free[k]) signer.unsent(umem + static_cast<size_t>(k) * kChunk);
    }
    if (c.tx_sent) *c.tx_sent = signer.sent();
    return !fatal;
}

void XskQueue::reflect_loop(const LoopCtx& c, stats::QueueCounters& rxc) {
    auto& txc = *c.counters;
    stats::set_state(rxc, stats::WorkerState::running);
    auto* umem = static_cast<uint8_t*>(umem_area_);
    std::vector<uint64_t> stash;  // chunks waiting for room in the fill ring
    stash.reserve(cfg_.frames);
    std::vector<xdp_desc> back(kMaxBurst), other(kMaxBurst);
    uint64_t rpkts = 0, rbytes = 0, tpkts = 0, tbytes = 0, foreign = 0, polls = 0, first = 0, last = 0, errs = 0;
    engine::IdleYield idle(c.yield_when_idle);
    const int sfd = fd();
    const uint32_t burst = std::min<uint32_t>(c.burst, kMaxBurst);
    auto refill = [&] {
        // Completed TX chunks and stashed ones go back to the fill ring.
        uint32_t idx = 0;
        const uint32_t nc = xsk_ring_cons__peek(&r_->comp, 2 * cfg_.ring, &idx);
        for (uint32_t i = 0; i < nc; ++i) stash.push_back(*xsk_ring_cons__comp_addr(&r_->comp, idx + i));
        if (nc) xsk_ring_cons__release(&r_->comp, nc);
        if (stash.empty()) return;
        uint32_t fidx = 0;
        const uint32_t got = xsk_ring_prod__reserve(&r_->fill, static_cast<uint32_t>(stash.size()), &fidx);
        for (uint32_t i = 0; i < got; ++i) *xsk_ring_prod__fill_addr(&r_->fill, fidx + i) = stash[stash.size() - 1 - i];
        if (got) {
            xsk_ring_prod__submit(&r_->fill, got);
            stash.resize(stash.size() - got);
        }
    };
    while (!c.ctl->stop_tx.load(std::memory_order_relaxed) && !c.ctl->stop_rx.load(std::memory_order_relaxed)) {
        stats::publish(txc.polls, ++polls);
        stats::publish(rxc.polls, polls);
        refill();
        uint32_t idx = 0;
        const uint32_t n = xsk_ring_cons__peek(&r_->rx, burst, &idx);
        if (n == 0) {
            if (xsk_ring_prod__needs_wakeup(&r_->fill)) recvfrom(sfd, nullptr, 0, MSG_DONTWAIT, nullptr, nullptr);
            if (xsk_ring_prod__needs_wakeup(&r_->tx) && sendto(sfd, nullptr, 0, MSG_DONTWAIT, nullptr, 0) < 0) ++errs;
            idle.idle();
            continue;
        }
        idle.busy();
        last = stats::now_ns();
        if (!first) first = last;
        uint32_t nb = 0, no = 0;
        for (uint32_t i = 0; i < n; ++i) {
            const xdp_desc* d = xsk_ring_cons__rx_desc(&r_->rx, idx + i);
            rbytes += d->len + 4ull;
            if (packet::reflect_swap(umem + xsk_umem__add_offset_to_addr(d->addr), d->len)) back[nb++] = *d;
            else other[no++] = *d;
        }
        xsk_ring_cons__release(&r_->rx, n);
        rpkts += n;
        foreign += no;
        uint32_t tidx = 0;
        const uint32_t got = nb ? xsk_ring_prod__reserve(&r_->tx, nb, &tidx) : 0;
        for (uint32_t i = 0; i < got; ++i) {
            *xsk_ring_prod__tx_desc(&r_->tx, tidx + i) = back[i];
            tbytes += back[i].len + 4ull;
        }
        if (got) xsk_ring_prod__submit(&r_->tx, got);
        tpkts += got;
        // Not reflected (foreign, or no TX room): the chunk returns to the fill ring.
        for (uint32_t i = got; i < nb; ++i) stash.push_back(xsk_umem__extract_addr(back[i].addr));
        for (uint32_t i = 0; i < no; ++i) stash.push_back(xsk_umem__extract_addr(other[i].addr));
        if (xsk_ring_prod__needs_wakeup(&r_->tx) && sendto(sfd, nullptr, 0, MSG_DONTWAIT, nullptr, 0) < 0) ++errs;
        stats::publish(rxc.packets, rpkts);
        stats::publish(rxc.bytes, rbytes);
        stats::publish(rxc.rx_ours, rpkts - foreign);
        stats::publish(rxc.rx_unique, rpkts - foreign);
        stats::publish(rxc.rx_foreign, foreign);
        stats::publish(txc.packets, tpkts);
        stats::publish(txc.bytes, tbytes);
        stats::publish(txc.unsent, (rpkts - foreign) - tpkts);
        stats::publish(txc.tx_errors, errs);
    }
    if (first) {
        stats::publish(rxc.first_pkt_ns, first);
        stats::publish(rxc.last_pkt_ns, last);
    }
    stats::set_state(rxc, stats::WorkerState::finished);
}

void XskQueue::rr_loop(const LoopCtx& c, const LoopCtx& rcfg, uint32_t outstanding, double timeout_s) {
    auto& tc = *c.counters;
    auto& rc = *rcfg.counters;
    stats::set_state(rc, stats::WorkerState::running);
    auto* umem = static_cast<uint8_t*>(umem_area_);
    engine::TxSigner signer(c.signature, c.layout, c.streams, c.templates);
    stats::RxMeasure meas(rcfg.signature, rcfg.nonce, rcfg.rx_streams, rcfg.rx_result);
    stats::BurstClock clk;
    engine::Pacer pacer(c.rate_pps);
    pacer.start();
    std::vector<uint64_t> free_tx;
    for (uint32_t i = cfg_.rx_first_chunk; i-- > 0;) free_tx.push_back(static_cast<uint64_t>(i) * kChunk);
    uint64_t submitted = 0, completed = 0, timeouts = 0, polls = 0, rpkts = 0, rbytes = 0, first = 0, last = 0;
    uint64_t errs = 0, answered_seen = 0, last_progress = stats::now_ns();
    const uint64_t timeout_ns = static_cast<uint64_t>(timeout_s * 1e9);
    const int sfd = fd();
    bool tx_done = false;
    while (!rcfg.ctl->stop_rx.load(std::memory_order_relaxed)) {
        ++polls;
        meas.poll();
        uint32_t idx = 0;
        const uint32_t nc = xsk_ring_cons__peek(&r_->comp, 2 * cfg_.ring, &idx);
        for (uint32_t i = 0; i < nc; ++i) free_tx.push_back(*xsk_ring_cons__comp_addr(&r_->comp, idx + i));
        if (nc) xsk_ring_cons__release(&r_->comp, nc);
        completed += nc;
        const uint32_t n = xsk_ring_cons__peek(&r_->rx, c.burst, &idx);
        if (n) {
            last = clk.now();
            if (!first) first = last;
            meas.burst_time(last);
            uint32_t fidx = 0;
            while (xsk_ring_prod__reserve(&r_->fill, n, &fidx) != n)
                if (rcfg.ctl->stop_rx.load(std::memory_order_relaxed)) break;
            for (uint32_t i = 0; i < n; ++i) {
                const xdp_desc* d = xsk_ring_cons__rx_desc(&r_->rx, idx + i);
                rbytes += d->len + 4ull;
                meas.frame(umem + xsk_umem__add_offset_to_addr(d->addr), d->len);
                *xsk_ring_prod__fill_addr(&r_->fill, fidx + i) = xsk_umem__extract_addr(d->addr);
            }
            xsk_ring_prod__submit(&r_->fill, n);
            xsk_ring_cons__release(&r_->rx, n);
            rpkts += n;
            stats::publish(rc.packets, rpkts);
            stats::publish(rc.bytes, rbytes);
            meas.publish(rc);
        } else if (xsk_ring_prod__needs_wakeup(&r_->fill)) {
            recvfrom(sfd, nullptr, 0, MSG_DONTWAIT, nullptr, nullptr);
        }
        const uint64_t answered = meas.unique() + timeouts;
        const uint64_t now = n ? last : stats::now_ns();
        if (answered != answered_seen) {
            answered_seen = answered;
            last_progress = now;
        }
        const uint64_t inflight = submitted > answered ? submitted - answered : 0;
        if (inflight && now - last_progress > timeout_ns) {
            timeouts += inflight;  // unanswered for too long: lost, stop waiting for them
            last_progress = now;
            stats::publish(tc.timeouts, timeouts);
        }
        if (!tx_done && c.ctl->stop_tx.load(std::memory_order_relaxed)) tx_done = true;
        if (!tx_done) {
            uint64_t want = inflight < outstanding ? outstanding - inflight : 0;
            want = std::min<uint64_t>({want, c.burst, free_tx.size()});
            if (c.count) want = std::min<uint64_t>(want, c.count - submitted);
            if (pacer.limited()) want = pacer.allowance(submitted, static_cast<uint32_t>(want));
            uint32_t tidx = 0;
            const uint32_t got = want ? xsk_ring_prod__reserve(&r_->tx, static_cast<uint32_t>(want), &tidx) : 0;
            if (got) signer.begin_burst();
            for (uint32_t i = 0; i < got; ++i) {
                xdp_desc* d = xsk_ring_prod__tx_desc(&r_->tx, tidx + i);
                d->addr = free_tx.back();
                free_tx.pop_back();
                d->len = c.frame_len;
                d->options = 0;
                signer.stamp(umem + d->addr);
            }
            if (got) xsk_ring_prod__submit(&r_->tx, got);
            submitted += got;
            if (c.count && submitted == c.count) tx_done = true;
        }
        if (xsk_ring_prod__needs_wakeup(&r_->tx) && sendto(sfd, nullptr, 0, MSG_DONTWAIT, nullptr, 0) < 0) ++errs;
        stats::publish(tc.packets, completed);
        stats::publish(tc.bytes, completed * c.wire_bytes);
        stats::publish(tc.tx_errors, errs);
        stats::publish(tc.polls, polls);
        stats::publish(rc.polls, polls);
        if (tx_done && completed == submitted &&
            tc.state.load(std::memory_order_relaxed) != static_cast<uint32_t>(stats::WorkerState::finished))
            stats::set_state(tc, stats::WorkerState::finished);
    }
    stats::publish(tc.unsent, submitted - completed);
    if (c.tx_sent) *c.tx_sent = signer.sent();
    if (first) {
        stats::publish(rc.first_pkt_ns, first);
        stats::publish(rc.last_pkt_ns, last);
    }
    stats::set_state(rc, stats::WorkerState::finished);
}

void XskQueue::rx_loop(const LoopCtx& c) {
    auto& ctr = *c.counters;
    uint64_t packets = 0, bytes = 0, polls = 0, first = 0, last = 0;
    engine::IdleYield idle(c.yield_when_idle);
    const int sfd = fd();
    const auto& stop = c.ctl->stop_rx;
    stats::RxMeasure meas(c.signature, c.nonce, c.rx_streams, c.rx_result);
    stats::BurstClock clk;
    const auto* umem = static_cast<const uint8_t*>(umem_area_);
    while (!stop.load(std::memory_order_relaxed)) {
        publish(ctr.polls, ++polls);
        meas.poll();
        uint32_t idx = 0;
        const uint32_t n = xsk_ring_cons__peek(&r_->rx, c.burst, &idx);
        if (n == 0) {
            if (xsk_ring_prod__needs_wakeup(&r_->fill)) recvfrom(sfd, nullptr, 0, MSG_DONTWAIT, nullptr, nullptr);
            idle.idle();
            continue;
        }
        idle.busy();
        last = clk.now();  // one clock read per burst: RX timestamp of its frames
        if (!first) first = last;
        meas.burst_time(last);
        uint32_t fidx = 0;
        while (xsk_ring_prod__reserve(&r_->fill, n, &fidx) != n) {
            // Cannot happen while we recycle exactly what we take; bounded by the stop flag.
            if (stop.load(std::memory_order_relaxed)) break;
        }
        uint64_t b = 0;
        for (uint32_t i = 0; i < n; ++i) {
            const xdp_desc* d = xsk_ring_cons__rx_desc(&r_->rx, idx + i);
            b += d->len;
            meas.frame(umem + xsk_umem__add_offset_to_addr(d->addr), d->len);
            *xsk_ring_prod__fill_addr(&r_->fill, fidx + i) = xsk_umem__extract_addr(d->addr);
        }
        xsk_ring_prod__submit(&r_->fill, n);
        xsk_ring_cons__release(&r_->rx, n);
        packets += n;
        bytes += b + 4ull * n;  // + FCS
        publish(ctr.packets, packets);
        publish(ctr.bytes, bytes);
        meas.publish(ctr);
    }
    if (first) {
        publish(ctr.first_pkt_ns, first);
        publish(ctr.last_pkt_ns, last);
    }
}

}  // namespace lr::afxdp
