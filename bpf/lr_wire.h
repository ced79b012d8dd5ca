/* The linerate signature on the wire, defined once: its layout and the rules that say
 * whether a received frame is one of ours. Included by the BPF programs (clang -target bpf)
 * and by the C++ receive path (packet/signature.cpp, stats/rx_measure), so the XDP programs
 * and user space accept exactly the same frames.
 *
 * Layout (all big-endian):
 *   UDP, payload >= 18 bytes:   [0,2) magic 0x4C52, [2,8) sequence (48 bits),
 *                               [8,14) TX timestamp (48 bits), [14,16) run nonce, [16,18) stream
 *   UDP, payload 12..17 bytes:  [0,2) magic, [2,8) sequence, [8,10) run nonce, [10,12) stream
 *   TCP (SYN):                  acknowledgement number = magic << 16 | nonce, urgent pointer =
 *                               stream, sequence number = sequence (32 bits), payload[0,6) =
 *                               TX timestamp when the frame has room
 * The UDP length says which UDP layout a frame has.
 *
 * Every read is checked against `end` right before it, with a constant offset from a pointer
 * already checked, which is what the BPF verifier needs; loops are bounded. The includer
 * provides the one's-complement sum of the L4 segment, before including this file:
 *     static __u32 lr_wire_sum(const __u8 *p, __u32 len, const __u8 *end, __u32 seed)
 * returning `seed` plus the sum of the big-endian 16-bit words of the `len` bytes at `p` (all
 * inside `end`; an odd last byte is the high byte of a word padded with zero), as any 32-bit
 * value congruent to it modulo 0xffff that does not overflow. */
#ifndef LR_WIRE_H
#define LR_WIRE_H

#include <linux/types.h>

#define LR_SIG_MAGIC 0x4c52
#define LR_UDP_SIG_LEN 18       /* UDP payload with sequence and timestamp */
#define LR_UDP_SIG_SHORT_LEN 12 /* UDP payload with sequence only */
#define LR_TS_LEN 6
#define LR_MAX_L4_LEN 9000      /* the largest L4 segment linerate sends or checks */

/* Offsets in the UDP payload. */
#define LR_UDP_MAGIC 0
#define LR_UDP_SEQ 2
#define LR_UDP_TS 8
#define LR_UDP_NONCE 14       /* 8 in the short layout */
#define LR_UDP_STREAM 16      /* 10 in the short layout */
#define LR_UDP_SHORT_NONCE 8
#define LR_UDP_SHORT_STREAM 10
/* Offsets in the TCP header (and its payload for the timestamp). */
#define LR_TCP_SEQ 4          /* the sequence number field */
#define LR_TCP_MAGIC 8        /* the acknowledgement number: magic, then nonce */
#define LR_TCP_NONCE 10
#define LR_TCP_STREAM 18      /* the urgent pointer (URG unset: ignored by stacks) */
#define LR_TCP_TS 20          /* the first payload bytes */
/* The run nonce is 32 bits: its low half is in the signature (above), its high half in the IP
 * header, a field linerate's frames do not otherwise use: the IPv4 identification (meaningless
 * in an unfragmented DF datagram, RFC 6864) or the low 16 bits of the IPv6 flow label. */
#define LR_IP4_ID_HI 4
#define LR_IP6_ID_HI 2

/* What a received frame is. */
enum lr_verdict {
    LR_FOREIGN = 0,   /* not a linerate test frame: no magic where it goes, not UDP/TCP over IP */
    LR_OURS = 1,      /* magic, this run's nonce, correct lengths and checksum, known stream */
    LR_MALFORMED = 2, /* magic and this run's nonce, but it fails a check: never counted as ours */
    LR_STALE = 3,     /* magic with another run's nonce */
};

/* Where the header walk found things. */
struct lr_wire_hdrs {
    const __u8 *ip;
    const __u8 *l4;
    __u32 l4_len; /* from the IP header: IPv4 total length - 20, or the IPv6 payload length */
    __u16 sport, dport;
    __u8 proto;   /* 17 UDP, 6 TCP */
    __u8 v6;
};

/* The signature's fields, valid for LR_OURS (and, but for the checked ones, LR_MALFORMED). */
struct lr_wire_sig {
    __u64 seq;    /* as on the wire: 48 bits (UDP) or 32 (TCP) */
    __u64 ts;     /* 48-bit TX timestamp, when has_ts */
    __u32 nonce;  /* the header's 16 bits (IPv4 identification, IPv6 flow label) << 16 | the signature's */
    __u16 stream;
    __u8 seq_bits;
    __u8 has_ts;
};

static inline __u16 lr_rd16(const __u8 *p) { return (__u16)((__u16)p[0] << 8 | p[1]); }

/* An includer may supply its own lr_rd48 (defining LR_WIRE_HAVE_RD48), one that reads the two
 * bytes before `p` as well: every 48-bit field here lies at least 2 bytes into the frame. */
#ifndef LR_WIRE_HAVE_RD48
static inline __u64 lr_rd48(const __u8 *p)
{
    return (__u64)p[0] << 40 | (__u64)p[1] << 32 | (__u64)p[2] << 24 | (__u64)p[3] << 16 | (__u64)p[4] << 8 | p[5];
}
#endif

/* Ethernet, at most one 802.1Q/802.1ad tag, an option-less unfragmented IPv4 header or an IPv6
 * header (no extension headers), then a complete UDP or TCP header, all inside the frame, and
 * an L4 length that fits it. Returns 1 and fills `h` for such a frame, 0 otherwise. */
static inline int lr_wire_walk(const __u8 *p, const __u8 *end, struct lr_wire_hdrs *h)
{
    if (p + 14 > end)
        return 0;
    __u16 et = lr_rd16(p + 12);
    const __u8 *l3 = p + 14;
    if (et == 0x8100 || et == 0x88a8) {
        if (l3 + 4 > end)
            return 0;
        et = lr_rd16(l3 + 2);
        l3 += 4;
    }
    if (et == 0x0800) {
        if (l3 + 20 > end)
            return 0;
        if (l3[0] != 0x45)      /* version 4, no options */
            return 0;
        if (lr_rd16(l3 + 6) & 0x3fff) /* a fragment: the ports are not in every piece */
            return 0;
        __u16 tot = lr_rd16(l3 + 2);
        if (tot < 20)
            return 0;
        h->proto = l3[9];
        h->l4_len = (__u32)tot - 20;
        h->v6 = 0;
        h->l4 = l3 + 20;
    } else if (et == 0x86dd) {
        if (l3 + 40 > end)
            return 0;
        if ((l3[0] >> 4) != 6)
            return 0;
        h->proto = l3[6];
        h->l4_len = lr_rd16(l3 + 4);
        h->v6 = 1;
        h->l4 = l3 + 40;
    } else {
        return 0;
    }
    h->ip = l3;
    if (h->l4_len > LR_MAX_L4_LEN || h->l4 + h->l4_len > end)
        return 0;
    const __u8 *l4 = h->l4;
    if (h->proto == 17) {
        if (l4 + 8 > end || h->l4_len < 8)
            return 0;
    } else if (h->proto == 6) {
        if (l4 + 20 > end || h->l4_len < 20)
            return 0;
    } else {
        return 0;
    }
    h->sport = lr_rd16(l4);
    h->dport = lr_rd16(l4 + 2);
    return 1;
}

/* The L4 checksum over the pseudo-header and the segment: 1 when it verifies. */
static inline int lr_wire_csum_ok(const struct lr_wire_hdrs *h, const __u8 *end)
{
    __u32 sum = (__u32)h->proto + h->l4_len;
    const __u8 *a = h->ip;
    if (!h->v6) {
        if (a + 20 > end)
            return 0;
        sum += lr_rd16(a + 12) + lr_rd16(a + 14) + lr_rd16(a + 16) + lr_rd16(a + 18);
    } else {
        if (a + 40 > end)
            return 0;
        for (int i = 8; i < 40; i += 2)
            sum += lr_rd16(a + i);
    }
    sum = lr_wire_sum(h->l4, h->l4_len, end, sum);
    sum = (sum & 0xffff) + (sum >> 16);
    sum = (sum & 0xffff) + (sum >> 16);
    return sum == 0xffff;
}

/* How a receiver checks the run nonce. */
#define LR_NONCE_EXACT 0 /* all 32 bits: the signature's half and the IP header's */
#define LR_NONCE_ANY 1   /* any run's */
#define LR_NONCE_SIG 2   /* the signature's half alone: the frames come back through a host's own stack (a UDP
                          * echo service), which writes an IP header of its own */

static inline int lr_nonce_ok(int mode, __u32 got, __u32 want)
{
    if (mode == LR_NONCE_ANY)
        return 1;
    if (mode == LR_NONCE_SIG)
        return ((got ^ want) & 0xffff) == 0;
    return got == want;
}

/* Classifies a frame whose headers lr_wire_walk found (see lr_wire_classify). */
static inline int lr_wire_classify_walked(const struct lr_wire_hdrs *h, const __u8 *end, __u32 nonce, int nonce_mode,
                                          __u32 streams, int csum_verified, struct lr_wire_sig *s);

/* Classifies a received frame: `nonce` is the run's, checked as `nonce_mode` says (LR_NONCE_ANY:
 * a reflector accepts every run's frames, but only well-formed ones), `streams` the
 * number of valid stream ids; `csum_verified`: the device already verified the L4 checksum
 * (a NIC's receive offload), so it is not summed again. Never reads outside [p, end). */
static inline int lr_wire_classify(const __u8 *p, const __u8 *end, __u32 nonce, int nonce_mode, __u32 streams,
                                   int csum_verified, struct lr_wire_hdrs *h, struct lr_wire_sig *s)
{
    if (!lr_wire_walk(p, end, h))
        return LR_FOREIGN;
    return lr_wire_classify_walked(h, end, nonce, nonce_mode, streams, csum_verified, s);
}

static inline int lr_wire_classify_walked(const struct lr_wire_hdrs *h, const __u8 *end, __u32 nonce, int nonce_mode,
                                          __u32 streams, int csum_verified, struct lr_wire_sig *s)
{
    const __u8 *l4 = h->l4;
    /* The run identity's high half rides in the IP header (lr_wire_id_hi). */
    const __u8 *id_hi = h->ip + (h->v6 ? LR_IP6_ID_HI : LR_IP4_ID_HI);
    if (id_hi + 2 > end)
        return LR_FOREIGN;
    const __u32 hi = (__u32)lr_rd16(id_hi) << 16;
    if (h->proto == 17) {
        if (l4 + 8 > end)
            return LR_FOREIGN;
        if (lr_rd16(l4 + 4) != h->l4_len) /* the UDP length must agree with the IP header */
            return LR_FOREIGN;
        /* Under 12 payload bytes there is no signature (and no nonce to say whose it is). */
        if (h->l4_len < 8 + LR_UDP_SIG_SHORT_LEN)
            return LR_FOREIGN;
        const __u8 *sig = l4 + 8;
        if (sig + LR_UDP_SIG_SHORT_LEN > end)
            return LR_FOREIGN;
        if (lr_rd16(sig + LR_UDP_MAGIC) != LR_SIG_MAGIC)
            return LR_FOREIGN;
        s->seq = lr_rd48(sig + LR_UDP_SEQ);
        s->seq_bits = 48;
        if (h->l4_len >= 8 + LR_UDP_SIG_LEN) {
            if (sig + LR_UDP_SIG_LEN > end)
                return LR_FOREIGN;
            s->has_ts = 1;
            s->ts = lr_rd48(sig + LR_UDP_TS);
            s->nonce = hi | lr_rd16(sig + LR_UDP_NONCE);
            s->stream = lr_rd16(sig + LR_UDP_STREAM);
        } else {
            s->has_ts = 0;
            s->ts = 0;
            s->nonce = hi | lr_rd16(sig + LR_UDP_SHORT_NONCE);
            s->stream = lr_rd16(sig + LR_UDP_SHORT_STREAM);
        }
        if (!lr_nonce_ok(nonce_mode, s->nonce, nonce))
            return LR_STALE;
        /* Magic and nonce match: from here on a failure is "malformed", never "ours". */
        if (lr_rd16(l4 + 6) == 0) /* linerate always sends a UDP checksum */
            return LR_MALFORMED;
    } else {
        if (l4 + 20 > end)
            return LR_FOREIGN;
        if (lr_rd16(l4 + LR_TCP_MAGIC) != LR_SIG_MAGIC)
            return LR_FOREIGN;
        s->nonce = hi | lr_rd16(l4 + LR_TCP_NONCE);
        if (!lr_nonce_ok(nonce_mode, s->nonce, nonce))
            return LR_STALE;
        if ((l4[12] >> 4) != 5) /* data offset: linerate's SYNs carry no options */
            return LR_MALFORMED;
        s->stream = lr_rd16(l4 + LR_TCP_STREAM);
        s->seq = (__u64)lr_rd16(l4 + LR_TCP_SEQ) << 16 | lr_rd16(l4 + LR_TCP_SEQ + 2);
        s->seq_bits = 32;
        s->has_ts = 0;
        s->ts = 0;
        if (h->l4_len >= LR_TCP_TS + LR_TS_LEN) {
            if (l4 + LR_TCP_TS + LR_TS_LEN > end)
                return LR_FOREIGN;
            s->has_ts = 1;
            s->ts = lr_rd48(l4 + LR_TCP_TS);
        }
    }
    if (!csum_verified && !lr_wire_csum_ok(h, end))
        return LR_MALFORMED;
    if (s->stream >= streams)
        return LR_MALFORMED;
    return LR_OURS;
}

#endif
