// Per-packet signing on the TX side, shared by every backend's TX loop: each stream (flow)
// of the queue has its own sequence counter; the timestamp is read once per burst.
//
// The checksum is not updated from the frame's old contents: each stream keeps the one's-
// complement sum of its template (sequence and timestamp zero), so a packet costs only the
// writes of sequence, timestamp and checksum, whatever the frame held before.
//
// The common case (one UDP stream per queue, sequence and timestamp: the default) has a
// burst path that computes nothing per packet and writes each frame with one 16-byte store;
// see stamp_burst(). docs/measurement.md ("Cost of signing") explains the arithmetic.
#pragma once
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <vector>
#ifdef __SSE2__
#include <emmintrin.h>
#endif

#include "packet/signature.h"
#include "stats/counters.h"
#include "stats/tsc_clock.h"

namespace lr::worker {

// The timestamp's contribution to the L4 sum (level seq_ts), computed once per burst.
inline uint32_t ts_sum(const packet::SigLayout& l, uint64_t ts48) {
    return l.level == packet::SigLevel::seq_ts
               ? static_cast<uint32_t>((ts48 >> 32) + ((ts48 >> 16) & 0xffff) + (ts48 & 0xffff))
               : 0;
}

inline void put48(uint8_t* p, uint64_t v) {
    const uint32_t hi = __builtin_bswap32(static_cast<uint32_t>(v >> 16));
    const uint16_t lo = __builtin_bswap16(static_cast<uint16_t>(v));
    std::memcpy(p, &hi, 4);
    std::memcpy(p + 4, &lo, 2);
}

// Writes sequence `seq`, the 48-bit timestamp `ts48` (level seq_ts) and the L4 checksum into
// a signed frame of layout `l` whose L4 words other than those two sum to `base` (one's
// complement, unfolded) and whose timestamp words sum to `tsum` (ts_sum()).
inline void stamp_frame(uint8_t* f, const packet::SigLayout& l, uint64_t seq, uint32_t base, uint64_t ts48,
                        uint32_t tsum) {
    uint32_t sum = base + tsum;
    uint8_t* sp = f + l.seq_off;
    if (l.seq_bits == 32) {
        sum += static_cast<uint32_t>((seq >> 16) & 0xffff) + static_cast<uint32_t>(seq & 0xffff);
        const uint32_t be = __builtin_bswap32(static_cast<uint32_t>(seq));
        std::memcpy(sp, &be, 4);
    } else {
        sum += static_cast<uint32_t>((seq >> 32) & 0xffff) + static_cast<uint32_t>((seq >> 16) & 0xffff) +
               static_cast<uint32_t>(seq & 0xffff);
        put48(sp, seq);
    }
    if (l.level == packet::SigLevel::seq_ts) put48(f + l.ts_off, ts48);
    sum = (sum & 0xffff) + (sum >> 16);
    sum = (sum & 0xffff) + (sum >> 16);
    uint16_t c = static_cast<uint16_t>(~sum);
    if (!l.tcp && c == 0) c = 0xffff;  // UDP: 0 means "no checksum"
    const uint16_t be = __builtin_bswap16(c);
    std::memcpy(f + l.csum_off, &be, 2);
}

class TxSigner {
public:
    // templates[k]: the signed template of streams[k] (sig_init applied, sequence and
    // timestamp zero). Disabled when `enabled` is false or the frame kind has no room.
    TxSigner(bool enabled, const packet::SigLayout& l, const std::vector<uint16_t>& streams,
             const std::vector<std::vector<uint8_t>>& templates)
        : on_(enabled && l.level != packet::SigLevel::none), single_(streams.size() == 1), l_(l),
          seqs_(streams.size(), 0), base_(streams.size(), 0) {
        uint16_t top = 0;
        for (auto s : streams) top = std::max(top, s);
        slot_.assign(static_cast<size_t>(top) + 1, 0);
        for (uint32_t i = 0; i < streams.size(); ++i) {
            slot_[streams[i]] = i;
            if (on_ && i < templates.size()) {
                const uint8_t* c = templates[i].data() + l.csum_off;
                base_[i] = static_cast<uint16_t>(~(c[0] << 8 | c[1]));  // sum of the template's L4 words
            }
        }
        // The burst path needs the UDP layout: checksum, magic, sequence and timestamp in 16
        // contiguous bytes.
        fast_ = on_ && single_ && !l.tcp && l.level == packet::SigLevel::seq_ts && l.seq_off == l.csum_off + 4 &&
                l.ts_off == l.seq_off + 6 && !templates.empty() &&
                templates[0].size() >= size_t(l.csum_off) + 16;
        if (fast_) {
            uint32_t k = 0;
            std::memcpy(&k, templates[0].data() + l.csum_off, 4);
            key_ = k & ~uint32_t(0xffff);  // the magic; the checksum's two bytes are per packet
        }
        start_at(0);
    }
    bool on() const { return on_; }

    // Every stream's next sequence (tests start near carries and the 2^48 wrap).
    void start_at(uint64_t seq) {
        for (auto& v : seqs_) v = seq;
        // Template sum plus the sequence's words, modulo 0xffff: 2^16 is 1 mod 0xffff, so the
        // three 16-bit words of a 48-bit sequence sum to the sequence itself mod 0xffff.
        seq_sum_ = base_.empty() ? 0 : static_cast<uint32_t>((base_[0] + (seq & LR_SIG48_MASK) % 0xffff) % 0xffff);
        sum_stale_ = false;
    }

    // A new burst, stamped with the worker's clock read `now_ns` (one read per burst).
    void begin_burst(uint64_t now_ns) {
        ts_ = now_ns & LR_SIG48_MASK;
        ts_sum_ = ts_sum(l_, ts_);
    }

    // Writes the next sequence of the frame's stream, the burst timestamp and the checksum.
    void stamp(uint8_t* f) {
        // One flow per queue (the default): no need to read the frame to find its stream.
        const uint32_t k = single_ ? 0 : slot(f);
        stamp_frame(f, l_, seqs_[k]++, base_[k], ts_, ts_sum_);
        sum_stale_ = true;  // the burst path recomputes its running sum
    }

    // Stamps the frames at bufs[i] + data_off for i in [from, to) (an mbuf array and the
    // data's offset in an mbuf, say).
    //
    // The burst path (fast_):
    // - Bytes [csum, csum + 16) are checksum, magic, sequence and timestamp (the magic is
    //   constant, the timestamp the same for the whole burst): one 16-byte store per frame.
    // - The checksum is not summed per packet: each next sequence adds 1 to the folded sum
    //   (see start_at), so the checksum steps down by one, from 1 to 0xffff (UDP never
    //   sends 0). It is computed once per burst from the running sum.
    // - The 16 bytes are kept in wire order, read as two little-endian words: the next packet
    //   adds 1 << 8 to the second (the sequence's last byte) and subtracts 1 << 8 from the
    //   first (the checksum's last byte). That holds until a byte would carry or borrow, so
    //   the burst runs in segments (almost always one); at a segment's end the words are
    //   rebuilt.
    void stamp_burst(void* const* bufs, size_t data_off, uint32_t from, uint32_t to) {
        const uint32_t n = to - from;
        uint64_t seq = seqs_[0];
        if (!fast_ || ((seq + n) >> 48) != (seq >> 48)) {
            for (uint32_t i = from; i < to; ++i) stamp(static_cast<uint8_t*>(bufs[i]) + data_off);
            return;
        }
        if (sum_stale_) start_at(seq);
        uint32_t sum = seq_sum_ + ts_sum_;
        sum = (sum & 0xffff) + (sum >> 16);
        sum = (sum & 0xffff) + (sum >> 16);
        uint32_t c = ~sum & 0xffff;
        if (c == 0) c = 0xffff;
        const uint64_t ts_be = __builtin_bswap64(ts_ << 16) << 16;  // wire bytes 10..15 of the 16
        const size_t co = data_off + l_.csum_off;
        for (uint32_t i = from; i < to;) {
            uint32_t m = to - i;
            m = std::min<uint32_t>(m, 256 - static_cast<uint32_t>(seq & 0xff));  // sequence byte carry
            m = std::min<uint32_t>(m, (c & 0xff) + 1);                           // checksum byte borrow
            m = std::min<uint32_t>(m, c);                                        // checksum 1 -> 0xffff
            // Wire bytes: [0, 2) checksum, [2, 4) magic, [4, 10) sequence, [10, 16) timestamp.
            const uint64_t sq = __builtin_bswap64(seq << 16);  // the sequence's 6 bytes, then 0, 0
            const uint64_t w0 = key_ | __builtin_bswap16(static_cast<uint16_t>(c)) | (sq << 32);
            const uint64_t w1 = ((sq >> 32) & 0xffff) | ts_be;
            const uint32_t e = i + m;
#ifdef __SSE2__
            __m128i v = _mm_set_epi64x(static_cast<long long>(w1), static_cast<long long>(w0));
            const __m128i d = _mm_set_epi64x(1LL << 8, -(1LL << 8));
            for (; i < e; ++i) {
                _mm_storeu_si128(reinterpret_cast<__m128i*>(static_cast<uint8_t*>(bufs[i]) + co), v);
                v = _mm_add_epi64(v, d);
            }
#else
            uint64_t a = w0, b = w1;
            for (; i < e; ++i, a -= uint64_t(1) << 8, b += uint64_t(1) << 8) {
                uint8_t* f = static_cast<uint8_t*>(bufs[i]) + co;
                std::memcpy(f, &a, 8);
                std::memcpy(f + 8, &b, 8);
            }
#endif
            seq += m;
            c -= m;
            if (c == 0) c = 0xffff;
        }
        seqs_[0] = seq;
        seq_sum_ += n % 0xffff;
        if (seq_sum_ >= 0xffff) seq_sum_ -= 0xffff;
    }

    // A stamped frame that was never sent: its sequence does not count as sent.
    void unsent(const uint8_t* f) { ++unsent_[slot(f)]; }
    void prepare_unsent() { unsent_.assign(seqs_.size(), 0); }
    // Per stream slot: frames stamped and handed over, minus those never sent.
    std::vector<uint64_t> sent() const {
        std::vector<uint64_t> v(seqs_.size());
        for (size_t i = 0; i < v.size(); ++i) v[i] = seqs_[i] - (unsent_.empty() ? 0 : unsent_[i]);
        return v;
    }

private:
    uint32_t slot(const uint8_t* f) const {
        const uint16_t s = packet::sig_stream(f, l_);
        return s < slot_.size() ? slot_[s] : 0;
    }
    bool on_;
    bool single_;
    bool fast_ = false;
    packet::SigLayout l_;
    std::vector<uint64_t> seqs_, unsent_;
    std::vector<uint32_t> base_;
    std::vector<uint32_t> slot_;
    uint64_t key_ = 0;      // burst path: the magic, as wire bytes [2, 4) of a little-endian word
    bool sum_stale_ = false;  // stamp() ran since: seq_sum_ must be recomputed
    uint32_t seq_sum_ = 0;  // burst path: (template sum + next sequence) mod 0xffff
    uint64_t ts_ = 0;
    uint32_t ts_sum_ = 0;
};

}  // namespace lr::worker
