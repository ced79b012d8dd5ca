/* The classifier shared by linerate's XDP programs: is this frame linerate test traffic?
 * Included by each *.bpf.c (one copy per program; BPF has no linking here). */
#ifndef LR_CLASSIFY_BPF_H
#define LR_CLASSIFY_BPF_H

#include <linux/bpf.h>
#include <linux/if_ether.h>
#include <linux/in.h>
#include <linux/ip.h>
#include <linux/ipv6.h>
#include <linux/tcp.h>
#include <linux/udp.h>
#include <bpf/bpf_endian.h>
#include <bpf/bpf_helpers.h>

#include "lr_shared.h"

/* Set by user space before load: what a linerate test frame looks like. */
const volatile __u8 match_udp = 1;
const volatile __u8 match_tcp = 1;
const volatile __u16 src_port_lo = 0, src_port_hi = 65535;
const volatile __u16 dst_port_lo = 0, dst_port_hi = 65535;

/* Where the classifier found the headers (for programs that rewrite them). */
struct lr_hdrs {
    struct ethhdr *eth;
    struct iphdr *ip4;
    struct ipv6hdr *ip6;
    __be16 *ports; /* source, destination */
};

struct vlan_hdr {
    __be16 tci;
    __be16 proto;
};

static __always_inline int classify_hdrs(void *data, void *end, struct lr_hdrs *h)
{
    struct ethhdr *eth = data;
    if ((void *)(eth + 1) > end)
        return LR_CLASS_FOREIGN;
    h->eth = eth;
    h->ip4 = 0;
    h->ip6 = 0;
    __u16 proto = eth->h_proto;
    void *l3 = eth + 1;
    if (proto == bpf_htons(ETH_P_8021Q) || proto == bpf_htons(ETH_P_8021AD)) {
        struct vlan_hdr *vh = l3;
        if ((void *)(vh + 1) > end)
            return LR_CLASS_FOREIGN;
        proto = vh->proto;
        l3 = vh + 1;
    }
    __u8 l4proto;
    void *l4;
    if (proto == bpf_htons(ETH_P_IP)) {
        struct iphdr *ip = l3;
        if ((void *)(ip + 1) > end || ip->ihl != 5)
            return LR_CLASS_FOREIGN;
        if (ip->frag_off & bpf_htons(0x3fff)) /* fragments: ports are not in every piece */
            return LR_CLASS_FOREIGN;
        l4proto = ip->protocol;
        l4 = ip + 1;
        h->ip4 = ip;
    } else if (proto == bpf_htons(ETH_P_IPV6)) {
        struct ipv6hdr *ip6 = l3;
        if ((void *)(ip6 + 1) > end)
            return LR_CLASS_FOREIGN;
        l4proto = ip6->nexthdr;
        l4 = ip6 + 1;
        h->ip6 = ip6;
    } else {
        return LR_CLASS_FOREIGN;
    }
    __u16 sport, dport;
    h->ports = l4;
    if (l4proto == IPPROTO_UDP && match_udp) {
        struct udphdr *u = l4;
        if ((void *)(u + 1) > end)
            return LR_CLASS_FOREIGN;
        sport = bpf_ntohs(u->source);
        dport = bpf_ntohs(u->dest);
    } else if (l4proto == IPPROTO_TCP && match_tcp) {
        struct tcphdr *t = l4;
        if ((void *)(t + 1) > end)
            return LR_CLASS_FOREIGN;
        sport = bpf_ntohs(t->source);
        dport = bpf_ntohs(t->dest);
    } else {
        return LR_CLASS_FOREIGN;
    }
    if (sport < src_port_lo || sport > src_port_hi || dport < dst_port_lo || dport > dst_port_hi)
        return LR_CLASS_FOREIGN;
    return LR_CLASS_OURS;
}


static __always_inline int classify(void *data, void *end)
{
    struct lr_hdrs h;
    return classify_hdrs(data, end, &h);
}

#endif
