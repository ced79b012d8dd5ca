#include "packet/sig_frame.h"

#include "packet/checksum.h"
#include "packet/wire.h"

namespace lr::packet {

SigLayout sign_frame(uint8_t* f, size_t len, uint32_t nonce, uint16_t stream) {
    SigLayout l;  // level none: untouched
    // The receive classifier's own header walk (bpf/lr_wire.h) decides what is a UDP frame.
    lr_wire_hdrs h;
    if (!lr_wire_walk(f, f + len, &h) || h.proto != 17) return l;
    // The walk checked that the whole datagram (h.l4_len bytes from h.l4) is inside the frame.
    const uint8_t* udp = h.l4;
    if (lr_rd16(udp + 4) != h.l4_len) return l;  // the classifier refuses disagreeing lengths
    const uint32_t payload = h.l4_len - 8;
    if (payload < LR_UDP_SIG_SHORT_LEN) return l;
    if (!h.v6 && inet_checksum(h.ip, 20) != 0) return l;  // a broken IPv4 header stays broken

    l.v6 = h.v6 != 0;
    l.ip_off = static_cast<uint16_t>(h.ip - f);
    l.l4_off = static_cast<uint16_t>(h.l4 - f);
    l.csum_off = static_cast<uint16_t>(l.l4_off + 6);
    const unsigned payload_off = l.l4_off + 8u;
    l.level = payload >= LR_UDP_SIG_LEN ? SigLevel::seq_ts : SigLevel::seq;
    l.seq_off = static_cast<uint16_t>(payload_off + LR_UDP_SEQ);
    l.ts_off = static_cast<uint16_t>(payload_off + LR_UDP_TS);
    l.id_off = static_cast<uint16_t>(payload_off + (l.level == SigLevel::seq_ts ? LR_UDP_NONCE : LR_UDP_SHORT_NONCE));
    l.seq_bits = 48;
    sig_init(f, h.l4_len, l, nonce, stream);
    return l;
}

}  // namespace lr::packet
