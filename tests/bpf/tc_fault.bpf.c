// SPDX-License-Identifier: MIT
/* Test-only fault injector (this kernel has no netem): a tc egress program for signed
 * 64-byte IPv4/UDP linerate frames. One object per fault, chosen at compile time:
 *   FAULT_DROP     drop every frame whose sequence % K == 1 (TC_ACT_STOLEN: the sender's
 *                  socket is told it was sent, as with a loss on the wire)
 *   FAULT_DUP      send every frame whose sequence % K == 7 twice
 *   FAULT_SWAP     swap the sequence numbers of each adjacent pair (2k <-> 2k+1), fixing the
 *                  UDP checksum: the receiver sees 1,0,3,2,... i.e. every pair reordered
 *   FAULT_CORRUPT  flip a timestamp bit of every frame whose sequence % K == 5, checksum left
 *                  stale: the receiver must call it malformed, never ours */
#include <linux/bpf.h>
#include <linux/pkt_cls.h>
#include <bpf/bpf_helpers.h>

#define ETH_IP_UDP 42  /* Ethernet + IPv4 + UDP */
#define SEQ_LO (ETH_IP_UDP + 6)   /* low 16 bits of the 48-bit sequence (payload bytes 2..7) */
#define TS_BYTE (ETH_IP_UDP + 17) /* last timestamp byte */
#define UDP_CSUM 40

static __always_inline int seq_lo(struct __sk_buff *skb, __u32 *lo)
{
    __u8 p[ETH_IP_UDP + 18];
    /* Copy out: frames from a packet socket need not be linear. */
    if (bpf_skb_load_bytes(skb, 0, p, sizeof(p)))
        return -1;
    if (p[12] != 0x08 || p[13] != 0x00 || p[23] != 17) /* IPv4, UDP */
        return -1;
    if (p[ETH_IP_UDP] != 0x4c || p[ETH_IP_UDP + 1] != 0x52) /* linerate magic */
        return -1;
    /* Low 32 bits of the sequence (tests send far fewer than 2^32 frames). */
    *lo = (__u32)p[SEQ_LO - 2] << 24 | (__u32)p[SEQ_LO - 1] << 16 | (__u32)p[SEQ_LO] << 8 | p[SEQ_LO + 1];
    return 0;
}

SEC("tc")
int fault(struct __sk_buff *skb)
{
    __u32 lo;
    if (seq_lo(skb, &lo))
        return TC_ACT_OK;
#if defined(FAULT_DROP)
    if (lo % K == 1)
        return TC_ACT_STOLEN; /* freed, but the sender is told it went: a loss on the wire */
#elif defined(FAULT_DUP)
    if (skb->mark == 0x1e57)
        return TC_ACT_OK; /* the copy coming through again */
    if (lo % K == 7) {
        skb->mark = 0x1e57;
        bpf_clone_redirect(skb, skb->ifindex, 0); /* the copy leaves by the same egress */
        skb->mark = 0;
    }
#elif defined(FAULT_SWAP)
    __u16 old = bpf_htons((__u16)lo), new = bpf_htons((__u16)(lo ^ 1));
    if (bpf_skb_store_bytes(skb, SEQ_LO, &new, 2, 0))
        return TC_ACT_SHOT;
    bpf_l4_csum_replace(skb, UDP_CSUM, old, new, 2 | BPF_F_MARK_MANGLED_0);
#elif defined(FAULT_CORRUPT)
    if (lo % K == 5) {
        __u8 b;
        if (bpf_skb_load_bytes(skb, TS_BYTE, &b, 1))
            return TC_ACT_SHOT;
        b ^= 0x01;
        bpf_skb_store_bytes(skb, TS_BYTE, &b, 1, 0);
    }
#endif
    return TC_ACT_OK;
}

char LICENSE[] SEC("license") = "Dual MIT/GPL";
