// SPDX-License-Identifier: MIT
/* Test-only loader of dut_policer.bpf.c: attaches it (native XDP) to IN, forwarding at most
 * RATE frames/s to OUT, until SIGINT or SIGTERM; then detaches and prints what it forwarded
 * and dropped as one JSON line.
 *     dut_policer IN OUT RATE [BURST]        (BURST: frames, default 64) */
#include <bpf/libbpf.h>
#include <linux/if_link.h>
#include <net/if.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
#include <vector>

#include "dut_policer.skel.h"

static volatile sig_atomic_t stop;
static void on_signal(int sig) { (void)sig; stop = 1; }

int main(int argc, char **argv)
{
    if (argc < 4) {
        fprintf(stderr, "usage: dut_policer IN OUT RATE [BURST]\n");
        return 2;
    }
    unsigned in = if_nametoindex(argv[1]), out = if_nametoindex(argv[2]);
    double rate = atof(argv[3]);
    double burst = argc > 4 ? atof(argv[4]) : 64;
    if (!in || !out || rate <= 0 || burst < 1) {
        fprintf(stderr, "dut_policer: bad interface, rate or burst\n");
        return 2;
    }
    struct dut_policer_bpf *s = dut_policer_bpf__open();
    if (!s) return 3;
    s->rodata->interval_ps = (__u64)(1e12 / rate);
    s->rodata->burst_ps = (__u64)(burst * 1e12 / rate);
    s->rodata->out_ifindex = out;
    if (dut_policer_bpf__load(s)) {
        fprintf(stderr, "dut_policer: load failed\n");
        return 3;
    }
    int fd = bpf_program__fd(s->progs.police);
    if (bpf_xdp_attach(in, fd, XDP_FLAGS_DRV_MODE, NULL)) {
        fprintf(stderr, "dut_policer: attach to %s failed\n", argv[1]);
        dut_policer_bpf__destroy(s);
        return 3;
    }
    signal(SIGINT, on_signal);
    signal(SIGTERM, on_signal);
    printf("ready\n");
    fflush(stdout);
    while (!stop) pause();
    bpf_xdp_detach(in, XDP_FLAGS_DRV_MODE, NULL);
    int ncpu = libbpf_num_possible_cpus();
    unsigned long long sum[2] = {0, 0};
    std::vector<__u64> vals(ncpu > 0 ? ncpu : 1);
    for (__u32 k = 0; k < 2; ++k)
        if (bpf_map__lookup_elem(s->maps.counts, &k, sizeof(k), vals.data(), sizeof(__u64) * vals.size(), 0) == 0)
            for (int c = 0; c < ncpu; ++c) sum[k] += vals[c];
    printf("{\"forwarded\": %llu, \"dropped\": %llu}\n", sum[0], sum[1]);
    dut_policer_bpf__destroy(s);
    return 0;
}
