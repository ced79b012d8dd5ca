// What one worker needs, fixed before it starts: its role, its queue, its counters, and the
// frames it sends. Workers read this and the run control flags; nothing else.
#pragma once
#include <atomic>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "packet/signature.h"
#include "stats/counters.h"
#include "stats/capture.h"
#include "stats/counts_exchange.h"
#include "stats/gaps.h"
#include "stats/rx_measure.h"
#include "worker/flow_gates.h"
#include "packet/tcp_segment.h"
#include "spec/connect_spec.h"
#include "stats/connect_counts.h"
#include "stats/latency.h"
#include "worker/handshake_window.h"
#include "worker/impairer.h"
#include "worker/pacer.h"
#include "worker/tx_program.h"

namespace lr::worker {

// Flags the control thread raises; workers poll them once per burst. One per trial.
struct RunControl {
    alignas(64) std::atomic<bool> stop_tx{false};
    alignas(64) std::atomic<bool> stop_rx{false};
    // A controlled trial (`linerate serve`): streams start, pause and stop when the controller
    // says, and senders run until stop_tx. Null otherwise.
    FlowGates* gates = nullptr;
};

// What a worker does on its queue. Request/response and reflect serve a queue's TX and RX
// with one worker, which owns both the TX and the RX counters of the queue. Forward (`linerate
// impair`) receives on its port's queue and sends on the same queue of its peer port: it owns
// the RX counters of the one and the TX counters of the other. Connect (`linerate connect`)
// sends SYNs and answers the listener's segments on one queue, like request/response.
enum class Role : uint8_t { tx, rx, request_response, reflect, forward, connect };
const char* role_str(Role r);
inline bool sends(Role r) { return r != Role::rx; }
inline bool receives(Role r) { return r != Role::tx; }

struct TxSetup {
    uint32_t burst = 32;
    uint64_t count = 0;      // packets to send; 0 = until stop_tx
    PacingPlan pacing;       // this queue's share of the rate (pps 0: unlimited) and its pattern
    uint32_t frame_len = 60;   // frame without FCS
    uint32_t wire_bytes = 64;  // frame with FCS
    bool sign = false;
    packet::SigLayout layout;
    std::vector<uint16_t> streams;                // stream id of each of the queue's flows
    std::vector<std::vector<uint8_t>> templates;  // each flow's frame, built once (signed templates)
    std::vector<uint64_t>* sent_per_stream = nullptr;  // written once, when the worker ends
    stats::GapStats* departures = nullptr;             // written while running, read after join
    stats::FrameCapture* capture = nullptr;            // --capture-filter sent: the first frames sent
    // Streams: set when the queue carries more than one template, sizes that vary, starts,
    // bursts or a replay (worker/tx_streams_engine.h); then `templates` holds one zero-filled
    // frame of the queue's largest size that the backend writes into every buffer once.
    std::shared_ptr<const TxProgram> program;
    std::vector<ShareSent>* shares_sent = nullptr;     // written once, when the worker ends
    stats::CountsExchange<stats::ShareLive>* shares_live = nullptr;  // each share's frames so far, when asked
};

struct RxSetup {
    uint32_t burst = 32;
    bool sign = false;
    uint32_t nonce = 0;
    uint32_t streams = 0;
    stats::RxResult* result = nullptr;  // written while running, read by the control thread after join
    bool flow_totals = false;  // each flow's bytes, latency sum and extremes, arrival times (stats::FlowRxTotals)
    bool stack_responder = false;  // responses come from a host's own stack (--responder stack): its IP header
};

// A forwarding worker's: the impairer of its direction and where it publishes its counts,
// both the trial's (engine/planner).
struct ForwardSetup {
    Impairer* impairer = nullptr;
    stats::ImpairCounters* counts = nullptr;
    unsigned peer_port_index = 0;  // the port it sends on
    std::string peer_port;
};

// A connecting worker's (`linerate connect`): its handshake window, latency histogram and
// counts (all the trial's: engine/planner), the SYN template and what the answers need.
using spec::CloseMode;
struct ConnectSetup {
    HandshakeWindow* window = nullptr;
    stats::ConnectCounters* counts = nullptr;
    stats::LatencyHistogram* handshake = nullptr;  // SYN to SYN-ACK, per answered handshake
    const packet::SynTemplate* syn = nullptr;
    CloseMode close = CloseMode::rst;
    uint16_t listen_port = 0;
    uint16_t src_port_lo = 0, src_port_hi = 0;
    uint16_t queues = 1;  // the port's queues: they take turns through the source ports
    uint8_t ttl = 64;     // of the replies
    uint64_t syn_timeout_ns = 0, close_timeout_ns = 0;
};

struct WorkerConfig {
    Role role = Role::tx;
    unsigned port_index = 0;  // into the session's port list
    std::string port;
    uint16_t queue = 0;
    int cpu = -1;             // the CPU the worker is pinned to
    TxSetup tx;
    RxSetup rx;
    ForwardSetup fwd;
    ConnectSetup conn;
    stats::QueueCounters* tx_counters = nullptr;  // roles that send
    stats::QueueCounters* rx_counters = nullptr;  // roles that receive
    const RunControl* ctl = nullptr;
    bool yield_when_idle = false;  // share the core when workers outnumber CPUs
    std::optional<int> nice;       // paced senders: the nice value to run at (--sender-nice)
    uint32_t outstanding = 0;      // request/response window
    double response_timeout_s = 0.1;
};

}  // namespace lr::worker
