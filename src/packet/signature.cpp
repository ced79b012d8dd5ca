#include "packet/signature.h"

#include <cstring>
#include <utility>

#include "packet/checksum.h"
#include "packet/wire.h"

static_assert(lr::packet::kSigMagic == LR_SIG_MAGIC, "signature.h names bpf/lr_wire.h's magic");

namespace lr::packet {
namespace {

inline uint16_t rd16(const uint8_t* p) { return static_cast<uint16_t>(p[0] << 8 | p[1]); }
inline void wr16(uint8_t* p, uint16_t v) {
    p[0] = static_cast<uint8_t>(v >> 8);
    p[1] = static_cast<uint8_t>(v);
}
constexpr unsigned kUdpSig = LR_UDP_SIG_SHORT_LEN, kUdpSigTs = LR_UDP_SIG_LEN, kTs = LR_TS_LEN;

// L4 checksum over [l4, end) with the pseudo-header of the IP header at `ip`.
uint16_t l4_sum(const uint8_t* ip, bool v6, const uint8_t* l4, size_t l4len, uint8_t proto) {
    uint8_t ph[40] = {};
    size_t n;
    if (!v6) {
        std::memcpy(ph, ip + 12, 8);
        ph[9] = proto;
        wr16(ph + 10, static_cast<uint16_t>(l4len));
        n = 12;
    } else {
        std::memcpy(ph, ip + 8, 32);
        ph[34] = static_cast<uint8_t>(l4len >> 8);
        ph[35] = static_cast<uint8_t>(l4len);
        ph[39] = proto;
        n = 40;
    }
    return static_cast<uint16_t>(csum_partial(l4, l4len, csum_partial(ph, n)));
}

}  // namespace

SigInfo sig_info(int verdict, const lr_wire_sig& s) {
    SigInfo r;
    switch (verdict) {
        case LR_OURS: r.cls = FrameClass::ours; break;
        case LR_MALFORMED: r.cls = FrameClass::malformed; break;
        case LR_STALE: r.stale = true; return r;
        default: return r;
    }
    r.stream = s.stream;
    r.seq = s.seq;
    r.seq_bits = s.seq_bits;
    r.has_ts = s.has_ts;
    r.ts_ns = s.ts;
    return r;
}

const char* sig_level_str(SigLevel l) {
    switch (l) {
        case SigLevel::none: return "none";
        case SigLevel::seq: return "sequence";
        case SigLevel::seq_ts: return "sequence+timestamp";
    }
    return "?";
}

SigLayout sig_layout(const FrameSpec& s) {
    SigLayout l;
    l.tcp = s.l4 == L4::tcp;
    l.v6 = s.src_ip.v6;
    l.ip_off = static_cast<uint16_t>(14 + (s.vlan ? 4 : 0));
    l.l4_off = static_cast<uint16_t>(l.ip_off + (l.v6 ? 40 : 20));
    const unsigned payload_off = header_len(s);
    const unsigned payload = s.frame_size - kFcsLen - payload_off;
    // The offsets are bpf/lr_wire.h's, the one definition of the format.
    if (l.tcp) {
        l.csum_off = static_cast<uint16_t>(l.l4_off + 16);
        l.seq_off = static_cast<uint16_t>(l.l4_off + LR_TCP_SEQ);
        l.seq_bits = 32;
        l.level = payload >= kTs ? SigLevel::seq_ts : SigLevel::seq;
        l.ts_off = static_cast<uint16_t>(l.l4_off + LR_TCP_TS);
    } else {
        l.csum_off = static_cast<uint16_t>(l.l4_off + 6);
        l.seq_off = static_cast<uint16_t>(payload_off + LR_UDP_SEQ);
        l.ts_off = static_cast<uint16_t>(payload_off + LR_UDP_TS);
        l.level = payload >= kUdpSigTs ? SigLevel::seq_ts : payload >= kUdpSig ? SigLevel::seq : SigLevel::none;
        l.id_off = static_cast<uint16_t>(payload_off +
                                         (l.level == SigLevel::seq_ts ? LR_UDP_NONCE : LR_UDP_SHORT_NONCE));
    }
    return l;
}

void sig_init(std::vector<uint8_t>& f, const SigLayout& l, uint32_t nonce, uint16_t stream) {
    if (l.level == SigLevel::none) return;
    sig_init(f.data(), f.size() - l.l4_off, l, nonce, stream);
}

void sig_init(uint8_t* f, size_t l4_len, const SigLayout& l, uint32_t nonce, uint16_t stream) {
    if (l.level == SigLevel::none) return;
    // The nonce's high half goes into the IP header (lr_wire.h), then the IPv4 checksum again.
    uint8_t* ip = f + l.ip_off;
    const auto hi = static_cast<uint16_t>(nonce >> 16);
    if (l.v6) {
        wr16(ip + LR_IP6_ID_HI, hi);  // flow label bits 0-15; bits 16-19 left as they are (0 in built frames)
    } else {
        wr16(ip + LR_IP4_ID_HI, hi);
        wr16(ip + 10, 0);
        wr16(ip + 10, inet_checksum(ip, 20));
    }
    nonce &= 0xffff;
    uint8_t* l4 = f + l.l4_off;
    if (l.tcp) {
        wr16(l4 + LR_TCP_MAGIC, kSigMagic);
        wr16(l4 + LR_TCP_NONCE, nonce);
        wr16(l4 + LR_TCP_STREAM, stream);
        std::memset(l4 + LR_TCP_SEQ, 0, 4);
    } else {
        wr16(f + l.seq_off - LR_UDP_SEQ + LR_UDP_MAGIC, kSigMagic);
        std::memset(f + l.seq_off, 0, 6);
        wr16(f + l.id_off, nonce);
        wr16(f + l.id_off + 2, stream);
    }
    if (l.level == SigLevel::seq_ts) std::memset(f + l.ts_off, 0, kTs);
    // Recompute the L4 checksum from scratch once.
    wr16(f + l.csum_off, 0);
    uint16_t c = csum_fold(l4_sum(f + l.ip_off, l.v6, l4, l4_len, l.tcp ? 6 : 17));
    if (!l.tcp && c == 0) c = 0xffff;
    wr16(f + l.csum_off, c);
}

void sig_stamp(uint8_t* f, const SigLayout& l, uint64_t seq, uint64_t ts_ns) {
    // Sum of the old and new 16-bit words (RFC 1624: HC' = ~(~HC + ~m + m')).
    uint32_t sum = static_cast<uint16_t>(~rd16(f + l.csum_off));
    auto patch16 = [&](uint8_t* p, uint16_t v) {
        sum += static_cast<uint16_t>(~rd16(p));
        sum += v;
        wr16(p, v);
    };
    uint8_t* sp = f + l.seq_off;
    if (l.seq_bits == 32) {
        patch16(sp, static_cast<uint16_t>(seq >> 16));
        patch16(sp + 2, static_cast<uint16_t>(seq));
    } else {
        patch16(sp, static_cast<uint16_t>(seq >> 32));
        patch16(sp + 2, static_cast<uint16_t>(seq >> 16));
        patch16(sp + 4, static_cast<uint16_t>(seq));
    }
    if (l.level == SigLevel::seq_ts) {
        uint8_t* tp = f + l.ts_off;
        patch16(tp, static_cast<uint16_t>(ts_ns >> 32));
        patch16(tp + 2, static_cast<uint16_t>(ts_ns >> 16));
        patch16(tp + 4, static_cast<uint16_t>(ts_ns));
    }
    uint16_t c = csum_fold(sum);
    if (!l.tcp && c == 0) c = 0xffff;
    wr16(f + l.csum_off, c);
}

SigInfo sig_classify(const uint8_t* p, size_t len, uint32_t nonce, uint32_t streams) {
    lr_wire_hdrs h;
    lr_wire_sig sig;
    return sig_info(lr_wire_classify(p, p + len, nonce, 0, streams, 0, &h, &sig), sig);
}

bool reflect_swap(uint8_t* p, size_t len) {
    // Only frames with a valid signature (of any run) go back: never arbitrary traffic.
    lr_wire_hdrs h;
    lr_wire_sig sig;
    if (lr_wire_classify(p, p + len, 0, 1, 0x10000, 0, &h, &sig) != LR_OURS) return false;
    auto swap_n = [](uint8_t* a, uint8_t* b, size_t n) {
        for (size_t i = 0; i < n; ++i) std::swap(a[i], b[i]);
    };
    uint8_t* ip = p + (h.ip - p);
    uint8_t* l4 = p + (h.l4 - p);
    swap_n(p, p + 6, 6);
    if (!h.v6) swap_n(ip + 12, ip + 16, 4);
    else swap_n(ip + 8, ip + 24, 16);
    swap_n(l4, l4 + 2, 2);
    return true;
}

}  // namespace lr::packet
