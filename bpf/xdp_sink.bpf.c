// SPDX-License-Identifier: MIT
/* linerate's counting sink: classifies every frame by the shared rules (lr_wire.h, the same
 * checks as the user-space receiver, checksum included), counts this run's frames per receive
 * queue and per stream (frames received and the highest sequence) and drops them in the
 * driver, with no user space in the data path. Malformed frames (this run's magic and nonce,
 * failing a check) are counted and dropped; everything else, another run's frames included,
 * is counted and passed to the kernel. The reduced set: no duplicate or reorder distinction,
 * no latency. */
#include "lr_classify.bpf.h"

const volatile __u32 run_nonce = 0;
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

SEC("xdp")
int lr_xdp_sink(struct xdp_md *ctx)
{
    const __u8 *data = (const __u8 *)(long)ctx->data;
    const __u8 *end = (const __u8 *)(long)ctx->data_end;
    __u32 q = ctx->rx_queue_index;
    struct lr_sink_qstats *st = bpf_map_lookup_elem(&sink_q, &q);
    if (!st)
        return XDP_PASS;
    st->frames++;
    struct lr_wire_hdrs h;
    struct lr_wire_sig s;
    const __u32 streams = nstreams < LR_MAX_STREAMS ? nstreams : LR_MAX_STREAMS;
    switch (lr_wire_classify(data, end, run_nonce, 0, streams, 0, &h, &s)) {
    case LR_OURS: {
        __u32 stream = s.stream;
        struct lr_sink_stream *ss = bpf_map_lookup_elem(&sink_streams, &stream);
        if (!ss) { /* cannot happen: stream < streams <= LR_MAX_STREAMS */
            st->malformed++;
            return XDP_DROP;
        }
        ss->received++;
        if (s.seq + 1 > ss->highest_next)
            ss->highest_next = s.seq + 1;
        st->ours++;
        st->ours_bytes += (__u64)(end - data) + LR_FCS_LEN;
        return XDP_DROP;
    }
    case LR_MALFORMED:
        st->malformed++;
        return XDP_DROP;
    case LR_STALE:
        st->stale++;
        st->foreign++;
        return XDP_PASS;
    default:
        st->foreign++;
        return XDP_PASS;
    }
}

char LICENSE[] SEC("license") = "Dual MIT/GPL";
