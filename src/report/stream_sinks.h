// Outputs that follow a run while it happens, from the control thread's interval rows:
// JSON lines (--json-stream: one object per interval, flushed each interval, then one per
// trial and a final one, so another program can follow a run live) and CSV (--csv: the
// per-interval series; procedures add their per-trial and per-size tables beside it).
#pragma once
#include <cstdio>
#include <string>

#include <nlohmann/json.hpp>

#include "result/sink.h"

namespace lr::report {

// One interval row as the JSON lines and the JSON report give it.
nlohmann::json interval_json(const stats::IntervalRow& row);

class JsonLinesSink final : public result::Sink {
public:
    // path "-": stdout. Throws EnvError when the file cannot be created.
    explicit JsonLinesSink(const std::string& path);
    ~JsonLinesSink() override;
    JsonLinesSink(const JsonLinesSink&) = delete;
    JsonLinesSink& operator=(const JsonLinesSink&) = delete;
    void trial_started(const result::TrialStart& t) override;
    void interval(const stats::IntervalRow& row) override;
    void trial_finished(const result::TrialResult& r) override;
    // The last line: {"type": "end", ...} with the whole report or procedure result.
    void end(const nlohmann::json& summary);

private:
    void line(const nlohmann::json& j);
    std::FILE* f_;
    bool own_;
    unsigned trial_ = 0;
};

class CsvSink final : public result::Sink {
public:
    // Throws EnvError when the file cannot be created.
    explicit CsvSink(const std::string& path);
    ~CsvSink() override;
    CsvSink(const CsvSink&) = delete;
    CsvSink& operator=(const CsvSink&) = delete;
    void trial_started(const result::TrialStart& t) override { trial_ = t.index; }
    void interval(const stats::IntervalRow& row) override;

private:
    std::FILE* f_;
    unsigned trial_ = 0;
};

// "results.csv" -> "results-trials.csv" (the procedures' companion tables).
std::string csv_companion(const std::string& path, const std::string& what);

}  // namespace lr::report
