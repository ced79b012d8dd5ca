// The result model: what a trial produced, as plain data. The engine fills it; reports,
// procedures and exporters read it. Nothing here refers to the engine or to any output.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "packet/signature.h"
#include "spec/run_spec.h"
#include "stats/capture.h"
#include "stats/flow_totals.h"
#include "stats/connect_counts.h"
#include "stats/impair_counts.h"
#include "stats/gaps.h"
#include "stats/latency.h"
#include "stats/snapshot.h"

namespace lr::result {

enum class Verdict { pass, fail, invalid };
const char* verdict_str(Verdict v);

struct LatencySummary {
    uint64_t count = 0, min = 0, p50 = 0, p90 = 0, p99 = 0, p999 = 0, max = 0;
    double mean = 0;
};
LatencySummary summarize(const stats::LatencyHistogram& h);
LatencySummary summarize(const stats::StreamLatency& h);
// An interval's live latency (count, min, p50, p99, max; the rest 0); none when the interval
// measured no latency (IntervalRow::latency_live).
std::optional<LatencySummary> live_latency(const stats::IntervalRow& row);

// One non-empty bucket of a latency histogram: `count` values in [lower_ns, upper_ns).
struct LatencyBucket {
    uint64_t lower_ns = 0, upper_ns = 0, count = 0;
};
// The histogram's non-empty buckets, lowest first (exact to the nanosecond below 128 ns, then
// 1/128 of a power of two wide: stats/latency.h).
std::vector<LatencyBucket> latency_buckets(const stats::LatencyHistogram& h);
std::vector<LatencyBucket> latency_buckets(const stats::StreamLatency& h);  // 1/16 of a power of two wide

// How long the workers of one direction were runnable but off their CPUs (another task held
// the core): the longest of one worker, and the largest share of a worker's run. A receiver
// that waits leaves frames in its ring, so latency and arrival times include the wait.
struct CpuWait {
    double longest_s = 0;
    double share_pct = 0;
};

struct QueueResult {
    stats::QueueId id;
    stats::QueueSample final;
    double active_s = 0;     // TX: the worker's run time; RX: first to last received burst
    LatencySummary latency;  // RX queues of signed runs
};

// Per flow (a signed stream id: a sequence space of its own): what was sent and what arrived,
// after the drain.
struct FlowResult {
    uint32_t stream = 0;  // its signed stream id
    bool tx_known = false;  // the sender is in this run
    uint64_t sent = 0;
    uint64_t received = 0;  // distinct sequences
    uint64_t lost = 0;      // sent - received when the sender is known; else sequence gaps
    uint64_t reordered = 0, duplicates = 0, late = 0;
    double jitter_ns = 0;   // RFC 3550
    stats::FlowRxTotals rx;  // bytes, latency sum and extremes, arrival times (controlled trials)
    // Sender unknown: sequence gaps more than 1000 times what arrived (a stray or forged frame
    // with a huge sequence) are an anomaly, reported, never counted as loss.
    bool implausible = false;
    uint64_t claimed_gaps = 0;
};

// Frames of one size.
struct SizeCount {
    unsigned size = 0;  // FCS included
    uint64_t frames = 0;
};

// Per stream of the mix (--stream, or the one stream the options describe): its flows' counts
// added up, its bytes and sizes as sent, its latency.
struct StreamResult {
    uint32_t index = 0;  // its place in the mix
    std::string name;
    uint32_t first_flow = 0, flows = 0;  // its signed stream ids: [first_flow, first_flow + flows)
    bool measured = false;  // signed and received in this run: the counts below beyond `sent` are known
    uint64_t sent = 0, sent_bytes = 0;  // frames and bytes (FCS included) the devices took
    uint64_t unsigned_sent = 0;  // of those, unsigned (replayed records without room): not measured
    uint64_t received = 0, lost = 0, reordered = 0, duplicates = 0, late = 0;
    stats::FlowRxTotals rx;  // its flows' (controlled trials): bytes received, latency sum and extremes, arrival times
    double jitter_ns = 0;       // the largest of its flows'
    double requested_pps = 0;   // its own rate (0: unpaced)
    double tx_pps = 0;          // sent over the TX phase
    LatencySummary latency;     // of its frames (count 0: not measured)
    std::vector<LatencyBucket> latency_buckets;  // its histogram's non-empty buckets (merged across hosts)
    std::vector<SizeCount> sizes;  // frames sent per size
};

// A stream while the trial runs (the live views): its frames sent so far and what its
// receivers have seen, as of the last time the workers were asked (once per interval).
struct StreamLive {
    uint32_t index = 0;
    std::string name;
    uint64_t sent = 0;
    uint64_t received = 0, gaps = 0, reordered = 0, duplicates = 0, late = 0;  // gaps: open sequence gaps
    uint64_t sent_bytes = 0;  // FCS included
    stats::FlowRxTotals rx;   // its flows' (controlled trials)
};

// Gaps between departures (sender) or arrivals (receiver), from one clock read per burst.
struct GapSummary {
    bool measured = false;
    uint64_t gaps = 0;
    double mean_ns = 0, stddev_ns = 0;
    uint64_t p50_ns = 0, p90_ns = 0, p99_ns = 0, max_ns = 0;
    double zero_fraction = 0;  // gaps of 0: frames handed over (or found) in the same burst
};
GapSummary summarize(const stats::GapStats& g);

// What was asked of the senders and what they did.
struct RateResult {
    std::string requested;      // as given: "10 Mpps", "100 % of line rate", "max"
    double requested_pps = 0;   // 0: as fast as possible
    double offered_pps = 0;     // what the senders handed to the devices
    double error_pct = 0;       // (offered - requested) / requested; 0 when unpaced
    double line_rate_bps = 0;   // the links' L1 rate (0: unknown)
    double planned_s = 0;       // how long the TX phase should have taken
    double stretch_pct = 0;     // how much longer it took
    uint64_t skipped = 0;       // departure slots given up: the senders were further behind than the window
    double behind_s = 0;        // the time those slots spanned
    double catch_up_s = 0;      // --catch-up: the lateness the senders make up for
    uint64_t stalls = 0;        // times a sender fell behind its schedule (worker/pacer.h kStallNs)
    double longest_stall_s = 0; // the furthest behind one was
    uint64_t largest_catch_up = 0;  // the most frames a sender owed at once (sent late, back to back)
    std::string pattern;        // cbr, burst:N, poisson
    std::optional<int> sender_nice;  // the nice value the paced senders ran at (none: unpaced or --sender-nice keep)
    GapSummary departures, arrivals;
};

// One direction of `linerate impair`: every decision its impairer made, what the egress
// device took, and how long the frames it forwarded were held.
struct ImpairResult {
    std::string from, to;  // the ports: received on `from`, sent on `to`
    uint16_t queue = 0;
    stats::ImpairCounts counts;
    uint64_t sent = 0;      // what the egress device confirmed
    uint64_t unsent = 0;    // handed to it and never confirmed when the run ended
    // What the host dropped of the frames that reached `from` before the emulator received them
    // (its socket's ring full, the device's own drops): the port's, over all its queues.
    uint64_t ingress_host_dropped = 0;
    LatencySummary held_time;  // arrival to departure, per forwarded frame (the added delay and the queueing)
    std::vector<LatencyBucket> held_buckets;  // its histogram's non-empty buckets
    // How late each forwarded frame left against the time it was due (delay and link): the
    // emulator's own lateness, part of held_time.
    LatencySummary late_time;
    std::vector<LatencyBucket> late_buckets;
};

// One direction of `linerate impair` while it runs: its counts as its worker last published them.
struct ImpairLive {
    std::string from, to;
    uint16_t queue = 0;
    stats::ImpairCounts counts;
};

// One queue of `linerate connect`: how each of its handshakes ended, how long the listener
// took to answer them, and the frames its device sent (SYNs and replies).
struct ConnectResult {
    std::string port;
    uint16_t queue = 0;
    stats::ConnectCounts counts;
    uint64_t frames_sent = 0;    // SYNs and replies, as the device confirmed them
    uint64_t frames_unsent = 0;  // handed to it and never confirmed when the run ended
    LatencySummary handshake;    // SYN handed to the device to SYN-ACK read, per answered handshake
    std::vector<LatencyBucket> handshake_buckets;
};

// One queue of `linerate connect` while it runs: its counts as its worker last published them.
struct ConnectLive {
    std::string port;
    uint16_t queue = 0;
    stats::ConnectCounts counts;
};

// Who dropped the frames that did not arrive (loopback runs): this host's egress device, this
// host's receive path, or - the rest - the path under test (link, switch, device).
struct LossAccount {
    uint64_t lost = 0;              // sent - distinct received
    uint64_t egress_dropped = 0;    // the sending ports' devices dropped them (tx_dropped, oerrors)
    uint64_t host_rx_dropped = 0;   // they reached a receiving port, whose host path dropped them
    uint64_t unaccounted = 0;       // lost on the path under test: lost - the two above
};

// What linerate handed a sending port's device against what the device says it did with it.
struct TxReconciliation {
    std::string port;
    uint64_t handed = 0;       // frames the device accepted from linerate (its "sent")
    uint64_t transmitted = 0;  // the device's own transmit counter over the trial
    uint64_t dropped = 0;      // the device's own drop and error counters over the trial
    bool agrees() const { return handed == transmitted + dropped; }
};

// A port's link changing state during a trial (seconds from the trial's start).
struct LinkEvent {
    std::string port;
    double t = 0;
    bool up = false;
};

// A time a port's link was down, and what happened on that port meanwhile.
struct LinkOutage {
    std::string port;
    double from = 0;
    double to = -1;                 // -1: still down when the trial ended
    double seconds = 0;
    uint64_t handed = 0;            // frames linerate's queues handed that port's device meanwhile
    uint64_t egress_dropped = 0;    // of those and earlier ones, what the device dropped meanwhile
    uint64_t received = 0;          // frames the device received meanwhile
};

// "link lr0 down at 1.020 s for 2.030 s: 1234 frames handed to its device meanwhile, 1234
// dropped by it, 0 received" (or "down from 1.020 s to the end of the trial").
std::string outage_text(const LinkOutage& o);

struct TrialResult {
    unsigned index = 0;      // 0-based, within the session
    spec::TrialSpec trial;   // what this trial was asked to do
    std::vector<stats::QueueId> ids;
    std::vector<stats::IntervalRow> intervals;
    std::vector<QueueResult> queues;
    std::vector<stats::PortSample> ports;  // port counters over the trial
    stats::Totals tx, rx;
    double tx_seconds = 0;     // TX phase: first TX worker start to last TX worker end
    double rx_seconds = 0;     // first to last received burst over all RX queues
    double total_seconds = 0;  // launch to the end of the drain
    double drain_seconds = 0;
    bool loopback = false;           // TX and RX ports both in this process
    bool generator_limited = false;  // a rate was asked and TX achieved less than 99 % of it
    RateResult rate;
    CpuWait tx_cpu_wait, rx_cpu_wait;  // senders' and receivers' time off their CPUs
    bool round_trip = false;         // a port both sends and receives: frames come back (reflector)
    bool interrupted = false;        // a signal ended it early
    uint64_t timeouts = 0;           // request/response: requests never answered
    double transactions_per_s = 0;   // request/response: answered requests per second
    uint64_t lost = 0;               // TX - RX when loopback
    LossAccount loss;                // who dropped them
    std::vector<TxReconciliation> tx_ports;
    std::vector<LinkEvent> link_events;
    std::vector<LinkOutage> outages;
    uint64_t flushed_before = 0;     // frames found waiting in receive queues before the trial started
    std::vector<FlowResult> flows;        // signed runs with RX: per flow (signed stream id)
    std::vector<StreamResult> streams;    // per stream of the mix (runs that send)
    std::vector<SizeCount> rx_sizes;      // sizes that vary: frames received per size
    std::vector<ImpairResult> impair;     // linerate impair: per direction and queue
    std::vector<ConnectResult> connect;   // linerate connect: per queue
    stats::LatencyHistogram latency;      // all RX queues merged
    packet::SigLevel sig_level = packet::SigLevel::none;
    std::vector<stats::CapturedFrame> captured;  // --capture: the receive queues' frames, by time
    std::vector<std::string> violations;  // broken invariants: the trial is invalid
    std::vector<std::string> notes;       // informational
    Verdict verdict = Verdict::pass;
    std::string verdict_reason;
};

}  // namespace lr::result
