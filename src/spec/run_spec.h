// RunSpec: the immutable, validated description of a session and its first trial. Built from
// the option table (spec/options.h) by the CLI or a profile, validated before any device is
// touched, then only read. A session opens its ports once and runs trials; what may change
// from one trial to the next is the TrialSpec.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "flow/flows.h"
#include "lr_shared.h"  // bpf/: limits shared with the XDP programs
#include "packet/frame.h"
#include "packet/signature.h"
#include "spec/choices.h"
#include "spec/connect_spec.h"
#include "spec/impair_spec.h"
#include "stats/capture.h"
#include "spec/parse.h"
#include "spec/procedure_spec.h"
#include "spec/rate.h"
#include "spec/size_spec.h"
#include "spec/stream_spec.h"

namespace lr::spec {

// AF_XDP: a frame must fit one UMEM chunk after the kernel's XDP headroom (its FCS is not
// stored).
inline constexpr unsigned kAfxdpMaxFrame = LR_UMEM_CHUNK - LR_XDP_HEADROOM + LR_FCS_LEN;
// The largest frame (FCS included) XDP live frames carry (--tx-engine live).
inline constexpr unsigned kLiveMaxFrame = LR_LIVE_MAX_FRAME + LR_FCS_LEN;
// The streams the XDP counting sink tracks (its map's size).
inline constexpr unsigned kSinkMaxStreams = LR_MAX_STREAMS;

// Limits and defaults of the tuning options, read by the backends and printed by the option table.
inline constexpr uint32_t kMaxBurst = 512;  // packets per burst: every backend's burst arrays
inline constexpr uint32_t kDpdkBurst = 64, kAfxdpBurst = 32;   // --burst 0 (docs/architecture.md, "Decisions")
// --burst 0 with live frames: the kernel's batch (docs/afxdp.md, "Live frames").
inline constexpr uint32_t kLiveBatch = 128, kMaxLiveBatch = 256;
inline constexpr uint32_t kMinRing = 64, kMaxRing = 16384;     // --descriptors
inline constexpr uint32_t kDpdkRing = 1024, kAfxdpRing = 4096; // --descriptors 0
inline constexpr uint32_t kMinMbufs = 8191;                    // --mbufs 0: at least this many per pool
inline constexpr double kReflectDurationS = 60;                // reflect without --duration

// Settings only the DPDK backend reads.
struct DpdkSettings {
    std::vector<std::string> eal_args;  // passed through to rte_eal_init
    // Pairs of in-memory ring ports created after EAL init; A's TX queue i is B's RX queue i
    // and vice versa (16 queues each).
    std::vector<std::pair<std::string, std::string>> ring_pairs;
    uint32_t mbufs = 0;  // per worker pool; 0 = max(kMinMbufs, 4 x descriptors - 1)
};

// Settings only the AF_XDP backend reads.
struct AfxdpSettings {
    XdpMode xdp_mode = XdpMode::auto_mode;
    XskMode xsk_mode = XskMode::auto_mode;
    RxMode rx_mode = RxMode::socket;  // socket (user space) or xdp (counting sink in the driver)
    TxEngine tx_engine = TxEngine::auto_mode;  // socket (AF_XDP), live (XDP live frames, in the kernel) or auto
};


// What one trial sends. Everything else is fixed for the session.
struct TrialSpec {
    unsigned frame_size = 64;        // incl. FCS; 0: the streams' own sizes (a stream mix)
    std::optional<uint64_t> count;   // total packets to send (TX) or to await (RX-only)
    RateSpec rate;                   // total TX rate over all queues; max = as fast as possible
    double duration_s = 10.0;        // TX time limit; the whole trial's limit when RX-only
};

struct RunSpec {
    BackendKind backend = BackendKind::dpdk;
    std::vector<PortQueues> tx;  // ports that transmit, with their TX queue counts
    std::vector<PortQueues> rx;  // ports that receive and count, with their RX queue counts
    std::vector<int> cpus;       // worker CPUs in worker order; empty = automatic
    DpdkSettings dpdk;
    AfxdpSettings afxdp;

    packet::FrameSpec frame;  // base frame; flows vary it (frame_size: the smallest of `size`)
    SizeSpec size = SizeSpec::fixed_size(64);  // --size: one size or a distribution
    std::vector<StreamSpec> streams;  // --stream: the streams; empty: the options above describe the one stream
    std::vector<std::string> notes;   // what the spec changed from what was asked (sizes raised), reported per trial
    uint32_t flows = 0;       // 0 = one flow per TX queue
    bool signature = true;    // sign every frame that has room (sequence, timestamp)
    uint32_t nonce = 0;       // run identity: signature (low 16 bits) and IP header (high 16)
    bool nonce_given = false; // RX-only runs need the sender's nonce
    unsigned vary = flow::vary_src_ip | flow::vary_src_port;

    std::optional<uint64_t> count;  // total packets to send (TX) or to await (RX-only)
    RateSpec rate;                  // total TX rate over all queues, as given
    double rate_pps = 0;            // `rate` in packets/s for this trial's frames (the session sets it); 0 = max
    double line_rate_bps = 0;       // --line-rate: the links' L1 rate when the ports report none; 0 = theirs
    Pattern pattern;
    uint64_t seed = 1;              // of the poisson pattern's random departures
    double catch_up_s = 0.020;      // --catch-up: lateness the senders make up for (0: none; worker/pacer.h)
    std::optional<int> sender_nice;  // --sender-nice: paced senders' nice value (nullopt: keep the process's)
    bool reflect = false;           // `linerate reflect` in user space: each --rx frame goes back out
    std::optional<ImpairSpec> impair;  // `linerate impair`: forward between two ports, impaired
    std::optional<ConnectSpec> connect;  // `linerate connect`: TCP connections to a listener
    uint32_t outstanding = 0;       // request/response: at most this many unanswered requests per queue
    double response_timeout_s = 0.1;  // request/response: a request unanswered this long is lost
    bool stack_responder = false;   // request/response: a host's own stack answers (--responder stack)
    double duration_s = 10.0;       // TX time limit; the whole run's limit when RX-only
    double interval_s = 1.0;        // report interval
    double drain_s = 2.0;           // max wait for in-flight packets after TX ends
    double settle_s = 0.1;          // between trials of a session: the device recovers (RFC 2544 section 23)
    double stall_s = 3.0;           // watchdog: no progress for this long = invalid run
    bool stop_when_idle = false;    // RX-only: end once traffic came and then stopped
    unsigned trials = 1;            // back-to-back trials of the same spec in one session

    uint32_t burst = 0;  // packets per burst; 0 = backend default (kDpdkBurst, kAfxdpBurst)
    uint32_t burst_size() const { return burst ? burst : (backend == BackendKind::afxdp ? kAfxdpBurst : kDpdkBurst); }
    uint32_t descriptors = 0;  // per queue ring size; 0 = backend default (kDpdkRing, kAfxdpRing)
    uint32_t ring_size() const {
        return descriptors ? descriptors : (backend == BackendKind::afxdp ? kAfxdpRing : kDpdkRing);
    }
    uint32_t effective_mbufs() const { return dpdk.mbufs ? dpdk.mbufs : std::max(kMinMbufs, 4 * ring_size() - 1); }
    // The largest frame any trial of the session sends (pool buffers, MTU); 0 = frame size.
    unsigned max_frame_size = 0;
    unsigned session_max_frame() const;
    // The largest IP packet (the MTU it needs) any frame of the session carries, and which
    // option or stream asks for it ("--size 9000", "--stream size=2000", a profile's
    // file:line:col): the ports' MTU checks name it.
    struct LargestPacket {
        unsigned frame = 0, l3 = 0;
        std::string source;
    };
    LargestPacket largest_packet() const;

    Thresholds thresholds;  // what the verdict judges (--max-loss needs TX and RX in this process)
    ProcedureSpec procedure;  // run, or the procedure and its settings
    std::string json_path;
    std::string junit_path;
    std::string json_stream_path;  // JSON lines: "-" for stdout (the console then goes to stderr)
    std::string csv_path;
    std::string metrics_listen;    // "PORT" (loopback) or "ADDR:PORT"
    std::string capture_path;      // pcap of received frames
    uint32_t capture_count = 1000; // frames in it, over the whole session
    stats::CaptureFilter capture_filter = stats::CaptureFilter::all;
    bool captures_sent() const { return capture_filter == stats::CaptureFilter::sent; }
    uint32_t capture_remaining = 0;  // set per trial by the session: what the pcap still takes
    bool quiet = false;  // no live lines
    bool force = false;

    bool tx_enabled() const { return !tx.empty(); }
    bool rx_enabled() const { return !rx.empty(); }
    uint32_t tx_queue_total() const;
    uint32_t rx_queue_total() const;
    uint32_t effective_flows() const { return flows ? flows : std::max(1u, tx_queue_total()); }
    // The TX queues a stream leaves by: those of its ports (every --tx port when it names none).
    uint32_t stream_queues(const StreamSpec& st) const;
    // A stream's flows, each a signed stream id of its own: flows=, else one per queue it leaves by.
    // A replay: one per port it leaves by (each port sends the whole capture).
    // A stream built with flow_frames has exactly those.
    uint32_t stream_flows(const StreamSpec& st) const;
    // The frame of each of a synthesized stream's flows, in flow order: its flow_frames, or its
    // base frame varied flow by flow (flow/flows.h). Throws UsageError as make_flows does.
    std::vector<packet::FrameSpec> stream_flow_frames(const StreamSpec& st) const;
    // Signed stream ids over the whole mix (stream by stream, flow by flow).
    uint32_t mix_flows() const;
    // What a stream's frames carry: none when --no-signature or one of its frames has no room
    // (a stream is measured whole or not at all); its smallest frame's level otherwise.
    packet::SigLevel stream_sig_level(const StreamSpec& st) const;
    // What every frame of the run carries: the least of the streams' levels.
    packet::SigLevel sig_level() const;
    // Some stream is signed: receivers classify frames by their signatures.
    bool signed_frames() const;
    // Receivers measure latency per interval: user-space RX of signed frames (the XDP sink
    // and the reflector measure none).
    bool live_latency() const {
        return signed_frames() && rx_enabled() && !reflect && afxdp.rx_mode != RxMode::xdp;
    }
    // Streams the receiver tracks: one per flow (stream id = flow index). An RX-only run does
    // not know the sender's flow count unless --flows is given: it tracks up to kSinkMaxStreams.
    uint32_t rx_streams() const {
        return tx_enabled() || flows || !streams.empty() ? mix_flows() : kSinkMaxStreams;
    }
    // Request/response and reflector: one worker serves a queue's TX and RX.
    bool paired() const { return reflect || outstanding > 0; }

    // The streams every trial sends: --stream's, or one made of the frame options (the whole
    // --rate and --count are its own).
    std::vector<StreamSpec> mix() const;
    // One stream of one fixed size: the sender writes its frames once, before the trial (the
    // fastest path); anything else is composed frame by frame.
    bool single_fixed_stream() const { return streams.empty() && !size.varies(); }

    // The first (for `run`, the only) trial.
    TrialSpec trial() const { return {single_fixed_stream() ? frame.frame_size : 0, count, rate, duration_s}; }
    // This spec with the trial's values in place (frame size, count, rate, duration).
    RunSpec with_trial(const TrialSpec& t) const;

    // The frame sizes the session's trials send: --sizes, else --size.
    std::vector<unsigned> frame_sizes() const;
    // Refuses (UsageError) a rate to be offered (--rate, --max-rate, --min-rate) that asks more
    // than `c` at any of the frame sizes; a rate in % without a line rate only when
    // `percent_needs_line_rate` (the session, once the ports said their speed).
    void check_rates(const RateCeiling& c, bool percent_needs_line_rate) const;

    // Throws UsageError with a precise message on any inconsistency.
    void validate() const;
    void validate_procedure() const;      // part of validate(): what the procedure needs
    void validate_procedure_mix() const;  // part of validate_procedure(): a procedure over a stream mix
    void validate_stream(const StreamSpec& st) const;  // part of validate(): one stream of the mix
    void validate_impair() const;  // validate() of a `linerate impair` spec (spec/impair_options.cpp)
    void validate_connect() const;  // validate() of a `linerate connect` spec (spec/connect_options.cpp)
};

}  // namespace lr::spec
