// DPDK burst operations for the queue engines (src/worker): one ethdev queue, one mempool
// whose mbufs were written with the frame templates when the trial started, so sending a
// frame writes nothing but its signature. No allocation, lock, syscall or log per packet.
#pragma once
#include <cstring>

#include <rte_ethdev.h>
#include <rte_mbuf.h>
#include <rte_mempool.h>

#include "spec/run_spec.h"
#include "worker/queue_ops.h"

namespace lr::dpdk {

using spec::kMaxBurst;
// Frame data follows the mbuf header at a fixed offset (pools are made without private area;
// checked when a pool's templates are written): the stamp needs no mbuf header read.
inline constexpr size_t kDataOffset = sizeof(rte_mbuf) + RTE_PKTMBUF_HEADROOM;

// Small and copied into the engine: its scalars stay in registers in the hot loop, and only
// the array of held mbufs (`held`, kMaxBurst long, owned by the caller) is seen by the driver.
// A queue that carries streams sizes and tags its frames (set_frame): their lengths and tags
// follow the held mbufs in `meta` (kMaxBurst long, owned by the caller).
struct HeldMeta {
    uint16_t len;
    uint32_t tag;
};
class DpdkTxOps {
public:
    // `every_len`: for a queue that carries streams, the length every frame it sends has and
    // every buffer of the pool was given when the trial started (worker::one_frame_len); 0
    // when the frames' lengths differ.
    DpdkTxOps(uint16_t port, uint16_t queue, rte_mempool* pool, rte_mbuf** held, HeldMeta* meta,
              uint16_t every_len = 0)
        : port_(port), queue_(queue), pool_(pool), pend_(held), meta_(meta), every_len_(every_len) {}
    void reclaim() {}
    uint32_t room(uint32_t burst) const { return burst > npend_ ? burst - npend_ : 0; }
    // The pool is rarely short (it holds several rings' worth): room() is what acquire() takes.
    uint32_t avail(uint32_t burst) const { return room(burst); }
    worker::Acquired acquire(uint32_t n) {
        // Mbufs come back from the driver with data, data_len and pkt_len intact, so a raw
        // pool get hands out ready frames.
        if (rte_mempool_get_bulk(pool_, reinterpret_cast<void**>(pend_ + npend_), n) != 0) return {0, true, false};
        fresh_ = npend_;
        npend_ += n;
        return {n, false, false};
    }
    worker::FrameSpan fresh() const { return {reinterpret_cast<void* const*>(pend_), kDataOffset, fresh_, npend_}; }
    void set_frame(uint32_t i, uint16_t len, uint32_t tag) {
        // The buffer's header is not touched when it holds the length already: the receiving
        // core has that line too (it read the lengths and freed the buffer), and a write would
        // take it back across, per frame. With every frame of one length it is not even read:
        // every buffer was sized when the trial started. Otherwise a buffer that last carried a
        // frame of this length is only read.
        rte_mbuf* m = pend_[i];
        if (every_len_ == 0 && (m->pkt_len != len || m->data_len != len)) [[unlikely]] {
            m->data_len = len;
            m->pkt_len = len;
        }
        meta_[i] = {len, tag};
        sized_ = true;
    }
    worker::Transmitted transmit() {
        if (!npend_) return {};
        const uint16_t n = rte_eth_tx_burst(port_, queue_, pend_, static_cast<uint16_t>(npend_));
        const bool partial = n < npend_;
        if (sized_)
            for (uint16_t i = 0; i < n; ++i) bytes_ += meta_[i].len + uint64_t{packet::kFcsLen};
        // Back-pressure: keep the rest and offer it again next burst (counted, and bounded
        // by the watchdog's stall limit and the stop flag).
        if (partial && n) {
            std::memmove(pend_, pend_ + n, (npend_ - n) * sizeof(pend_[0]));
            if (sized_) std::memmove(meta_, meta_ + n, (npend_ - n) * sizeof(meta_[0]));
        }
        npend_ -= n;
        sent_ += n;
        return {n, partial};
    }
    uint64_t confirmed_bytes() const { return bytes_; }
    uint64_t issued() const { return sent_ + npend_; }
    uint64_t held() const { return npend_; }
    uint64_t confirmed() const { return sent_; }
    uint64_t errors() const { return 0; }
    bool failed() const { return false; }
    void finish() {}
    // f(frame, length, tag) for each frame taken and never confirmed.
    template <class F>
    void for_each_unconfirmed(F&& f) const {
        for (uint32_t i = 0; i < npend_; ++i)
            f(rte_pktmbuf_mtod(pend_[i], const uint8_t*), sized_ ? meta_[i].len : uint16_t{0}, sized_ ? meta_[i].tag : 0u);
    }
    void drop_held() {
        if (npend_) rte_mempool_put_bulk(pool_, reinterpret_cast<void**>(pend_), npend_);
        npend_ = 0;
    }

private:
    uint16_t port_, queue_;
    rte_mempool* pool_;
    rte_mbuf** pend_;
    HeldMeta* meta_;
    uint32_t npend_ = 0, fresh_ = 0;
    uint64_t sent_ = 0, bytes_ = 0;
    uint16_t every_len_;
    bool sized_ = false;
};
static_assert(worker::TxQueueOps<DpdkTxOps>);

// Frees received buffers as rte_pktmbuf_free_bulk does, without reading each one's second
// cache line: that frees a buffer only after checking its `next` segment, which DPDK 22.11
// keeps in the header's second line, a line nothing else on the receiving core reads, and a
// miss per frame (a fifth of the receiver's time with 4096 streams on the ring pair). A
// buffer of one segment, direct and not shared has no next segment (DPDK's rule: `next` is
// NULL in the last segment), which the first line shows. Runs of those from one pool go back
// to it at once; any other buffer is freed by DPDK's own rules.
inline void free_received(rte_mbuf* const* m, uint32_t n) {
    for (uint32_t i = 0; i < n;) {
        rte_mempool* const pool = m[i]->pool;
        uint32_t j = i;
        while (j < n && m[j]->pool == pool && m[j]->nb_segs == 1 && rte_mbuf_refcnt_read(m[j]) == 1 &&
               RTE_MBUF_DIRECT(m[j]))
            ++j;
        if (j > i) {
            rte_mempool_put_bulk(pool, reinterpret_cast<void* const*>(m + i), j - i);
            i = j;
        } else {
            rte_pktmbuf_free(m[i++]);  // chained, shared, indirect or external
        }
    }
}

class DpdkRxOps {
public:
    DpdkRxOps(uint16_t port, uint16_t queue) : port_(port), queue_(queue) {}
    uint32_t receive(uint32_t burst) {
        n_ = rte_eth_rx_burst(port_, queue_, bufs_, static_cast<uint16_t>(burst));
        return n_;
    }
    // The next burst, after the current one's frames (worker::HasLookahead).
    uint32_t receive_ahead(uint32_t burst) {
        ahead_ = rte_eth_rx_burst(port_, queue_, bufs_ + n_, static_cast<uint16_t>(burst));
        return ahead_;
    }
    uint8_t* data(uint32_t i) const { return rte_pktmbuf_mtod(bufs_[i], uint8_t*); }
    uint32_t len(uint32_t i) const { return rte_pktmbuf_data_len(bufs_[i]); }
    // + FCS, which the NIC strips
    uint64_t wire_bytes(uint32_t i) const { return rte_pktmbuf_pkt_len(bufs_[i]) + uint64_t{packet::kFcsLen}; }
    bool csum_verified(uint32_t i) const {
        return (bufs_[i]->ol_flags & RTE_MBUF_F_RX_L4_CKSUM_MASK) == RTE_MBUF_F_RX_L4_CKSUM_GOOD;
    }
    // Frees the current burst; the one taken ahead becomes the current one.
    void release() {
        free_received(bufs_, n_);
        if (ahead_) std::memmove(bufs_, bufs_ + n_, ahead_ * sizeof(bufs_[0]));
        n_ = ahead_;
        ahead_ = 0;
    }
    void idle() {}
    // The mbuf header says where the data is: the receive loop fetches it ahead. DPDK's
    // prefetch is an asm statement, which the compiler keeps: GCC 12 at -O3 left a
    // __builtin_prefetch here out of the receive loop, and the header's miss stalled each frame.
    void prefetch_meta(uint32_t i) const { rte_prefetch0(bufs_[i]); }
    // Frame i's data asked for where a buffer of a pool without private space keeps it, at the
    // default headroom (worker::HasDataHint), without waiting for the buffer's header: the
    // receive loop asks for a frame's header and its data at once, not the data after the
    // header came. linerate's pools are made so, and a driver that resets its buffers as DPDK
    // does puts received data there (the ring pair's frames are); one that puts it elsewhere
    // still has its frames read right, only not fetched ahead.
    void prefetch_data(uint32_t i) const {
        rte_prefetch0(reinterpret_cast<const uint8_t*>(bufs_[i]) + sizeof(rte_mbuf) + RTE_PKTMBUF_HEADROOM);
    }

protected:
    uint16_t port_, queue_;
    rte_mbuf* bufs_[2 * kMaxBurst];  // the current burst, then the one taken ahead
    uint16_t n_ = 0, ahead_ = 0;
};
static_assert(worker::RxQueueOps<DpdkRxOps> && worker::HasLookahead<DpdkRxOps>);

// Receives on an RX queue and sends back on the TX queue of the same index.
class DpdkReflectOps : public DpdkRxOps {
public:
    DpdkReflectOps(uint16_t port, uint16_t queue) : DpdkRxOps(port, queue) {}
    void reclaim() {}
    void keep(uint32_t i) { keep_[i] = true; }
    worker::Transmitted send_back() {
        uint16_t nb = 0, no = 0;
        for (uint16_t i = 0; i < n_; ++i) {
            (keep_[i] ? back_[nb++] : other_[no++]) = bufs_[i];
            keep_[i] = false;
        }
        if (no) rte_pktmbuf_free_bulk(other_, no);
        uint16_t sent = 0;
        bool partial = false;
        for (int tries = 0; sent < nb && tries < 8; ++tries) {  // bounded retries, then drop and count
            const uint16_t k = rte_eth_tx_burst(port_, queue_, back_ + sent, static_cast<uint16_t>(nb - sent));
            partial |= k < nb - sent;
            sent = static_cast<uint16_t>(sent + k);
        }
        for (uint16_t i = 0; i < sent; ++i) bytes_ += rte_pktmbuf_pkt_len(back_[i]) + uint64_t{packet::kFcsLen};
        if (sent < nb) rte_pktmbuf_free_bulk(back_ + sent, nb - sent);
        confirmed_ += sent;
        dropped_ += nb - sent;
        return {sent, partial};
    }
    uint64_t confirmed() const { return confirmed_; }
    uint64_t confirmed_bytes() const { return bytes_; }
    uint64_t dropped() const { return dropped_; }
    uint64_t errors() const { return 0; }
    void finish() {}

private:
    bool keep_[kMaxBurst] = {};
    rte_mbuf* back_[kMaxBurst];
    rte_mbuf* other_[kMaxBurst];
    uint64_t confirmed_ = 0, bytes_ = 0, dropped_ = 0;
};
static_assert(worker::ReflectQueueOps<DpdkReflectOps>);

}  // namespace lr::dpdk
