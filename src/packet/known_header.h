// The receive path's known-header lane: a frame whose headers are byte for byte those of a
// frame of its flow the fast lane (classify_fast) already took needs none of its checks again.
// Only the bytes that change from frame to frame are read apart: the UDP checksum (present),
// the L4 sum over what changed, the sequence and the timestamp. A frame that differs anywhere
// else, or is of another length, is declined, and the fast lane (then the general rules)
// decides; what the fast lane takes is learnt.
//
// Which bytes it compares, in a frame of the fast lane's layout (untagged IPv4 without options,
// UDP, the full signature): 12-43 (EtherType, the IPv4 header, the ports, the UDP length, the
// signature's magic; not the UDP checksum at 40-41) and 56-59 (the run identity's low half and
// the stream). Every field classify_fast checks lies there. The L4 sum of those bytes (with the
// pseudo-header) is learnt too; a frame then adds its bytes 40-55 (checksum, magic, sequence,
// timestamp) and any L4 bytes after its signature.
#pragma once
#include <array>
#include <cstdint>
#include <cstring>

#include "packet/wire.h"

namespace lr::packet {

// Which bytes of a 60-byte frame KnownHeaders::match compares: 12-39, 42-43 and 56-59.
inline constexpr auto kKnownCompared = [] {
    std::array<bool, 64> c{};
    for (uint32_t i = 0; i < 64; ++i) c[i] = (i >= 12 && i < 40) || i == 42 || i == 43 || (i >= 56 && i < 60);
    return c;
}();

class KnownHeaders {
public:
    // Entries: flows whose stream ids differ in their low bits keep their own.
    static constexpr uint32_t kEntries = 16;
    // The smallest frame of the layout: 14 + 20 + 8 + the signature's 18 bytes.
    static constexpr uint32_t kMinLen = 60;

    // Whether `p` (`len` bytes) is a frame classify_fast would take as one of ours, by an entry
    // learnt from one it took: then its signature is in `s`. `csum_verified`: the device checked
    // the L4 checksum.
    [[gnu::always_inline]] bool match(const uint8_t* p, uint32_t len, bool csum_verified, uint32_t nonce,
                                      lr_wire_sig& s) const {
        if (len < kMinLen) [[unlikely]]
            return false;
        const Entry& k = entries_[p[59] % kEntries];  // the stream id's low byte
        if (len != k.len) return false;
        if ((ld64(p + 12) ^ k.h12) | (ld64(p + 20) ^ k.h20) | (ld64(p + 28) ^ k.h28) |
            ((ld64(p + 36) ^ k.h36) & ~kUdpCsum) | (ld32(p + 56) ^ k.h56))
            return false;
        const uint64_t w40 = ld64(p + 40), w48 = ld64(p + 48);
        if (!(w40 & 0xffff)) return false;  // no UDP checksum: not the fast lane's
        if (!csum_verified) {
            // 32-bit halves (2^32 == 1 modulo 0xffff): five terms below 2^32, no carry to count.
            uint64_t sum = k.sum + (w40 & 0xffffffffu) + (w40 >> 32) + (w48 & 0xffffffffu) + (w48 >> 32);
            if (k.tail) [[unlikely]]
                return tail_and_sign(p, sum, k, nonce, s);
            if (!detail::folds_to_ffff({sum, 0})) return false;
        }
        static_assert(LR_UDP_TS == 8, "the timestamp is the 6 bytes that end w48");
        s.nonce = nonce;
        s.stream = k.stream;
        s.seq = lr_rd48(p + 42 + LR_UDP_SEQ);
        s.ts = __builtin_bswap64(w48) & ((uint64_t{1} << 48) - 1);
        s.seq_bits = 48;
        s.has_ts = 1;
        return true;
    }
    // `p` (`len` bytes) is a frame classify_fast took, with signature `s`: its entry.
    void learn(const uint8_t* p, uint32_t len, const lr_wire_sig& s) {
        Entry& k = entries_[p[59] % kEntries];
        k.h12 = ld64(p + 12);
        k.h20 = ld64(p + 20);
        k.h28 = ld64(p + 28);
        k.h36 = ld64(p + 36) & ~kUdpCsum;
        k.h56 = ld32(p + 56);
        const uint32_t l4_len = (uint32_t{p[16]} << 8 | p[17]) - 20;
        // The pseudo-header (addresses, protocol, L4 length) and the L4 bytes compared:
        // 34-39 (ports, length) and 56-59. Folded to 16 bits, so that match() adds a frame's
        // words to it in 64 bits with no carry out.
        const uint64_t sum = detail::sum_native(p + 26, 8) + detail::udp4_pseudo(l4_len) + detail::sum_native(p + 34, 6) +
                             detail::sum_native(p + 56, 4);
        k.sum = detail::fold16(sum);
        k.tail = 34 + l4_len - kMinLen;
        k.stream = s.stream;
        k.len = len;
        Run& r = runs_[p[59] % kEntries];
        r.usable = len == kMinLen && k.tail == 0;
        for (uint32_t i = 0; i < kMinLen; ++i) r.bytes[i] = kKnownCompared[i] ? p[i] : 0;
        r.sum = k.sum;
        r.stream = s.stream;
    }
    // The eight-frame lane's view of an entry (stats::account_run8): the bytes match()
    // compares (kKnownCompared) as they are in the flow's frames, zero elsewhere, with the entry's
    // L4 sum and stream; for an entry of a 60-byte frame (no L4 bytes after the signature).
    struct alignas(64) Run {
        uint8_t bytes[64] = {};
        uint64_t sum = 0;
        uint32_t stream = 0;
        bool usable = false;
    };
    // The entry the 60-byte frame `p` would be matched against, for the eight-frame lane; null
    // when it was not learnt from a 60-byte frame.
    const Run* run_entry(const uint8_t* p) const {
        const Run& r = runs_[p[59] % kEntries];
        return r.usable ? &r : nullptr;
    }

private:
    struct Entry;
    // A longer frame's: its L4 bytes after the signature added to `sum`, then the sum's check
    // and the signature. (Inline: as a call, it made the 64-byte frames' loop spill registers.
    // It fills the signature itself: returning only the check, to share match()'s filling,
    // cost the 64-byte frames three to four instructions each.)
    static bool tail_and_sign(const uint8_t* p, uint64_t sum, const Entry& k, uint32_t nonce, lr_wire_sig& s) {
        detail::WideSum acc{sum, 0};
        acc.add(detail::sum_native(p + kMinLen, k.tail));
        if (!detail::folds_to_ffff(acc)) return false;
        s.nonce = nonce;
        s.stream = k.stream;
        s.seq = lr_rd48(p + 42 + LR_UDP_SEQ);
        s.ts = lr_rd48(p + 42 + LR_UDP_TS);
        s.seq_bits = 48;
        s.has_ts = 1;
        return true;
    }
    static uint64_t ld64(const uint8_t* a) { return detail::load<uint64_t>(a); }
    static uint32_t ld32(const uint8_t* a) { return detail::load<uint32_t>(a); }
    // Bytes 40-41 (the UDP checksum) in the word loaded from byte 36.
    static constexpr uint64_t kUdpCsum = uint64_t{0xffff} << 32;
    struct alignas(64) Entry {
        uint64_t h12 = 0, h20 = 0, h28 = 0, h36 = 0;  // bytes 12-43, the UDP checksum's zero
        uint64_t sum = 0;      // the L4 sum of the bytes compared, pseudo-header included
        uint32_t h56 = 0;      // bytes 56-59
        uint32_t len = UINT32_MAX;  // the frame's length (none: no frame has it)
        uint32_t tail = 0;     // L4 bytes after the signature (from byte 60)
        uint32_t stream = 0;
    };
    Entry entries_[kEntries];
    Run runs_[kEntries];
};

}  // namespace lr::packet
