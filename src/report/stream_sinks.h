// Outputs that follow a run while it happens, from the control thread's interval rows:
// JSON lines (--json-stream: one object per interval, flushed each interval, then one per
// trial and a final one, so another program can follow a run live) and CSV (--csv: the
// per-interval series; procedures add their per-trial and per-size tables beside it). Both
// write an interval with its field list (report/result_fields.h), as the JSON report does.
#pragma once
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "report/output_files.h"
#include "result/sink.h"

namespace lr::report {

// Both sinks check every write (StreamFile): after a failure they write nothing more, and
// error() names the file and the reason.
class JsonLinesSink final : public result::Sink {
public:
    // path "-": stdout. Throws EnvError when the file cannot be created.
    explicit JsonLinesSink(const std::string& path);
    void trial_started(const result::TrialStart& t) override;
    void interval(const stats::IntervalRow& row) override;
    // The trial's line, then a line per stream of the mix ({"type": "stream", ...}).
    void trial_finished(const result::TrialResult& r) override;
    // The last line: {"type": "end", ...} with the whole report or procedure result; then
    // the file is closed.
    void end(const nlohmann::json& summary);
    const std::string& error() const { return file_.error(); }

private:
    void line(const nlohmann::json& j);
    StreamFile file_;
    unsigned trial_ = 0;
};

// --csv FILE: the intervals in FILE, and a row per stream of each trial in FILE-streams.csv.
class CsvSink final : public result::Sink {
public:
    // Throws EnvError when a file cannot be created.
    explicit CsvSink(const std::string& path);
    void trial_started(const result::TrialStart& t) override { trial_ = t.index; }
    void interval(const stats::IntervalRow& row) override;
    void trial_finished(const result::TrialResult& r) override;
    // The headers: "trial", then the interval's columns (interval_fields()), or the stream's
    // (stream_fields()).
    static std::vector<std::string> columns();
    static std::vector<std::string> stream_columns();
    // Flushes and closes the files; error() then covers every write.
    void close() {
        file_.close();
        streams_.close();
    }
    const std::string& error() const { return file_.error().empty() ? streams_.error() : file_.error(); }

private:
    StreamFile file_, streams_;
    unsigned trial_ = 0;
};

}  // namespace lr::report
