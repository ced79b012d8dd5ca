// SPDX-License-Identifier: MIT
/* linerate's counting sink: counts linerate test frames of this run per receive queue and
 * per stream (frames received and the highest sequence) and drops them in the driver, with
 * no user space in the data path. Everything else passes to the kernel. The reduced set:
 * no checksum check, no duplicate/reorder distinction, no latency. */
#include "lr_classify.bpf.h"

const volatile __u16 run_nonce = 0;
const volatile __u32 nstreams = 1;

struct {
    __uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
    __uint(max_entries, LR_MAX_QUEUES);
    __type(key, __u32);
    __type(value, struct lr_sink_qstats);
} sink_q SEC(".maps");

struct {
    __uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
    __uint(max_entries, LR_MAX_STREAMS);
    __type(key, __u32);
    __type(value, struct lr_sink_stream);
} sink_streams SEC(".maps");

static __always_inline __u64 be48(const __u8 *p)
{
    return (__u64)p[0] << 40 | (__u64)p[1] << 32 | (__u64)p[2] << 24 | (__u64)p[3] << 16 | (__u64)p[4] << 8 | p[5];
}

SEC("xdp")
int lr_xdp_sink(struct xdp_md *ctx)
{
    void *data = (void *)(long)ctx->data;
    void *end = (void *)(long)ctx->data_end;
    __u32 q = ctx->rx_queue_index;
    struct lr_sink_qstats *st = bpf_map_lookup_elem(&sink_q, &q);
    if (!st)
        return XDP_PASS;
    st->frames++;
    struct lr_hdrs h;
    if (classify_hdrs(data, end, &h) != LR_CLASS_OURS) {
        st->foreign++;
        return XDP_PASS;
    }
    __u8 *l4 = (__u8 *)h.ports;
    __u32 stream;
    __u64 seq;
    if (match_tcp) {
        if (l4 + 20 > (__u8 *)end)
            goto foreign;
        if (l4[8] != 0x4c || l4[9] != 0x52 || (l4[10] << 8 | l4[11]) != run_nonce)
            goto foreign;
        stream = l4[18] << 8 | l4[19];
        seq = (__u64)l4[4] << 24 | (__u64)l4[5] << 16 | (__u64)l4[6] << 8 | l4[7];
    } else {
        /* Payload: magic, 48-bit sequence, [48-bit timestamp,] nonce, stream id; the UDP
         * length says whether the timestamp is there (18 payload bytes or more). */
        __u8 *s = l4 + 8;
        if (s + 12 > (__u8 *)end)
            goto foreign;
        __u32 ulen = l4[4] << 8 | l4[5];
        __u8 *id = s + 8;
        if (ulen >= 8 + 18) {
            if (s + 18 > (__u8 *)end)
                goto foreign;
            id = s + 14;
        }
        if (s[0] != 0x4c || s[1] != 0x52 || (id[0] << 8 | id[1]) != run_nonce)
            goto foreign;
        stream = id[2] << 8 | id[3];
        seq = be48(s + 2);
    }
    if (stream >= nstreams || stream >= LR_MAX_STREAMS) {
        st->malformed++;
        return XDP_DROP;
    }
    struct lr_sink_stream *ss = bpf_map_lookup_elem(&sink_streams, &stream);
    if (!ss) {
        st->malformed++;
        return XDP_DROP;
    }
    ss->received++;
    if (seq + 1 > ss->highest_next)
        ss->highest_next = seq + 1;
    st->ours++;
    st->ours_bytes += (__u64)(end - data) + 4;
    return XDP_DROP;
foreign:
    st->foreign++;
    return XDP_PASS;
}

char LICENSE[] SEC("license") = "Dual MIT/GPL";
