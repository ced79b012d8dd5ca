/* Structures and constants shared by linerate's BPF programs and its C++ code.
 * The only definition of these layouts: C++ includes this header and static_asserts them. */
#ifndef LR_SHARED_H
#define LR_SHARED_H

#include <linux/types.h>

#define LR_MAX_QUEUES 64

/* Per receive queue counters of the XDP receive program (a per-CPU array indexed by
 * rx_queue_index; user space sums the CPUs). */
struct lr_xdp_qstats {
    __u64 received;        /* every frame the program saw on this queue */
    __u64 redirected;      /* linerate test frames handed to the queue's XSK socket */
    __u64 passed;          /* everything else (ARP, ND, other traffic) passed to the kernel */
    __u64 redirect_failed; /* test frames with no socket on this queue: dropped */
};

#define LR_MAX_STREAMS 1024

/* Counting sink (xdp_sink.bpf.c): per receive queue, per CPU. One counter per verdict of the
 * shared classification (lr_wire.h). */
struct lr_sink_qstats {
    __u64 frames;     /* every frame the program saw */
    __u64 ours;       /* linerate frames of this run: counted and dropped */
    __u64 ours_bytes; /* their L2 bytes including FCS */
    __u64 foreign;    /* not linerate's, or another run's (stale): passed to the kernel */
    __u64 malformed;  /* magic and this run's nonce, but failing a check: dropped */
    __u64 stale;      /* of `foreign`, those carrying another run's nonce */
};

/* Counting sink: per stream, per CPU. */
struct lr_sink_stream {
    __u64 received;     /* frames (duplicates included: the sink cannot tell) */
    __u64 highest_next; /* highest sequence seen + 1 */
};


#endif
