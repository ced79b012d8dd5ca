/* Structures and constants shared by linerate's BPF programs and its C++ code.
 * The only definition of these layouts: C++ includes this header and static_asserts them. */
#ifndef LR_SHARED_H
#define LR_SHARED_H

#include <linux/types.h>

#define LR_MAX_QUEUES 64

/* Ethernet's frame check sequence: frame sizes count it, the bytes a program or a socket
 * sees do not (the NIC appends and strips it). */
#define LR_FCS_LEN 4
/* The signature's sequence and TX timestamp fields are 48 bits (lr_wire.h). */
#define LR_SIG48_MASK 0xffffffffffffULL
/* AF_XDP: one frame per UMEM chunk of this size, the kernel's XDP headroom (XDP_PACKET_HEADROOM)
 * before it. */
#define LR_UMEM_CHUNK 4096
#define LR_XDP_HEADROOM 256

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

/* Live-frames sender (xdp_live_tx.bpf.c): one cache line per stream, in an mmapable array.
 * Single writer: the program, on the CPU of the stream's worker. */
struct lr_live_stream {
    __u64 seq;      /* the next sequence = frames produced so far */
    __u64 base_sum; /* one's-complement sum of the template's L4 words (sequence, timestamp 0) */
    __u64 ts;       /* the last clock reading (48 bits), shared by the next ts_left frames */
    __u32 ts_left;  /* frames that may still take ts: user space zeroes it before each run */
    __u32 ts_every; /* frames per clock reading: divides the kernel's batch, so no stamp is
                     * shared across a batch's flush; at most LR_LIVE_TS_EVERY */
    __u64 pad[4];
};
#define LR_LIVE_TS_EVERY 8 /* a power of two */
/* The largest frame (without FCS) a live-frames run carries: one page less the XDP headroom
 * and the kernel's shared info (320 bytes on x86-64). */
#define LR_LIVE_MAX_FRAME 3520

#endif
