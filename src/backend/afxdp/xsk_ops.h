// AF_XDP burst operations for the queue engines (src/worker). Per burst: reap completions,
// reserve, fill descriptors, submit, and kick only when the kernel asks (needs_wakeup).
// ENOBUFS/EAGAIN/EBUSY/ENETDOWN on a kick are transient: counted, never fatal. No
// allocation, lock or log per packet. A frame counts as sent when the kernel completes it:
// a descriptor on the TX ring is not yet accepted by the device.
#pragma once
#include <atomic>
#include <cerrno>
#include <sys/socket.h>
#include <vector>
#include <xdp/xsk.h>

#include "backend/afxdp/xsk_socket.h"
#include "stats/counters.h"
#include "worker/queue_ops.h"

namespace lr::afxdp {

inline bool transient_send_error(int err) { return err == ENOBUFS || err == EAGAIN || err == EBUSY || err == ENETDOWN; }

// Sends from the socket's sending chunks, which hold ready frames: only descriptors move.
class XskTxOps {
public:
    XskTxOps(XskSocket& s, uint32_t frame_len)
        : s_(s), free_(s.free_tx()), trial_of_(s.chunk_trial()), len_of_(s.chunk_len()), tag_of_(s.chunk_tag()),
          trial_(s.trial()), umem_(s.umem()), frame_len_(frame_len), comp_ring_(2 * s.config().ring) {}
    void reclaim() {
        uint32_t idx = 0;
        auto& comp = s_.comp_ring();
        const uint32_t n = xsk_ring_cons__peek(&comp, comp_ring_, &idx);
        for (uint32_t i = 0; i < n; ++i) {
            const uint64_t a = *xsk_ring_cons__comp_addr(&comp, idx + i);
            free_.push_back(a);
            const bool ours = trial_of_[a / kChunk] == trial_;  // an earlier trial's straggler is not ours
            completed_ += ours;
            if (sized_ && ours) bytes_ += len_of_[a / kChunk] + uint64_t{packet::kFcsLen};
        }
        if (n) xsk_ring_cons__release(&comp, n);
    }
    uint32_t room(uint32_t burst) const { return burst; }
    // Exactly what acquire() can take now: free chunks with free descriptors.
    uint32_t avail(uint32_t burst) const {
        const auto chunks = static_cast<uint32_t>(std::min<size_t>(burst, free_.size()));
        return chunks ? std::min(chunks, xsk_prod_nb_free(&s_.tx_ring(), chunks)) : 0;
    }
    worker::Acquired acquire(uint32_t n) {
        worker::Acquired a;
        if (free_.size() < n) {
            a.no_buffer = true;  // every chunk is in flight: the kernel has not completed them yet
            n = static_cast<uint32_t>(free_.size());
        }
        uint32_t idx = 0;
        a.got = n ? xsk_ring_prod__reserve(&s_.tx_ring(), n, &idx) : 0;
        a.ring_full = a.got < n;
        desc_idx_ = idx;
        for (uint32_t i = 0; i < a.got; ++i) {
            const uint64_t addr = free_.back();
            free_.pop_back();
            trial_of_[addr / kChunk] = trial_;
            xdp_desc* d = xsk_ring_prod__tx_desc(&s_.tx_ring(), idx + i);
            d->addr = addr;
            d->len = frame_len_;
            d->options = 0;
            frames_[i] = umem_ + addr;
        }
        reserved_ = a.got;
        return a;
    }
    worker::FrameSpan fresh() const { return {frames_, 0, 0, reserved_}; }
    void set_frame(uint32_t i, uint16_t len, uint32_t tag) {
        xsk_ring_prod__tx_desc(&s_.tx_ring(), desc_idx_ + i)->len = len;
        const uint64_t k = static_cast<uint64_t>(static_cast<uint8_t*>(frames_[i]) - umem_) / kChunk;
        len_of_[k] = len;
        tag_of_[k] = tag;
        sized_ = true;
    }
    uint64_t confirmed_bytes() const { return bytes_; }
    worker::Transmitted transmit() {
        const uint32_t n = reserved_;
        if (n) {
            xsk_ring_prod__submit(&s_.tx_ring(), n);
            submitted_ += n;
            reserved_ = 0;
        }
        if (submitted_ > completed_) kick();
        return {n, false};
    }
    uint64_t issued() const { return submitted_ + reserved_; }
    uint64_t held() const { return reserved_; }
    uint64_t confirmed() const { return completed_; }
    uint64_t errors() const { return kick_errors_; }
    bool failed() const { return fatal_; }
    void finish() {
        // Let descriptors already submitted complete (bounded), so they are counted as sent.
        const uint64_t deadline = stats::now_ns() + 200'000'000;
        while (!fatal_ && completed_ < submitted_ && stats::now_ns() < deadline) {
            const uint64_t before = completed_;
            reclaim();
            if (completed_ == before) kick();
        }
    }
    // Chunks of this trial not back on the free stack never completed: not sent.
    // f(frame, length, tag) for each.
    template <class F>
    void for_each_unconfirmed(F&& f) const {
        std::vector<bool> is_free(s_.config().tx_chunks, false);
        for (const uint64_t a : free_) is_free[a / kChunk] = true;
        for (uint32_t k = 0; k < s_.config().tx_chunks; ++k)
            if (!is_free[k] && trial_of_[k] == trial_)
                f(umem_ + static_cast<size_t>(k) * kChunk, len_of_[k], tag_of_[k]);
    }
    void drop_held() {}

private:
    void kick() {
        if (!xsk_ring_prod__needs_wakeup(&s_.tx_ring())) return;
        if (sendto(s_.fd(), nullptr, 0, MSG_DONTWAIT, nullptr, 0) < 0) {
            ++kick_errors_;  // transient ones are only counted; anything else ends the worker
            if (!transient_send_error(errno)) fatal_ = true;
        }
    }
    XskSocket& s_;
    std::vector<uint64_t>& free_;
    std::vector<uint8_t>& trial_of_;
    std::vector<uint16_t>& len_of_;
    std::vector<uint32_t>& tag_of_;
    const uint8_t trial_;
    uint8_t* const umem_;
    const uint32_t frame_len_, comp_ring_;
    void* frames_[kMaxBurst];
    uint32_t reserved_ = 0, desc_idx_ = 0;
    uint64_t submitted_ = 0, completed_ = 0, kick_errors_ = 0, bytes_ = 0;
    bool fatal_ = false, sized_ = false;
};
static_assert(worker::TxQueueOps<XskTxOps>);

// Receives into the socket's receiving chunks and gives each back to the fill ring.
class XskRxOps {
public:
    XskRxOps(XskSocket& s, const std::atomic<bool>& stop) : s_(s), stop_(stop), umem_(s.umem()) {}
    uint32_t receive(uint32_t burst) {
        n_ = xsk_ring_cons__peek(&s_.rx_ring(), burst, &idx_);
        return n_;
    }
    uint8_t* data(uint32_t i) const { return umem_ + xsk_umem__add_offset_to_addr(desc(i)->addr); }
    uint32_t len(uint32_t i) const { return desc(i)->len; }
    uint64_t wire_bytes(uint32_t i) const { return desc(i)->len + uint64_t{packet::kFcsLen}; }
    bool csum_verified(uint32_t) const { return false; }
    void release() {
        uint32_t fidx = 0;
        while (xsk_ring_prod__reserve(&s_.fill_ring(), n_, &fidx) != n_) {
            // Cannot happen while we recycle exactly what we take; bounded by the stop flag.
            if (stop_.load(std::memory_order_relaxed)) return;
        }
        for (uint32_t i = 0; i < n_; ++i)
            *xsk_ring_prod__fill_addr(&s_.fill_ring(), fidx + i) = xsk_umem__extract_addr(desc(i)->addr);
        xsk_ring_prod__submit(&s_.fill_ring(), n_);
        xsk_ring_cons__release(&s_.rx_ring(), n_);
    }
    void idle() {
        if (xsk_ring_prod__needs_wakeup(&s_.fill_ring())) recvfrom(s_.fd(), nullptr, 0, MSG_DONTWAIT, nullptr, nullptr);
    }

private:
    const xdp_desc* desc(uint32_t i) const { return xsk_ring_cons__rx_desc(&s_.rx_ring(), idx_ + i); }
    XskSocket& s_;
    const std::atomic<bool>& stop_;
    uint8_t* const umem_;
    uint32_t n_ = 0, idx_ = 0;
};
static_assert(worker::RxQueueOps<XskRxOps>);

// Reflects from the chunk a frame arrived in: its descriptor moves from the RX ring to the
// TX ring; completed chunks, and those not sent back, return to the fill ring.
class XskReflectOps {
public:
    explicit XskReflectOps(XskSocket& s)
        : s_(s), umem_(s.umem()), lens_(s.config().frames, 0), comp_ring_(2 * s.config().ring) {
        stash_.reserve(s.config().frames);  // the hot path never allocates
    }
    void reclaim() {
        uint32_t idx = 0;
        auto& comp = s_.comp_ring();
        const uint32_t n = xsk_ring_cons__peek(&comp, comp_ring_, &idx);
        for (uint32_t i = 0; i < n; ++i) {
            const uint64_t a = *xsk_ring_cons__comp_addr(&comp, idx + i);
            bytes_ += lens_[a / kChunk] + uint64_t{packet::kFcsLen};
            stash_.push_back(a);
        }
        if (n) xsk_ring_cons__release(&comp, n);
        confirmed_ += n;
        if (stash_.empty()) return;
        uint32_t fidx = 0;
        const uint32_t got = xsk_ring_prod__reserve(&s_.fill_ring(), static_cast<uint32_t>(stash_.size()), &fidx);
        for (uint32_t i = 0; i < got; ++i) *xsk_ring_prod__fill_addr(&s_.fill_ring(), fidx + i) = stash_[stash_.size() - 1 - i];
        if (got) {
            xsk_ring_prod__submit(&s_.fill_ring(), got);
            stash_.resize(stash_.size() - got);
        }
    }
    uint32_t receive(uint32_t burst) {
        n_ = xsk_ring_cons__peek(&s_.rx_ring(), burst, &idx_);
        return n_;
    }
    uint8_t* data(uint32_t i) const { return umem_ + xsk_umem__add_offset_to_addr(desc(i)->addr); }
    uint32_t len(uint32_t i) const { return desc(i)->len; }
    uint64_t wire_bytes(uint32_t i) const { return desc(i)->len + uint64_t{packet::kFcsLen}; }
    void keep(uint32_t i) { keep_[i] = true; }
    worker::Transmitted send_back() {
        uint32_t nb = 0;
        for (uint32_t i = 0; i < n_; ++i) nb += keep_[i];
        uint32_t tidx = 0;
        const uint32_t got = nb ? xsk_ring_prod__reserve(&s_.tx_ring(), nb, &tidx) : 0;
        uint32_t j = 0;
        for (uint32_t i = 0; i < n_; ++i) {
            const xdp_desc* d = desc(i);
            if (keep_[i] && j < got) {
                *xsk_ring_prod__tx_desc(&s_.tx_ring(), tidx + j++) = *d;
                lens_[xsk_umem__extract_addr(d->addr) / kChunk] = d->len;
            } else {
                // Not reflected (foreign, or no TX room): the chunk returns to the fill ring.
                stash_.push_back(xsk_umem__extract_addr(d->addr));
            }
            keep_[i] = false;
        }
        xsk_ring_cons__release(&s_.rx_ring(), n_);
        if (got) xsk_ring_prod__submit(&s_.tx_ring(), got);
        submitted_ += got;
        dropped_ += nb - got;
        kick();
        return {got, got < nb};
    }
    void idle() {
        if (xsk_ring_prod__needs_wakeup(&s_.fill_ring())) recvfrom(s_.fd(), nullptr, 0, MSG_DONTWAIT, nullptr, nullptr);
        kick();
    }
    uint64_t confirmed() const { return confirmed_; }
    uint64_t confirmed_bytes() const { return bytes_; }
    uint64_t dropped() const { return dropped_; }
    uint64_t errors() const { return kick_errors_; }
    void finish() {
        const uint64_t deadline = stats::now_ns() + 200'000'000;
        while (confirmed_ < submitted_ && stats::now_ns() < deadline) {
            const uint64_t before = confirmed_;
            reclaim();
            if (confirmed_ == before) kick();
        }
    }

private:
    const xdp_desc* desc(uint32_t i) const { return xsk_ring_cons__rx_desc(&s_.rx_ring(), idx_ + i); }
    void kick() {
        if (xsk_ring_prod__needs_wakeup(&s_.tx_ring()) && sendto(s_.fd(), nullptr, 0, MSG_DONTWAIT, nullptr, 0) < 0)
            ++kick_errors_;
    }
    XskSocket& s_;
    uint8_t* const umem_;
    std::vector<uint32_t> lens_;     // per chunk: the length of the frame it sends back
    std::vector<uint64_t> stash_;    // chunks waiting for room in the fill ring
    const uint32_t comp_ring_;
    bool keep_[kMaxBurst] = {};
    uint32_t n_ = 0, idx_ = 0;
    uint64_t submitted_ = 0, confirmed_ = 0, bytes_ = 0, dropped_ = 0, kick_errors_ = 0;
};
static_assert(worker::ReflectQueueOps<XskReflectOps>);

}  // namespace lr::afxdp
