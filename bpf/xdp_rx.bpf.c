// SPDX-License-Identifier: MIT
/* linerate's XDP receive program: redirect linerate's test frames to the AF_XDP socket of
 * their receive queue; pass everything else (ARP, ND, ICMP, other traffic) to the kernel.
 * Counts per queue. Parsing is bounds-checked at every step (the verifier insists). */
#include "lr_classify.bpf.h"

struct {
    __uint(type, BPF_MAP_TYPE_XSKMAP);
    __uint(max_entries, LR_MAX_QUEUES);
    __type(key, __u32);
    __type(value, __u32);
} xsks SEC(".maps");

struct {
    __uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
    __uint(max_entries, LR_MAX_QUEUES);
    __type(key, __u32);
    __type(value, struct lr_xdp_qstats);
} qstats SEC(".maps");

SEC("xdp")
int lr_xdp_rx(struct xdp_md *ctx)
{
    void *data = (void *)(long)ctx->data;
    void *end = (void *)(long)ctx->data_end;
    __u32 q = ctx->rx_queue_index;
    struct lr_xdp_qstats *st = bpf_map_lookup_elem(&qstats, &q);
    if (st)
        st->received++;
    if (classify(data, end) != LR_CLASS_OURS) {
        if (st)
            st->passed++;
        return XDP_PASS;
    }
    int rc = bpf_redirect_map(&xsks, q, XDP_DROP);
    if (st) {
        if (rc == XDP_REDIRECT)
            st->redirected++;
        else
            st->redirect_failed++;
    }
    return rc;
}

char LICENSE[] SEC("license") = "Dual MIT/GPL";
