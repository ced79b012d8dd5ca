// The result model: what a trial produced, as plain data. The engine fills it; reports,
// procedures and exporters read it. Nothing here refers to the engine or to any output.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "packet/signature.h"
#include "spec/run_spec.h"
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

struct QueueResult {
    stats::QueueId id;
    stats::QueueSample final;
    double active_s = 0;     // TX: the worker's run time; RX: first to last received burst
    LatencySummary latency;  // RX queues of signed runs
};

// Per stream (= flow): what was sent and what arrived, after the drain.
struct StreamResult {
    uint32_t stream = 0;
    bool tx_known = false;  // the sender is in this run
    uint64_t sent = 0;
    uint64_t received = 0;  // distinct sequences
    uint64_t lost = 0;      // sent - received when the sender is known; else sequence gaps
    uint64_t reordered = 0, duplicates = 0, late = 0;
    double jitter_ns = 0;   // RFC 3550
};

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
    bool round_trip = false;         // a port both sends and receives: frames come back (reflector)
    bool interrupted = false;        // a signal ended it early
    uint64_t timeouts = 0;           // request/response: requests never answered
    double transactions_per_s = 0;   // request/response: answered requests per second
    uint64_t lost = 0;               // TX - RX when loopback
    uint64_t flushed_before = 0;     // frames found waiting in receive queues before the trial started
    std::vector<StreamResult> streams;    // signed runs with RX: per stream
    stats::LatencyHistogram latency;      // all RX queues merged
    packet::SigLevel sig_level = packet::SigLevel::none;
    std::vector<std::string> violations;  // broken invariants: the trial is invalid
    std::vector<std::string> notes;       // informational
    Verdict verdict = Verdict::pass;
    std::string verdict_reason;
};

}  // namespace lr::result
