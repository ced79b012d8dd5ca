// SPDX-License-Identifier: MIT
/* linerate's XDP receive program: hands linerate's frames to the AF_XDP socket of their
 * receive queue, where user space classifies them with the same rules (lr_wire.h); passes
 * everything else (ARP, ND, ICMP, other traffic) to the kernel, unless told to take every
 * frame (match_all: linerate impair forwards them all). A frame goes to user space
 * when it carries the signature's magic (ours, another run's, or malformed: user space counts
 * each) or is UDP/TCP to the test ports (counted there as foreign). Counts per queue. */
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
    const __u8 *data = (const __u8 *)(long)ctx->data;
    const __u8 *end = (const __u8 *)(long)ctx->data_end;
    __u32 q = ctx->rx_queue_index;
    struct lr_xdp_qstats *st = bpf_map_lookup_elem(&qstats, &q);
    if (st)
        st->received++;
    struct lr_wire_hdrs h;
    struct lr_wire_sig s;
    /* Steering needs no checksum: ours and malformed both go to user space, which tells them apart. */
    if (!match_all && (!lr_wire_walk(data, end, &h) ||
        (lr_wire_classify_walked(&h, end, 0, 1, 0x10000, 1, &s) == LR_FOREIGN && !lr_match(&h)))) {
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
