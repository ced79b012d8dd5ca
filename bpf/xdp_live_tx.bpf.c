// SPDX-License-Identifier: MIT
/* linerate's live-frames sender: run by BPF_PROG_RUN with BPF_F_TEST_XDP_LIVE_FRAMES over
 * kernel copies of one template frame, it signs each copy and redirects it out of the egress
 * interface, without the frame ever reaching user space. It writes only what varies: the
 * stream's next sequence, the kernel clock's timestamp (CLOCK_MONOTONIC, 48 bits, as the other
 * engines stamp; one clock reading serves a few frames of a batch), and the L4 checksum,
 * computed from the template's own sum kept per stream (the copies are not restored between
 * runs, so nothing is derived from their old contents).
 *
 * Per-stream state lives in an mmapable array, one cache line per stream (per CPU for plain
 * frames, which carry no stream): a stream belongs to
 * one worker, pinned to one CPU, so every entry has a single writer and user space reads the
 * sequence (= frames produced) without a system call. The layout comes from .rodata, set by
 * user space before loading (src/backend/afxdp/live_tx.cpp). */
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>

#include "lr_shared.h"

const volatile __u32 out_ifindex = 0;
const volatile __u32 csum_off = 0;   /* L4 checksum */
const volatile __u32 seq_off = 0;    /* sequence: 6 bytes (UDP) or 4 (TCP) */
const volatile __u32 ts_off = 0;     /* timestamp: 6 bytes, when has_ts */
const volatile __u32 stream_off = 0; /* stream id: 2 bytes */
const volatile __u32 min_len = 0;    /* the frame reaches past every offset above */
const volatile __u8 seq_bits = 48;   /* 48 (UDP), 32 (TCP), 0: plain frames, nothing to sign */
const volatile __u8 has_ts = 1;
const volatile __u8 udp = 1;

struct {
    __uint(type, BPF_MAP_TYPE_ARRAY);
    __uint(map_flags, BPF_F_MMAPABLE);
    __uint(max_entries, 1); /* set to the number of streams before loading */
    __type(key, __u32);
    __type(value, struct lr_live_stream);
} streams SEC(".maps");

static __always_inline void put48(__u8 *p, __u64 v)
{
    p[0] = v >> 40;
    p[1] = v >> 32;
    p[2] = v >> 24;
    p[3] = v >> 16;
    p[4] = v >> 8;
    p[5] = v;
}

SEC("xdp")
int lr_live_tx(struct xdp_md *ctx)
{
    __u8 *data = (__u8 *)(long)ctx->data;
    __u8 *end = (__u8 *)(long)ctx->data_end;
    if (seq_bits == 0) {
        /* Plain frames: counted per CPU (one worker per CPU), nothing written. */
        __u32 cpu = bpf_get_smp_processor_id();
        struct lr_live_stream *c = bpf_map_lookup_elem(&streams, &cpu);
        if (!c)
            return XDP_ABORTED;
        c->seq++;
        return bpf_redirect(out_ifindex, 0);
    }
    if (data + min_len > end || min_len > LR_LIVE_MAX_FRAME)
        return XDP_ABORTED;
    __u8 *sp = data + stream_off;
    if (sp + 2 > end)
        return XDP_ABORTED;
    __u32 key = (__u32)sp[0] << 8 | sp[1];
    struct lr_live_stream *st = bpf_map_lookup_elem(&streams, &key);
    if (!st)
        return XDP_ABORTED;
    __u64 seq = st->seq++;
    __u32 sum = (__u32)st->base_sum;
    __u8 *q = data + seq_off;
    if (seq_bits == 32) {
        if (q + 4 > end)
            return XDP_ABORTED;
        q[0] = seq >> 24;
        q[1] = seq >> 16;
        q[2] = seq >> 8;
        q[3] = seq;
        sum += (__u32)((seq >> 16) & 0xffff) + (__u32)(seq & 0xffff);
    } else {
        if (q + 6 > end)
            return XDP_ABORTED;
        seq &= LR_SIG48_MASK;
        put48(q, seq);
        sum += (__u32)(seq >> 32) + (__u32)((seq >> 16) & 0xffff) + (__u32)(seq & 0xffff);
    }
    if (has_ts) {
        __u8 *t = data + ts_off;
        if (t + 6 > end)
            return XDP_ABORTED;
        /* One clock reading serves ts_every consecutive frames of a batch, which leave
         * together at the batch's flush anyway: the helper call was about 40 % of the cost
         * per frame on the veth bed. The first frame of every run reads the clock (user space
         * zeroes ts_left). */
        __u64 ts;
        if (st->ts_left == 0) {
            ts = bpf_ktime_get_ns() & LR_SIG48_MASK;
            st->ts = ts;
            st->ts_left = st->ts_every ? st->ts_every : 1;
        } else {
            ts = st->ts;
        }
        st->ts_left--;
        put48(t, ts);
        sum += (__u32)(ts >> 32) + (__u32)((ts >> 16) & 0xffff) + (__u32)(ts & 0xffff);
    }
    sum = (sum & 0xffff) + (sum >> 16);
    sum = (sum & 0xffff) + (sum >> 16);
    __u16 c = (__u16)~sum;
    if (udp && c == 0)
        c = 0xffff; /* UDP: 0 means "no checksum" */
    __u8 *cp = data + csum_off;
    if (cp + 2 > end)
        return XDP_ABORTED;
    cp[0] = c >> 8;
    cp[1] = c;
    return bpf_redirect(out_ifindex, 0);
}

char LICENSE[] SEC("license") = "Dual MIT/GPL";
