// What the OTG metrics report of a flow and of a port, as plain numbers: taken from a
// running trial's live views (result::StreamLive, the control thread's snapshot) or from a
// trial's result, and told apart from rates (computed from two of them).
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "result/result.h"
#include "stats/snapshot.h"

namespace lr::otg {

struct FlowNumbers {
    uint64_t frames_tx = 0, bytes_tx = 0;  // what the devices took (FCS included)
    uint64_t frames_rx = 0, bytes_rx = 0;  // distinct frames received, and the bytes of every frame received
    uint64_t reordered = 0, duplicates = 0, late = 0;
    uint64_t lat_n = 0, lat_sum_ns = 0, lat_min_ns = 0, lat_max_ns = 0;  // frames with a timestamp
    uint64_t first_rx_ns = 0, last_rx_ns = 0;  // CLOCK_MONOTONIC; 0: nothing received
    double jitter_ns = 0;                      // after the trial: the largest of its flows' (RFC 3550)
    std::vector<result::LatencyBucket> lat_buckets;  // after the trial: its latency histogram (a controller merges them)
    // The counts since `base` (a flow started again within a trial): counts and sums are
    // differences; the extremes and times are kept (they cover every start of the trial).
    FlowNumbers since(const FlowNumbers& base) const;
    double loss_pct() const;  // of frames_tx, frames_tx - frames_rx (0 when nothing was sent)
    void take_rx(const stats::FlowRxTotals& t);  // bytes_rx, the latency totals and arrival times
};

// A flow's numbers while its trial runs.
FlowNumbers live_numbers(const result::StreamLive& s);
// After the trial: its stream's result and its flows' (signed ids) latency totals.
FlowNumbers final_numbers(const result::TrialResult& r, size_t stream);

struct PortNumbers {
    uint64_t frames_tx = 0, bytes_tx = 0, frames_rx = 0, bytes_rx = 0;
    PortNumbers& operator+=(const PortNumbers& o);
};

// A port's TX queues (what the device took) and RX queues (what linerate's receive queues got)
// in a snapshot of every queue's counters.
PortNumbers port_numbers(const std::vector<stats::QueueId>& ids, const stats::Snapshot& s, const std::string& port);
// The same at the end of a trial.
PortNumbers port_numbers(const result::TrialResult& r, const std::string& port);

}  // namespace lr::otg
