// RunSpec: the immutable, validated description of one run. Built by the CLI (or a
// profile), validated before any device is touched, then only read.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "flow/flows.h"
#include "packet/frame.h"
#include "packet/signature.h"
#include "spec/parse.h"

namespace lr::spec {

// AF_XDP: a frame must fit one 4096-byte UMEM chunk after the kernel's 256-byte headroom.
inline constexpr unsigned kAfxdpMaxFrame = 4096 - 256 + 4;
inline constexpr unsigned LR_SINK_MAX_STREAMS = 1024;  // bpf/lr_shared.h LR_MAX_STREAMS

struct RunSpec {
    std::string backend = "dpdk";
    std::vector<PortQueues> tx;  // ports that transmit, with their TX queue counts
    std::vector<PortQueues> rx;  // ports that receive and count, with their RX queue counts
    std::vector<std::string> eal_args;  // passed through to rte_eal_init
    // DPDK: pairs of in-memory ring ports created after EAL init; A's TX queue i is B's RX
    // queue i and vice versa (16 queues each).
    std::vector<std::pair<std::string, std::string>> ring_pairs;

    std::string xdp_mode = "auto";  // afxdp: auto | native | skb
    std::string xsk_mode = "auto";  // afxdp: auto | copy | zero-copy
    std::string rx_mode = "socket"; // afxdp: socket (user space) | xdp (counting sink in the driver)
    std::vector<int> cpus;          // worker CPUs in order; empty = automatic

    packet::FrameSpec frame;  // base frame; flows vary it
    uint32_t flows = 0;       // 0 = one flow per TX queue
    bool signature = true;    // sign every frame that has room (sequence, timestamp)
    uint16_t nonce = 0;       // run identity carried in the signature
    bool nonce_given = false; // RX-only runs need the sender's nonce
    unsigned vary = flow::vary_src_ip | flow::vary_src_port;

    std::optional<uint64_t> count;  // total packets to send (TX) or to await (RX-only)
    double rate_pps = 0;            // total TX rate over all queues; 0 = as fast as possible
    bool reflect = false;           // `linerate reflect` in user space: each --rx frame goes back out
    uint32_t outstanding = 0;       // request/response: at most this many unanswered requests per queue
    double response_timeout_s = 0.1;  // request/response: a request unanswered this long is lost
    double duration_s = 10.0;       // TX time limit; the whole run's limit when RX-only
    double interval_s = 1.0;        // report interval
    double drain_s = 2.0;           // max wait for in-flight packets after TX ends
    double stall_s = 3.0;           // watchdog: no progress for this long = invalid run
    bool stop_when_idle = false;    // RX-only: end once traffic came and then stopped

    uint32_t burst = 0;  // packets per burst; 0 = backend default (dpdk 64, afxdp 32)
    uint32_t burst_size() const { return burst ? burst : (backend == "afxdp" ? 32 : 64); }
    uint32_t descriptors = 0;       // per queue ring size; 0 = backend default (dpdk 1024, afxdp 4096)
    uint32_t ring_size() const { return descriptors ? descriptors : (backend == "afxdp" ? 4096 : 1024); }
    uint32_t mbufs = 0;             // per worker pool (DPDK); 0 = max(8191, 4 x descriptors - 1)
    uint32_t effective_mbufs() const { return mbufs ? mbufs : std::max(8191u, 4 * ring_size() - 1); }

    std::optional<double> max_loss_pct;  // threshold; needs TX and RX in this process
    std::string json_path;
    bool quiet = false;  // no live lines
    bool force = false;

    bool tx_enabled() const { return !tx.empty(); }
    bool rx_enabled() const { return !rx.empty(); }
    uint32_t tx_queue_total() const;
    uint32_t rx_queue_total() const;
    uint32_t effective_flows() const { return flows ? flows : std::max(1u, tx_queue_total()); }
    // Streams the receiver tracks: one per flow (stream id = flow index). An RX-only run does
    // not know the sender's flow count unless --flows is given: it tracks up to 1024.
    // What the run's frames carry: none when --no-signature or the frame has no room.
    packet::SigLevel sig_level() const {
        return signature ? packet::sig_layout(frame).level : packet::SigLevel::none;
    }
    bool signed_frames() const { return sig_level() != packet::SigLevel::none; }
    // Receivers measure latency per interval: user-space RX of signed frames (the XDP sink
    // and the reflector measure none).
    bool live_latency() const { return signed_frames() && rx_enabled() && !reflect && rx_mode != "xdp"; }
    uint32_t rx_streams() const { return tx_enabled() || flows ? effective_flows() : LR_SINK_MAX_STREAMS; }

    // Throws UsageError with a precise message on any inconsistency.
    void validate() const;
};

void to_json(nlohmann::json& j, const RunSpec& s);

}  // namespace lr::spec
