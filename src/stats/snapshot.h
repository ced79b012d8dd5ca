// Snapshots of counters, interval deltas, rate arithmetic and invariant checks.
// Pure functions over plain values: the control thread is the only caller.
#pragma once
#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "stats/counters.h"

namespace lr::stats {

enum class Dir : uint8_t { tx, rx };
inline const char* dir_str(Dir d) { return d == Dir::tx ? "tx" : "rx"; }

struct QueueId {
    Dir dir;
    unsigned port_index;  // index into the run's port list
    std::string port;     // port name
    uint16_t queue;
};

struct QueueSample {
    uint64_t packets = 0, bytes = 0, backpressure = 0, no_buffer = 0, polls = 0, unsent = 0, tx_errors = 0, timeouts = 0;
    uint64_t tx_skipped = 0, tx_behind_ns = 0, tx_stalls = 0, tx_longest_stall_ns = 0, tx_catch_up_max = 0;
    uint64_t start_ns = 0, end_ns = 0, first_pkt_ns = 0, last_pkt_ns = 0;
    uint64_t rx_ours = 0, rx_unique = 0, rx_foreign = 0, rx_stale = 0, rx_malformed = 0;
    uint64_t rx_dup = 0, rx_reordered = 0, rx_late = 0, rx_gaps = 0;
    uint64_t cpu_wait_ns = 0;
    int32_t nice = 0, nice_errno = 0;
    WorkerState state = WorkerState::starting;
};

// Hardware/driver counters of a port (rte_eth_stats or equivalent).
struct PortSample {
    uint64_t ipackets = 0, opackets = 0, ibytes = 0, obytes = 0;
    uint64_t imissed = 0, ierrors = 0, oerrors = 0, rx_nombuf = 0;
    // Kernel interfaces: frames the device itself dropped (its rx_dropped; tx_dropped plus
    // tx_errors: a veth drops on transmit when its peer is down or cannot take more).
    uint64_t idropped = 0, odropped = 0;
    // AF_XDP only: the XDP program's per-queue counters and the sockets' XDP_STATISTICS,
    // summed over the port's queues. Host-side drops, told apart from network loss.
    uint64_t xdp_received = 0, xdp_redirected = 0, xdp_passed = 0, xdp_redirect_failed = 0;
    uint64_t xsk_rx_dropped = 0, xsk_rx_ring_full = 0, xsk_rx_fill_empty = 0, xsk_rx_invalid = 0;
    uint64_t xsk_tx_invalid = 0, xsk_tx_ring_empty = 0;
    // A veth receiving from its peer, a sending port of this run: the frames the peer's XDP
    // redirects (live frames) could not put into this veth's full ring. The kernel counts them
    // in this veth's rx_dropped and in the peer's tx_dropped; they are the peer's egress drops
    // here, so host_rx_drops() leaves them out and each frame is counted once.
    uint64_t ipeer_xmit_refused = 0;
    // The link as last seen: 1 up, 0 down (no carrier, or the interface is down), -1 unknown.
    int8_t link = -1;
    uint64_t drops() const {
        return imissed + ierrors + oerrors + rx_nombuf + odropped + xdp_redirect_failed + xsk_rx_dropped +
               xsk_rx_ring_full;
    }
    // What this host's receive path dropped of frames that reached the port: missed by the
    // NIC, no buffer, no socket on the queue (redirect failed), the socket's rings (full, or
    // no fill buffer), and what the kernel device itself dropped. A device's rx_dropped already
    // holds the frames its XDP program could not redirect into a full socket, and also frames
    // that never reached the program: a veth whose ring overflowed (a peer redirecting into it
    // faster than its NAPI runs). The larger of the two counts each frame once.
    uint64_t host_rx_drops() const {
        const uint64_t dropped = idropped - std::min(idropped, ipeer_xmit_refused);
        return imissed + rx_nombuf + xdp_redirect_failed + std::max(dropped, xsk_rx_dropped + xsk_rx_ring_full);
    }
    // What the egress device dropped of frames it had accepted. (A DPDK PMD's oerrors counts
    // frames it refused, which linerate never counted as sent: back-pressure, not drops.)
    uint64_t egress_drops() const { return odropped; }
};

// What a port counted between two samples: every field cur - base (0 when a counter went
// backwards, as after a device reset).
PortSample since(const PortSample& base, const PortSample& cur);

struct Snapshot {
    double t = 0;  // seconds since the run started
    std::vector<QueueSample> queues;
    std::vector<PortSample> ports;
};

QueueSample read(const QueueCounters& c);

// Rates over an interval. L2 counts Ethernet frames incl. FCS; L1 adds 20 bytes per
// frame (preamble, SFD, inter-frame gap).
struct Rates {
    uint64_t packets = 0, bytes = 0;
    double seconds = 0;
    double pps() const { return seconds > 0 ? packets / seconds : 0; }
    double l2_bps() const { return seconds > 0 ? bytes * 8.0 / seconds : 0; }
    double l1_bps() const { return seconds > 0 ? (bytes + 20.0 * packets) * 8.0 / seconds : 0; }
};

struct Totals {
    uint64_t packets = 0, bytes = 0, backpressure = 0, no_buffer = 0, unsent = 0, skipped = 0, behind_ns = 0;
    uint64_t stalls = 0, longest_stall_ns = 0, catch_up_max = 0;  // summed; the two maxima over the queues
    uint64_t ours = 0, unique = 0, foreign = 0, stale = 0, malformed = 0, dup = 0, reordered = 0, late = 0;
};

// Sum of the queues of one direction.
Totals total(const std::vector<QueueId>& ids, const Snapshot& s, Dir d);
// Adds one queue's receive classes (ours, unique, foreign, ...) to `t`.
void add_rx_classes(Totals& t, const QueueSample& q);
uint64_t port_drops(const Snapshot& s);

// Senders that offer less than this share of the rate asked are generator-limited (an
// interval's flag, and the trial's with a note).
inline constexpr double kGeneratorLimited = 0.99;

struct IntervalRow {
    double t0 = 0, t1 = 0;
    Rates tx, rx;
    uint64_t drops = 0;         // port-level drop counters, delta
    uint64_t backpressure = 0;  // TX partial bursts, delta
    uint64_t rx_ours = 0;       // test frames of this run received, delta
    uint64_t rx_reordered = 0, rx_dup = 0;  // reordered and duplicate test frames, delta
    uint64_t seq_gaps = 0;      // receivers' open sequence gaps at the end of the interval (running loss)
    // The rate asked of the senders in packets/s (0: as fast as possible), and whether they fell
    // short of it over this whole interval (below kGeneratorLimited of it).
    double requested_pps = 0;
    bool generator_limited = false;
    // Live latency (signed runs with timestamps): frames whose latency was measured in this
    // interval, and their percentiles in ns. `latency_live` is false when not measured.
    bool latency_live = false;
    uint64_t lat_count = 0, lat_min = 0, lat_p50 = 0, lat_p99 = 0, lat_max = 0;
};

// Delta between two snapshots. Appends a message to `violations` for every counter that
// went backwards (a broken invariant).
IntervalRow interval(const std::vector<QueueId>& ids, const Snapshot& prev, const Snapshot& cur,
                     std::vector<std::string>& violations);

// Checks that hold at any time: per-direction totals equal the sum of queues (by
// construction) and, when TX and RX are in this process, received never exceeds sent.
void check_invariants(const std::vector<QueueId>& ids, const Snapshot& s, bool loopback,
                      std::vector<std::string>& violations);

}  // namespace lr::stats
