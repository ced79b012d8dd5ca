#include "packet/signature.h"

#include <cstring>
#include <utility>

#include "packet/checksum.h"

namespace lr::packet {
namespace {

inline uint16_t rd16(const uint8_t* p) { return static_cast<uint16_t>(p[0] << 8 | p[1]); }
inline void wr16(uint8_t* p, uint16_t v) {
    p[0] = static_cast<uint8_t>(v >> 8);
    p[1] = static_cast<uint8_t>(v);
}
inline uint64_t rd48(const uint8_t* p) {
    uint64_t v = 0;
    for (int i = 0; i < 6; ++i) v = v << 8 | p[i];
    return v;
}
inline uint32_t rd32(const uint8_t* p) { return uint32_t(rd16(p)) << 16 | rd16(p + 2); }

constexpr unsigned kUdpSig = 12, kUdpSigTs = 18, kTs = 6;

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

// Ethernet with at most one 802.1Q/802.1ad tag, then an option-less IPv4 header or an IPv6
// header, all within `len`. What each caller checks beyond that is its own.
struct L3 {
    size_t ip_off = 0, l4_off = 0;
    bool v6 = false;
    uint8_t proto = 0;
};
bool walk_l3(const uint8_t* p, size_t len, L3& h) {
    if (len < 14) return false;
    size_t off = 12;
    uint16_t et = rd16(p + off);
    off += 2;
    if (et == 0x8100 || et == 0x88a8) {
        if (len < off + 4) return false;
        et = rd16(p + off + 2);
        off += 4;
    }
    const uint8_t* ip = p + off;
    h.ip_off = off;
    if (et == 0x0800) {
        if (len < off + 20 || (ip[0] & 0xf) != 5) return false;
        h.v6 = false;
        h.proto = ip[9];
        h.l4_off = off + 20;
    } else if (et == 0x86dd) {
        if (len < off + 40) return false;
        h.v6 = true;
        h.proto = ip[6];
        h.l4_off = off + 40;
    } else {
        return false;
    }
    return true;
}

}  // namespace

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
    if (l.tcp) {
        l.csum_off = static_cast<uint16_t>(l.l4_off + 16);
        l.seq_off = static_cast<uint16_t>(l.l4_off + 4);
        l.seq_bits = 32;
        l.level = payload >= kTs ? SigLevel::seq_ts : SigLevel::seq;
        l.ts_off = static_cast<uint16_t>(payload_off);
    } else {
        l.csum_off = static_cast<uint16_t>(l.l4_off + 6);
        l.seq_off = static_cast<uint16_t>(payload_off + 2);
        l.ts_off = static_cast<uint16_t>(payload_off + 8);
        l.level = payload >= kUdpSigTs ? SigLevel::seq_ts : payload >= kUdpSig ? SigLevel::seq : SigLevel::none;
        l.id_off = static_cast<uint16_t>(payload_off + (l.level == SigLevel::seq_ts ? 14 : 8));
    }
    return l;
}

void sig_init(std::vector<uint8_t>& f, const SigLayout& l, uint16_t nonce, uint16_t stream) {
    if (l.level == SigLevel::none) return;
    uint8_t* l4 = f.data() + l.l4_off;
    if (l.tcp) {
        wr16(l4 + 8, kSigMagic);  // ack number
        wr16(l4 + 10, nonce);
        wr16(l4 + 18, stream);    // urgent pointer (URG flag unset: ignored by stacks)
        std::memset(l4 + 4, 0, 4);
    } else {
        wr16(f.data() + l.seq_off - 2, kSigMagic);
        std::memset(f.data() + l.seq_off, 0, 6);
        wr16(f.data() + l.id_off, nonce);
        wr16(f.data() + l.id_off + 2, stream);
    }
    if (l.level == SigLevel::seq_ts) std::memset(f.data() + l.ts_off, 0, kTs);
    // Recompute the L4 checksum from scratch once.
    wr16(f.data() + l.csum_off, 0);
    uint16_t c = csum_fold(l4_sum(f.data() + l.ip_off, l.v6, l4, f.size() - l.l4_off, l.tcp ? 6 : 17));
    if (!l.tcp && c == 0) c = 0xffff;
    wr16(f.data() + l.csum_off, c);
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

SigInfo sig_classify(const uint8_t* p, size_t len, uint16_t nonce, uint32_t streams) {
    SigInfo r;
    L3 h;
    if (!walk_l3(p, len, h)) return r;
    const uint8_t* ip = p + h.ip_off;
    const bool v6 = h.v6;
    const uint8_t proto = h.proto;
    const size_t l4off = h.l4_off;
    size_t l4len;
    if (!v6) {
        if ((ip[0] >> 4) != 4) return r;
        if (rd16(ip + 6) & 0x3fff) return r;  // fragment
        const size_t tot = rd16(ip + 2);
        if (tot < 20 || h.ip_off + tot > len) return r;
        l4len = tot - 20;
    } else {
        if ((ip[0] >> 4) != 6) return r;
        const size_t pl = rd16(ip + 4);
        if (l4off + pl > len) return r;
        l4len = pl;
    }
    const uint8_t* l4 = p + l4off;
    uint16_t magic, got_nonce, stream;
    size_t payload_off;
    if (proto == 17) {
        if (l4len < 8 || rd16(l4 + 4) != l4len) return r;
        payload_off = 8;
        // Under 12 payload bytes there is no signature (and no nonce to say whose it is).
        if (l4len < payload_off + kUdpSig) return r;
        const uint8_t* s = l4 + payload_off;
        r.has_ts = l4len >= payload_off + kUdpSigTs;
        const uint8_t* id = s + (r.has_ts ? 14 : 8);
        magic = rd16(s);
        got_nonce = rd16(id);
        stream = rd16(id + 2);
        if (magic != kSigMagic) {
            r.has_ts = false;
            return r;
        }
        if (got_nonce != nonce) {
            r.stale = true;
            r.has_ts = false;
            return r;
        }
        r.cls = FrameClass::malformed;
        r.seq = rd48(s + 2);
        r.seq_bits = 48;
        if (r.has_ts) r.ts_ns = rd48(s + 8);
    } else if (proto == 6) {
        if (l4len < 20) return r;
        magic = rd16(l4 + 8);
        got_nonce = rd16(l4 + 10);
        if (magic != kSigMagic) return r;
        if (got_nonce != nonce) {
            r.stale = true;
            return r;
        }
        r.cls = FrameClass::malformed;
        if ((l4[12] >> 4) != 5) return r;
        stream = rd16(l4 + 18);
        r.seq = rd32(l4 + 4);
        r.seq_bits = 32;
        r.has_ts = l4len >= 20 + kTs;
        if (r.has_ts) r.ts_ns = rd48(l4 + 20);
    } else {
        return r;
    }
    // Magic and nonce match: from here on a failure is "malformed", never "ours".
    const uint16_t stored = rd16(l4 + (proto == 17 ? 6 : 16));
    if (proto == 17 && stored == 0) return r;  // we always checksum
    if (csum_fold(l4_sum(ip, v6, l4, l4len, proto)) != 0) return r;
    if (stream >= streams) return r;
    r.stream = stream;
    r.cls = FrameClass::ours;
    return r;
}

bool reflect_swap(uint8_t* p, size_t len) {
    L3 h;
    if (!walk_l3(p, len, h)) return false;
    uint8_t* ip = p + h.ip_off;
    const uint8_t proto = h.proto;
    const size_t l4off = h.l4_off;
    uint8_t* l4 = p + l4off;
    if (proto == 17) {
        if (len < l4off + 8 + 2 || rd16(l4 + 8) != kSigMagic) return false;
    } else if (proto == 6) {
        if (len < l4off + 20 || rd16(l4 + 8) != kSigMagic) return false;
    } else {
        return false;
    }
    auto swap_n = [](uint8_t* a, uint8_t* b, size_t n) {
        for (size_t i = 0; i < n; ++i) std::swap(a[i], b[i]);
    };
    swap_n(p, p + 6, 6);
    if (!h.v6) swap_n(ip + 12, ip + 16, 4);
    else swap_n(ip + 8, ip + 24, 16);
    swap_n(l4, l4 + 2, 2);
    return true;
}

}  // namespace lr::packet
