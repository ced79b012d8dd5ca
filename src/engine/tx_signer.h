// Per-packet signing on the TX side, shared by every backend's TX loop: each stream (flow)
// of the queue has its own sequence counter; the timestamp is read once per burst.
//
// The checksum is not updated from the frame's old contents: each stream keeps the one's-
// complement sum of its template (sequence and timestamp zero), so a packet costs only the
// writes of sequence, timestamp and checksum, whatever the frame held before.
#pragma once
#include <cstdint>
#include <cstring>
#include <vector>

#include "packet/signature.h"
#include "stats/counters.h"

namespace lr::engine {

class TxSigner {
public:
    // templates[k]: the signed template of streams[k] (sig_init applied, sequence and
    // timestamp zero). Disabled when `enabled` is false or the frame kind has no room.
    TxSigner(bool enabled, const packet::SigLayout& l, const std::vector<uint16_t>& streams,
             const std::vector<std::vector<uint8_t>>& templates)
        : on_(enabled && l.level != packet::SigLevel::none), single_(streams.size() == 1),
          udp_seq_ts_(!l.tcp && l.level == packet::SigLevel::seq_ts && l.ts_off == l.seq_off + 6), l_(l),
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
    }
    bool on() const { return on_; }

    void begin_burst() {
        const uint64_t ts = stats::now_ns() & ((uint64_t(1) << 48) - 1);
        ts_ = ts;
        for (int i = 0; i < 6; ++i) ts_bytes_[i] = static_cast<uint8_t>(ts >> (40 - 8 * i));
        ts_sum_ = l_.level == packet::SigLevel::seq_ts
                      ? static_cast<uint32_t>((ts >> 32) + ((ts >> 16) & 0xffff) + (ts & 0xffff))
                      : 0;
    }

    // Writes the next sequence of the frame's stream, the burst timestamp and the checksum.
    void stamp(uint8_t* f) {
        // One flow per queue (the default): no need to read the frame to find its stream,
        // so stamping is stores only.
        const uint32_t k = single_ ? 0 : slot(f);
        const uint64_t seq = seqs_[k]++;
        uint32_t sum = base_[k] + ts_sum_;
        uint8_t* sp = f + l_.seq_off;
        if (udp_seq_ts_) {
            // UDP: 48-bit sequence then 48-bit timestamp, 12 contiguous bytes: two stores.
            sum += static_cast<uint32_t>((seq >> 32) & 0xffff) + static_cast<uint32_t>((seq >> 16) & 0xffff) +
                   static_cast<uint32_t>(seq & 0xffff);
            const uint64_t hi = __builtin_bswap64((seq << 16) | (ts_ >> 32));
            const uint32_t lo = __builtin_bswap32(static_cast<uint32_t>(ts_));
            std::memcpy(sp, &hi, 8);
            std::memcpy(sp + 8, &lo, 4);
        } else if (l_.seq_bits == 32) {
            sum += static_cast<uint32_t>((seq >> 16) & 0xffff) + static_cast<uint32_t>(seq & 0xffff);
            for (int i = 0; i < 4; ++i) sp[i] = static_cast<uint8_t>(seq >> (24 - 8 * i));
        } else {
            sum += static_cast<uint32_t>((seq >> 32) & 0xffff) + static_cast<uint32_t>((seq >> 16) & 0xffff) +
                   static_cast<uint32_t>(seq & 0xffff);
            for (int i = 0; i < 6; ++i) sp[i] = static_cast<uint8_t>(seq >> (40 - 8 * i));
        }
        if (!udp_seq_ts_ && l_.level == packet::SigLevel::seq_ts) std::memcpy(f + l_.ts_off, ts_bytes_, 6);
        sum = (sum & 0xffff) + (sum >> 16);
        sum = (sum & 0xffff) + (sum >> 16);
        uint16_t c = static_cast<uint16_t>(~sum);
        if (!l_.tcp && c == 0) c = 0xffff;  // UDP: 0 means "no checksum"
        f[l_.csum_off] = static_cast<uint8_t>(c >> 8);
        f[l_.csum_off + 1] = static_cast<uint8_t>(c);
    }

    // Stamps frames frame(i) for i in [from, to). For the common case (one UDP stream per
    // queue with sequence and timestamp) every value lives in a local: stores through the
    // frame pointers cannot alias them, so nothing is reloaded per packet.
    template <class FramePtr>
    void stamp_burst(FramePtr frame, uint32_t from, uint32_t to) {
        if (!(single_ && udp_seq_ts_)) {
            for (uint32_t i = from; i < to; ++i) stamp(frame(i));
            return;
        }
        uint64_t seq = seqs_[0];
        const uint32_t base = base_[0] + ts_sum_;
        const size_t so = l_.seq_off, co = l_.csum_off;
        const uint64_t ts_hi = ts_ >> 32;
        const uint32_t lo = __builtin_bswap32(static_cast<uint32_t>(ts_));
        for (uint32_t i = from; i < to; ++i, ++seq) {
            uint8_t* f = frame(i);
            uint32_t sum = base + static_cast<uint32_t>((seq >> 32) & 0xffff) +
                           static_cast<uint32_t>((seq >> 16) & 0xffff) + static_cast<uint32_t>(seq & 0xffff);
            const uint64_t hi = __builtin_bswap64((seq << 16) | ts_hi);
            std::memcpy(f + so, &hi, 8);
            std::memcpy(f + so + 8, &lo, 4);
            sum = (sum & 0xffff) + (sum >> 16);
            sum = (sum & 0xffff) + (sum >> 16);
            uint16_t c = static_cast<uint16_t>(~sum);
            if (c == 0) c = 0xffff;
            const uint16_t be = __builtin_bswap16(c);
            std::memcpy(f + co, &be, 2);
        }
        seqs_[0] = seq;
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
    bool udp_seq_ts_;
    packet::SigLayout l_;
    std::vector<uint64_t> seqs_, unsent_;
    std::vector<uint32_t> base_;
    std::vector<uint32_t> slot_;
    uint8_t ts_bytes_[6] = {};
    uint64_t ts_ = 0;
    uint32_t ts_sum_ = 0;
};

}  // namespace lr::engine
