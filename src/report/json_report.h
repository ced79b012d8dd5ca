// The JSON report (--json FILE): spec, environment, interval series, per-queue totals,
// verdict; with several trials, every trial's result as well.
#pragma once
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "report/output_files.h"
#include "result/result.h"
#include "result/sink.h"
#include "spec/run_spec.h"

namespace lr::report {

inline constexpr int kSchemaVersion = 2;  // 2: streams[] per stream of the mix, flows[] per flow

// One trial's part of the report (intervals, queues, streams, latency, totals, verdict...),
// every result in it written through its field list (report/result_fields.h).
nlohmann::json trial_report(const spec::RunSpec& spec, const result::TrialResult& r);
// The whole report: the last trial at the top level, all of them in "trials" when more than one.
nlohmann::json make_report(const spec::RunSpec& spec, const nlohmann::json& environment,
                           const std::vector<result::TrialResult>& trials);
// Writes `j` with report::write_file (atomically; EnvError with the file and the reason).
void write_json(const std::string& path, const nlohmann::json& j);

// Keeps every trial's result for the report written at the end of the session.
class TrialCollector final : public result::Sink {
public:
    void trial_finished(const result::TrialResult& r) override {
        trials_.push_back(r);
        trials_.back().captured = {};  // the frames are the pcap sink's; the report does not need them
    }
    const std::vector<result::TrialResult>& trials() const { return trials_; }

private:
    std::vector<result::TrialResult> trials_;
};

}  // namespace lr::report
