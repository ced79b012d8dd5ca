// Human-readable output, as a sink: a header and one live line per interval, then per-queue
// and total tables when a trial ends.
#pragma once
#include <cstdio>

#include "result/result.h"
#include "result/sink.h"
#include "spec/run_spec.h"

namespace lr::report {

// latency: the run measures latency live (RunSpec::live_latency): two more columns.
void print_header(std::FILE* out, bool latency);
void print_interval(std::FILE* out, const stats::IntervalRow& row);
void print_summary(std::FILE* out, const spec::RunSpec& spec, const result::TrialResult& r);

class ConsoleSink final : public result::Sink {
public:
    // quiet: no header or live lines, only each trial's summary.
    ConsoleSink(std::FILE* out, bool quiet) : out_(out), quiet_(quiet) {}
    void trial_started(const result::TrialStart& t) override;
    void interval(const stats::IntervalRow& row) override;
    void impair_live(const std::vector<result::ImpairLive>& v) override { impair_ = v; }
    void connect_live(const std::vector<result::ConnectLive>& v) override { connect_ = v; }
    void trial_finished(const result::TrialResult& r) override;

private:
    std::FILE* out_;
    bool quiet_;
    spec::RunSpec spec_;  // the running trial's
    unsigned of_ = 1;
    std::vector<result::ImpairLive> impair_;  // linerate impair: the interval's counts, shown under its line
    std::vector<result::ConnectLive> connect_, connect_prev_;  // linerate connect: this interval's and the last
};

}  // namespace lr::report
