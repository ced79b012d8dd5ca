// The live view on a terminal: a table redrawn in place every interval, per port and queue:
// TX/RX Mpps and Gbit/s at L1 and L2, receive classes (lost so far, reordered, duplicates),
// latency p50/p99/max where measured, drops by where they happened (device back-pressure,
// socket ring full, fill ring empty, no socket, NIC missed, egress device), flags such as
// generator-limited, the streams of a mix that lost the most so far, linerate impair's
// decisions and linerate connect's connections per queue, and a progress line
// (trial, load, elapsed and remaining). Only when the
// output is a terminal; colours only then and never with NO_COLOR set. From the control
// thread's snapshots: nothing here touches a worker.
#pragma once
#include <cstdio>
#include <string>
#include <vector>

#include "result/sink.h"

namespace lr::report {

class LiveTableSink final : public result::Sink {
public:
    LiveTableSink(std::FILE* out, bool colour) : out_(out), colour_(colour) {}
    void trial_started(const result::TrialStart& t) override;
    void snapshot(const std::vector<stats::QueueId>& ids, const stats::Snapshot& s) override;
    void interval(const stats::IntervalRow& row) override;
    void streams_live(const std::vector<result::StreamLive>& v) override { streams_ = v; }
    void impair_live(const std::vector<result::ImpairLive>& v) override { impair_ = v; }
    void connect_live(const std::vector<result::ConnectLive>& v) override { connect_ = v; }
    void trial_finished(const result::TrialResult& r) override;
    // The streams a table shows: the worst by open sequence gaps (loss so far).
    static constexpr size_t kWorstStreams = 5;

private:
    std::string paint(const std::string& s, const char* code) const;
    std::FILE* out_;
    bool colour_;
    unsigned lines_ = 0;  // drawn last time: the cursor goes back up over them
    std::vector<stats::QueueId> ids_;
    std::vector<result::StreamLive> streams_;  // a mix: its streams as of this interval
    std::vector<result::ImpairLive> impair_;   // linerate impair: each direction's counts
    std::vector<result::ConnectLive> connect_, connect_prev_;  // linerate connect: this interval's and the last
    stats::Snapshot prev_, cur_;
    unsigned trial_ = 0, of_ = 1, frame_size_ = 0;
    double requested_pps_ = 0, duration_s_ = 0;
    std::string why_;
    uint64_t count_ = 0;
};

// True when `f` is a terminal.
bool is_terminal(std::FILE* f);
// Colours are wanted: a terminal, and NO_COLOR unset or empty.
bool colour_wanted(std::FILE* f);

}  // namespace lr::report
