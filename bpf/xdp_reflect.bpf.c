// SPDX-License-Identifier: MIT
/* linerate's XDP reflector: sends each linerate test frame straight back out of the
 * interface it came in on (XDP_TX), with Ethernet and IP addresses and L4 ports swapped.
 * Only frames with a valid signature go back (magic, lengths and checksum by the shared rules
 * of lr_wire.h; any run's nonce unless one is set), so it never bounces other traffic and
 * cannot be used as an amplifier or a loop. Swapping is checksum-neutral and the signature
 * (sequence, TX timestamp) is untouched, so the sender measures the round trip. Everything
 * else is passed to the kernel.
 * Can run without linerate: ip link set dev IF xdp obj xdp_reflect.bpf.o sec xdp */
#include "lr_classify.bpf.h"

/* 0: reflect every run's frames; otherwise only those carrying this nonce (reflect_nonce - 1). */
const volatile __u64 reflect_nonce = 0;

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
    __u8 *data = (__u8 *)(long)ctx->data;
    __u8 *end = (__u8 *)(long)ctx->data_end;
    __u32 q = ctx->rx_queue_index;
    struct lr_xdp_qstats *st = bpf_map_lookup_elem(&qstats, &q);
    if (st)
        st->received++;
    struct lr_wire_hdrs h;
    struct lr_wire_sig s;
    const int any = reflect_nonce == 0;
    const __u32 nonce = (__u32)(reflect_nonce - 1);
    if (lr_wire_classify(data, end, nonce, any, 0x10000, 0, &h, &s) != LR_OURS || !lr_match(&h)) {
        if (st)
            st->passed++;
        return XDP_PASS;
    }
    /* The classifier checked every header below is inside the packet; the verifier wants the
     * checks again at the point of use. */
    __u8 *ip = data + (h.ip - data);
    __u8 *l4 = data + (h.l4 - data);
    if (data + 14 > end || l4 + 4 > end)
        return XDP_PASS;
    swap_bytes(data, data + 6, 6);
    if (!h.v6) {
        if (ip + 20 > end)
            return XDP_PASS;
        swap_bytes(ip + 12, ip + 16, 4);
    } else {
        if (ip + 40 > end)
            return XDP_PASS;
        swap_bytes(ip + 8, ip + 24, 16);
    }
    swap_bytes(l4, l4 + 2, 2);
    if (st)
        st->redirected++;
    return XDP_TX;
}

char LICENSE[] SEC("license") = "Dual MIT/GPL";
