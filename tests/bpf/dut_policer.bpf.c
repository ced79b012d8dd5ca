// SPDX-License-Identifier: MIT
/* Test-only "device under test" of known capacity: an XDP program that forwards at most
 * RATE frames per second to another interface (bpf_redirect) and drops the rest. A token
 * bucket in its GCRA form on bpf_ktime_get_ns: each frame takes one interval (1/RATE) of
 * credit; a frame that would leave the bucket more than BURST intervals ahead of now is
 * dropped. Configured through .rodata by tests/bpf/dut_policer.cpp before loading. */
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>

const volatile __u64 interval_ps = 10000000; /* 1e12 / RATE */
const volatile __u64 burst_ps = 640000000;   /* BURST * interval_ps */
const volatile __u32 out_ifindex = 0;

struct bucket {
    struct bpf_spin_lock lock;
    __u64 base_ns;  /* ktime at the first frame: keeps the picosecond arithmetic small */
    __u64 tat_ps;   /* theoretical arrival time of the next conforming frame, since base */
};

struct {
    __uint(type, BPF_MAP_TYPE_ARRAY);
    __uint(max_entries, 1);
    __type(key, __u32);
    __type(value, struct bucket);
} buckets SEC(".maps");

struct {
    __uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
    __uint(max_entries, 2); /* 0: forwarded, 1: dropped */
    __type(key, __u32);
    __type(value, __u64);
} counts SEC(".maps");

static __always_inline void count(__u32 which)
{
    __u64 *c = bpf_map_lookup_elem(&counts, &which);
    if (c)
        (*c)++;
}

SEC("xdp")
int police(struct xdp_md *ctx)
{
    __u32 zero = 0;
    struct bucket *b = bpf_map_lookup_elem(&buckets, &zero);
    if (!b)
        return XDP_ABORTED;
    __u64 now = bpf_ktime_get_ns();
    int pass = 0;
    bpf_spin_lock(&b->lock);
    if (b->base_ns == 0)
        b->base_ns = now;
    __u64 now_ps = (now - b->base_ns) * 1000;
    __u64 tat = b->tat_ps < now_ps ? now_ps : b->tat_ps;
    if (tat - now_ps <= burst_ps) {
        b->tat_ps = tat + interval_ps;
        pass = 1;
    }
    bpf_spin_unlock(&b->lock);
    if (!pass) {
        count(1);
        return XDP_DROP;
    }
    count(0);
    return bpf_redirect(out_ifindex, 0);
}

char LICENSE[] SEC("license") = "Dual MIT/GPL";
