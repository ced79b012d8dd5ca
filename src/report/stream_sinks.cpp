#include "report/stream_sinks.h"

#include "report/csv.h"
#include "report/output_files.h"
#include "report/result_fields.h"

namespace lr::report {

JsonLinesSink::JsonLinesSink(const std::string& path) : file_(path, "JSON lines") {}

void JsonLinesSink::line(const nlohmann::json& j) {
    file_.write(j.dump() + "\n");
    file_.flush();
}

void JsonLinesSink::trial_started(const result::TrialStart& t) {
    trial_ = t.index;
    nlohmann::json j = {{"type", "trial_start"}, {"trial", t.index}, {"of", t.of}};
    if (t.spec) {
        j["frame_size"] = t.spec->frame.frame_size;
        j["requested_pps"] = t.spec->rate_pps > 0 ? nlohmann::json(t.spec->rate_pps) : nlohmann::json(nullptr);
    }
    line(j);
}

void JsonLinesSink::interval(const stats::IntervalRow& row) {
    auto j = interval_json(row);
    j["type"] = "interval";
    j["trial"] = trial_;
    line(j);
}

void JsonLinesSink::trial_finished(const result::TrialResult& r) {
    auto j = trial_summary_fields().json(r);
    j["type"] = "trial";
    j["trial"] = r.index;
    line(j);
    for (const auto& st : r.streams) {
        auto s = stream_fields().json(st);
        s["type"] = "stream";
        s["trial"] = r.index;
        line(s);
    }
}

void JsonLinesSink::end(const nlohmann::json& summary) {
    line({{"type", "end"}, {"report", summary}});
    file_.close();
}

std::vector<std::string> CsvSink::columns() {
    auto c = interval_fields().columns();
    c.insert(c.begin(), "trial");
    return c;
}

std::vector<std::string> CsvSink::stream_columns() {
    auto c = stream_fields().columns();
    c.insert(c.begin(), "trial");
    return c;
}

CsvSink::CsvSink(const std::string& path) : file_(path, "CSV"), streams_(csv_companion(path, "streams"), "CSV") {
    file_.write(csv_line(columns()));
    streams_.write(csv_line(stream_columns()));
}

void CsvSink::trial_finished(const result::TrialResult& r) {
    for (const auto& st : r.streams) {
        auto cells = stream_fields().cells(st);
        cells.insert(cells.begin(), r.index);
        streams_.write(csv_line(cells));
    }
    streams_.flush();
}

void CsvSink::interval(const stats::IntervalRow& r) {
    auto cells = interval_fields().cells(r);
    cells.insert(cells.begin(), trial_);
    file_.write(csv_line(cells));
    file_.flush();
}

}  // namespace lr::report
