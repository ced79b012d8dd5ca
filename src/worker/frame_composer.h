// Writes one frame of a queue that carries streams (worker/stream_scheduler.h): its template's
// bytes (the same `copy_len` bytes for every frame of the queue, so nothing of an earlier
// frame survives in a buffer), then its size (IP and UDP lengths, the IPv4 header checksum,
// by RFC 1624's incremental update), then, for a signed stream, its flow's next sequence, the
// burst's timestamp and the L4 checksum (for UDP, the usual case, as two 8-byte stores). Per
// frame: one copy of a cache line or two from a template in L1, a few stores, no branch on the
// frame's contents.
#pragma once
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <vector>

#include "packet/signature.h"
#include "worker/queue_ops.h"
#include "worker/stream_scheduler.h"
#include "worker/tx_program.h"
#include "worker/tx_signer.h"

namespace lr::worker {

// Asks for the line at `p` to be written: each frame's first line is taken from the core that
// last read it (the receiver's, on a pair) before the frame is written. Without the request the
// frame's stores (its copy and its stamp, six) waited in the store buffer for that line until
// the buffer was full and the sender stalled with it: when the host slowed transfers between
// cores, 4096 streams fell to 13 Mpps on the pair where the one-template sender (one store a
// frame) fell to about 45. PREFETCHW is a hint: a CPU that does not know it does nothing.
inline void prefetch_for_write(const void* p) {
#if defined(__x86_64__)
    asm volatile("prefetchw %0" : : "m"(*static_cast<const char*>(p)));
#else
    __builtin_prefetch(p, 1);
#endif
}
// Frames asked for ahead of the one being written.
inline constexpr uint32_t kWriteAhead = 8;

class FrameComposer {
public:
    // `wide`: frames may be written by the AVX-512 path (write_burst) where the CPU and the
    // program allow it; false for tests that compare the two paths.
    FrameComposer(const TxProgram& p, bool sign, bool wide = true);
    FrameComposer(const FrameComposer&) = delete;  // its templates point into its own bytes_
    FrameComposer& operator=(const FrameComposer&) = delete;

    void begin_burst(uint64_t now_ns) {
        ts_ = now_ns & LR_SIG48_MASK;
        ts_be_ = __builtin_bswap64(ts_ << 16) << 16;
        ts_sum_[1] = ts_sum(seq_ts_layout_, ts_);
    }

    // Frames [0, n) of a burst into the buffers of `span` (span.fresh_frame(i)), each buffer's
    // line asked for kWriteAhead frames ahead.
    void write_burst(const FrameSpan& span, const PlannedFrame* plan, uint32_t n) {
        if (wide_) return write_burst_wide(span, plan, n);
        for (uint32_t i = 0; i < std::min(n, kWriteAhead); ++i) prefetch_for_write(span.fresh_frame(i));
        for (uint32_t i = 0; i < n; ++i) {
            if (i + kWriteAhead < n) prefetch_for_write(span.fresh_frame(i + kWriteAhead));
            write(span.fresh_frame(i), plan[i]);
        }
    }
    // Whether write_burst takes the AVX-512 path: a frame is then one 64-byte load of its
    // template, its stamp merged in a register, and one store of its copy_len bytes, where the
    // other path stores six times. A sender whose buffers' lines come from the receiving core
    // waits for each line with its stores in the store buffer: fewer stores a frame, more
    // frames in flight. It takes frames of copy_len (at most 64) bytes whose template is signed
    // UDP with its 16 stamped bytes 4-byte aligned within them; the others (a short signature,
    // lengths that grow) go as on the other path.
    bool wide() const { return wide_; }

    void write(uint8_t* f, const PlannedFrame& pf) {
        const Tmpl& t = t_[pf.tmpl];
        copy(f, t.bytes);
        // The frame is longer than its template (templates are built at their row's smallest
        // size): the lengths grow by `d`, and the L4 sum by d once per length it covers.
        const uint32_t d = pf.len - t.len;
        uint32_t l4d = 0;
        if (d) l4d = grow(f, t, d);
        if (t.udp16) {
            stamp16(f, t, seqs_[t.flow]++, l4d);
        } else if (t.sign) {
            const uint64_t seq = seqs_[t.flow]++;
            stamp_frame(f, t.layout, seq, t.base + l4d, ts_, ts_sum_[t.ts]);
        } else if (l4d && t.l4csum) {
            fix_l4(f, t, l4d);
        }
    }

    // Frames stamped per flow slot (each flow's next sequence).
    const std::vector<uint64_t>& stamped() const { return seqs_; }
    // Every flow's next sequence (tests start near carries and the 2^48 wrap).
    void start_at(uint64_t seq) { seqs_.assign(seqs_.size(), seq); }

private:
    // Everything a frame's writing reads of its template, in one place (a frame's template is
    // out of cache with thousands of streams: each line it reads costs a fetch).
    struct Tmpl {
        const uint8_t* bytes = nullptr;  // in bytes_ when they fit there, else the program's
        packet::SigLayout layout;
        uint32_t base = 0;   // signed: the template's L4 sum without sequence and timestamp
        uint32_t flow = 0;   // its flow's slot (a flow has a template per signature layout)
        uint16_t len = 0;    // the template's frame length, without FCS
        uint8_t ts = 0;      // 1: the layout carries a timestamp
        bool sign = false;
        bool l4csum = false;  // unsigned but with an L4 checksum to keep right (UDP, TCP)
        bool v6 = false;
        // Signed UDP with sequence and timestamp: checksum, magic, sequence and timestamp
        // lie in 16 contiguous bytes (packet/signature.h), written as two 8-byte words.
        bool udp16 = false;
        // The wide path: the 4-byte lanes of the first 64 bytes that stamp16's 16 bytes fill.
        uint16_t stamp_lanes = 0;
    };
    // The 16 bytes from the checksum on, in wire order, built in two registers: the checksum
    // from the template's sum, the lengths' growth, the burst's timestamp and the sequence's
    // three words; no field stored on its own, no branch on the layout.
    void stamp16(uint8_t* f, const Tmpl& t, uint64_t seq, uint32_t l4d) const {
        uint64_t w0, w1;
        stamp_words(t, seq, l4d, w0, w1);
        std::memcpy(f + t.layout.csum_off, &w0, 8);
        std::memcpy(f + t.layout.csum_off + 8, &w1, 8);
    }
    // stamp16's two words, as they lie in memory.
    void stamp_words(const Tmpl& t, uint64_t seq, uint32_t l4d, uint64_t& w0, uint64_t& w1) const {
        uint32_t sum = t.base + l4d + ts_sum_[1] + static_cast<uint32_t>((seq >> 32) & 0xffff) +
                       static_cast<uint32_t>((seq >> 16) & 0xffff) + static_cast<uint32_t>(seq & 0xffff);
        sum = (sum & 0xffff) + (sum >> 16);
        sum = (sum & 0xffff) + (sum >> 16);
        uint32_t c = ~sum & 0xffff;
        if (c == 0) c = 0xffff;
        const uint64_t sq = __builtin_bswap64(seq << 16);
        w0 = kMagicWord | __builtin_bswap16(static_cast<uint16_t>(c)) | (sq << 32);
        w1 = ((sq >> 32) & 0xffff) | ts_be_;
    }
    void write_burst_wide(const FrameSpan& span, const PlannedFrame* plan, uint32_t n);  // frame_composer_wide.cpp
    static constexpr uint64_t kMagicWord = uint64_t{__builtin_bswap16(packet::kSigMagic)} << 16;  // bytes 2-3

    void copy(uint8_t* f, const uint8_t* src) const {
        switch (copy_len_) {  // the common lengths as fixed-size copies (a few vector stores)
            case 60: std::memcpy(f, src, 60); break;  // 64-byte frames: all but the FCS
            case 64: std::memcpy(f, src, 64); break;
            case 128: std::memcpy(f, src, 128); break;
            default: std::memcpy(f, src, copy_len_);
        }
    }
    static void add16(uint8_t* p, uint32_t d) {  // a big-endian length field grows by d
        const uint32_t v = (uint32_t{p[0]} << 8 | p[1]) + d;
        p[0] = static_cast<uint8_t>(v >> 8);
        p[1] = static_cast<uint8_t>(v);
    }
    static uint16_t csum_add(uint16_t csum, uint32_t d) {  // RFC 1624: HC' = ~(~HC + m' - m)
        uint32_t s = static_cast<uint16_t>(~csum) + d;
        s = (s & 0xffff) + (s >> 16);
        s = (s & 0xffff) + (s >> 16);
        return static_cast<uint16_t>(~s);
    }
    uint32_t grow(uint8_t* f, const Tmpl& t, uint32_t d) const {
        const auto& l = t.layout;
        uint8_t* ip = f + l.ip_off;
        if (t.v6) {
            add16(ip + 4, d);  // payload length
        } else {
            add16(ip + 2, d);  // total length, and its header checksum
            const uint16_t c = csum_add(static_cast<uint16_t>(ip[10] << 8 | ip[11]), d);
            ip[10] = static_cast<uint8_t>(c >> 8);
            ip[11] = static_cast<uint8_t>(c);
        }
        if (l.tcp) return d;        // the pseudo-header's length
        add16(f + l.l4_off + 4, d);  // UDP length
        return 2 * d;                // in the pseudo-header and the UDP header
    }
    static void fix_l4(uint8_t* f, const Tmpl& t, uint32_t l4d) {
        uint8_t* c = f + t.layout.csum_off;
        uint16_t v = csum_add(static_cast<uint16_t>(c[0] << 8 | c[1]), l4d);
        if (!t.layout.tcp && v == 0) v = 0xffff;
        c[0] = static_cast<uint8_t>(v >> 8);
        c[1] = static_cast<uint8_t>(v);
    }

    std::vector<Tmpl> t_;
    // The templates' first copy_len bytes side by side, each on its own cache lines, in the
    // program's order (the order a round robin of streams sends them): when they fit in
    // kPackedBytes. A template's own vector lies wherever the allocator put it.
    static constexpr size_t kPackedBytes = size_t{16} << 20;
    std::vector<uint8_t> bytes_;
    std::vector<uint64_t> seqs_;  // per flow slot
    uint32_t copy_len_;
    bool wide_ = false;
    uint64_t ts_ = 0;
    uint64_t ts_be_ = 0;  // the timestamp's 6 wire bytes as bytes 2-7 of stamp16's second word
    uint32_t ts_sum_[2] = {0, 0};
    packet::SigLayout seq_ts_layout_;
};

}  // namespace lr::worker
