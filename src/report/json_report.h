// The JSON report (--json FILE): spec, environment, interval series, per-queue totals,
// verdict; with several trials, every trial's result as well.
#pragma once
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "result/result.h"
#include "result/sink.h"
#include "spec/run_spec.h"

namespace lr::report {

inline constexpr int kSchemaVersion = 1;

// Packets, bytes, seconds and the rates of an interval or a total.
nlohmann::json rates_json(const stats::Rates& r);
// A latency summary in ns (null when nothing was measured).
nlohmann::json latency_json(const result::LatencySummary& l);
// One trial's part of the report (intervals, queues, streams, latency, totals, verdict...).
nlohmann::json trial_report(const spec::RunSpec& spec, const result::TrialResult& r);
// The whole report: the last trial at the top level, all of them in "trials" when more than one.
nlohmann::json make_report(const spec::RunSpec& spec, const nlohmann::json& environment,
                           const std::vector<result::TrialResult>& trials);
// Writes `text` to `path` atomically (temp file + rename). Throws lr::EnvError naming `what`
// ("JSON report", "JUnit file") when the file can't be written.
void write_file(const std::string& path, const std::string& text, const std::string& what);
// Writes atomically (temp file + rename). Throws lr::EnvError when the file can't be written.
void write_json(const std::string& path, const nlohmann::json& j);

// Keeps every trial's result for the report written at the end of the session.
class TrialCollector final : public result::Sink {
public:
    void trial_finished(const result::TrialResult& r) override { trials_.push_back(r); }
    const std::vector<result::TrialResult>& trials() const { return trials_; }

private:
    std::vector<result::TrialResult> trials_;
};

}  // namespace lr::report
