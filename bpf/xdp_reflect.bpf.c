// SPDX-License-Identifier: MIT
/* linerate's XDP reflector: sends each linerate test frame straight back out of the
 * interface it came in on (XDP_TX), with Ethernet and IP addresses and L4 ports swapped.
 * Swapping is checksum-neutral, and the signature (sequence, TX timestamp) is untouched, so
 * the sender measures the round trip. Everything else is passed to the kernel.
 * Can run without linerate: ip link set dev IF xdp obj xdp_reflect.bpf.o sec xdp */
#include "lr_classify.bpf.h"

struct {
    __uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
    __uint(max_entries, LR_MAX_QUEUES);
    __type(key, __u32);
    __type(value, struct lr_xdp_qstats); /* redirected = reflected */
} qstats SEC(".maps");

static __always_inline void swap_bytes(__u8 *a, __u8 *b, int n)
{
#pragma unroll
    for (int i = 0; i < 16; i++) {
        if (i >= n)
            break;
        __u8 t = a[i];
        a[i] = b[i];
        b[i] = t;
    }
}

SEC("xdp")
int lr_xdp_reflect(struct xdp_md *ctx)
{
    void *data = (void *)(long)ctx->data;
    void *end = (void *)(long)ctx->data_end;
    __u32 q = ctx->rx_queue_index;
    struct lr_xdp_qstats *st = bpf_map_lookup_elem(&qstats, &q);
    if (st)
        st->received++;
    struct lr_hdrs h;
    if (classify_hdrs(data, end, &h) != LR_CLASS_OURS) {
        if (st)
            st->passed++;
        return XDP_PASS;
    }
    /* The classifier checked every header below is inside the packet; the verifier wants
     * the checks again at the point of use. */
    if ((void *)(h.eth + 1) > end || (void *)(h.ports + 2) > end)
        return XDP_PASS;
    swap_bytes(h.eth->h_dest, h.eth->h_source, ETH_ALEN);
    if (h.ip4) {
        if ((void *)(h.ip4 + 1) > end)
            return XDP_PASS;
        __be32 t = h.ip4->saddr;
        h.ip4->saddr = h.ip4->daddr;
        h.ip4->daddr = t;
    } else if (h.ip6) {
        if ((void *)(h.ip6 + 1) > end)
            return XDP_PASS;
        swap_bytes((__u8 *)&h.ip6->saddr, (__u8 *)&h.ip6->daddr, 16);
    }
    __be16 p = h.ports[0];
    h.ports[0] = h.ports[1];
    h.ports[1] = p;
    if (st)
        st->redirected++;
    return XDP_TX;
}

char LICENSE[] SEC("license") = "Dual MIT/GPL";
