/* What every linerate XDP program includes: the wire format's definition (lr_wire.h), with
 * the checksum hook it needs written for the verifier, and the test-traffic filter a program
 * can be given (protocols, port ranges). One copy per program; BPF has no linking here. */
#ifndef LR_CLASSIFY_BPF_H
#define LR_CLASSIFY_BPF_H

#include <linux/bpf.h>
#include <bpf/bpf_endian.h>
#include <bpf/bpf_helpers.h>

#include "lr_shared.h"

/* The one's-complement sum of lr_wire.h's contract: 16-bit big-endian words, 8 bytes per step
 * of bpf_loop (kernel 5.17+), whose callback the verifier checks once, whatever the length:
 * an unrolled loop over packet bytes would give it one state per step (the proven packet range
 * grows with each) and exceed its limits on long frames. An XDP program without multi-buffer
 * support sees frames of at most a page, so segments are at most LR_XDP_MAX_L4 bytes here; a
 * longer one cannot arrive, and would fail its checksum. */
#define LR_XDP_MAX_L4 4096

struct lr_sum_ctx {
    const __u8 *p;
    const __u8 *end;
    __u32 len;
    __u32 sum;
};

static long lr_sum_step(__u32 i, void *arg)
{
    struct lr_sum_ctx *c = arg;
    __u32 off = (i & (LR_XDP_MAX_L4 / 8 - 1)) * 8; /* i < len / 8: the mask shows the verifier the bound */
    if (off + 8 > c->len)
        return 1;
    const __u8 *q = c->p + off;
    if (q + 8 > c->end)
        return 1;
    c->sum += ((__u32)q[0] << 8 | q[1]) + ((__u32)q[2] << 8 | q[3]) + ((__u32)q[4] << 8 | q[5]) +
              ((__u32)q[6] << 8 | q[7]);
    return 0;
}

static __always_inline __u32 lr_wire_sum(const __u8 *p, __u32 len, const __u8 *end, __u32 seed)
{
    if (len > LR_XDP_MAX_L4)
        return seed + 1;
    struct lr_sum_ctx c = {p, end, len, seed};
    bpf_loop(len / 8, lr_sum_step, &c, 0);
    __u32 sum = c.sum;
    const __u8 *t = p + (len & ~7u);
    __u32 rest = len & 7;
    if (rest >= 2) {
        if (t + 2 > end)
            return sum + 1;
        sum += (__u32)t[0] << 8 | t[1];
    }
    if (rest >= 4) {
        if (t + 4 > end)
            return sum + 1;
        sum += (__u32)t[2] << 8 | t[3];
    }
    if (rest >= 6) {
        if (t + 6 > end)
            return sum + 1;
        sum += (__u32)t[4] << 8 | t[5];
    }
    if (len & 1) { /* len - 1 < LR_XDP_MAX_L4: the mask only shows the verifier the bound */
        const __u8 *q = p + ((len - 1) & (LR_XDP_MAX_L4 - 1));
        if (q + 1 > end)
            return sum + 1;
        sum += (__u32)q[0] << 8;
    }
    return sum;
}

#include "lr_wire.h"

/* Set by user space before load: the test traffic a program acts on (programs that steer or
 * reflect apply it on top of the signature's verdict). */
const volatile __u8 match_udp = 1;
const volatile __u8 match_tcp = 1;
const volatile __u16 src_port_lo = 0, src_port_hi = 65535;
const volatile __u16 dst_port_lo = 0, dst_port_hi = 65535;
/* Every frame, whatever it is (linerate impair forwards all of them, ARP and ND included). */
const volatile __u8 match_all = 0;

static __always_inline int lr_match(const struct lr_wire_hdrs *h)
{
    if (h->proto == 17 && !match_udp)
        return 0;
    if (h->proto == 6 && !match_tcp)
        return 0;
    return h->sport >= src_port_lo && h->sport <= src_port_hi && h->dport >= dst_port_lo && h->dport <= dst_port_hi;
}

#endif
