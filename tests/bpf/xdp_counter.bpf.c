// SPDX-License-Identifier: MIT
/* Test-only counter that is not linerate's (tests/integration/test_streams.py): an XDP
 * program on a receiving interface that counts every frame by its VLAN id and by its length,
 * then passes it on. Per VLAN (0: untagged): frames, bytes (without FCS), and the times of the
 * first and the last frame (bpf_ktime_get_ns), so a test computes each stream's rate from
 * what arrived. Per length (bytes without FCS, up to 2047): frames. Read with bpftool. */
#include <linux/bpf.h>
#include <linux/if_ether.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_endian.h>

struct vlan_count {
    __u64 packets;
    __u64 bytes;
    __u64 first_ns;
    __u64 last_ns;
};

struct {
    __uint(type, BPF_MAP_TYPE_ARRAY);
    __uint(max_entries, 4096);
    __type(key, __u32);
    __type(value, struct vlan_count);
} by_vlan SEC(".maps");

struct {
    __uint(type, BPF_MAP_TYPE_ARRAY);
    __uint(max_entries, 2048);
    __type(key, __u32);
    __type(value, __u64);
} by_len SEC(".maps");

SEC("xdp")
int count_frames(struct xdp_md *ctx)
{
    const __u8 *data = (const __u8 *)(long)ctx->data;
    const __u8 *end = (const __u8 *)(long)ctx->data_end;
    if (data + ETH_HLEN > end)
        return XDP_PASS;
    __u32 len = (__u32)(end - data);
    __u32 vlan = 0;
    const __u16 type = *(const __u16 *)(data + 12);
    if (type == bpf_htons(ETH_P_8021Q) && data + ETH_HLEN + 4 <= end)
        vlan = bpf_ntohs(*(const __u16 *)(data + 14)) & 0x0fff;
    const __u64 now = bpf_ktime_get_ns();
    struct vlan_count *v = bpf_map_lookup_elem(&by_vlan, &vlan);
    if (v) {
        __sync_fetch_and_add(&v->packets, 1);
        __sync_fetch_and_add(&v->bytes, len);
        if (v->first_ns == 0)
            v->first_ns = now;
        v->last_ns = now;
    }
    __u32 l = len < 2048 ? len : 2047;
    __u64 *n = bpf_map_lookup_elem(&by_len, &l);
    if (n)
        __sync_fetch_and_add(n, 1);
    return XDP_PASS;
}

char LICENSE[] SEC("license") = "Dual MIT/GPL";
