#include "report/stream_sinks.h"

#include <fmt/format.h>

#include "report/json_report.h"
#include "util/error.h"

namespace lr::report {
namespace {

using J = nlohmann::json;

std::FILE* open_or_throw(const std::string& path, const char* what) {
    std::FILE* f = std::fopen(path.c_str(), "w");
    if (!f) throw EnvError(fmt::format("couldn't create the {} file {}", what, path));
    return f;
}

}  // namespace

J interval_json(const stats::IntervalRow& row) {
    J j = {{"t0", row.t0},
           {"t1", row.t1},
           {"tx", rates_json(row.tx)},
           {"rx", rates_json(row.rx)},
           {"rx_ours", row.rx_ours},
           {"rx_reordered", row.rx_reordered},
           {"rx_duplicates", row.rx_dup},
           {"drops", row.drops},
           {"backpressure", row.backpressure},
           {"seq_gaps", row.seq_gaps},
           {"requested_pps", row.requested_pps > 0 ? J(row.requested_pps) : J(nullptr)},
           {"generator_limited", row.generator_limited}};
    j["latency"] = row.latency_live && row.lat_count
                       ? J{{"count", row.lat_count}, {"min_ns", row.lat_min}, {"p50_ns", row.lat_p50},
                           {"p99_ns", row.lat_p99}, {"max_ns", row.lat_max}}
                       : J(nullptr);
    return j;
}

JsonLinesSink::JsonLinesSink(const std::string& path)
    : f_(path == "-" ? stdout : open_or_throw(path, "JSON lines")), own_(path != "-") {}

JsonLinesSink::~JsonLinesSink() {
    if (own_) std::fclose(f_);
}

void JsonLinesSink::line(const J& j) {
    const auto s = j.dump();
    std::fwrite(s.data(), 1, s.size(), f_);
    std::fputc('\n', f_);
    std::fflush(f_);
}

void JsonLinesSink::trial_started(const result::TrialStart& t) {
    trial_ = t.index;
    J j = {{"type", "trial_start"}, {"trial", t.index}, {"of", t.of}};
    if (t.spec) {
        j["frame_size"] = t.spec->frame.frame_size;
        j["requested_pps"] = t.spec->rate_pps > 0 ? J(t.spec->rate_pps) : J(nullptr);
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
    line({{"type", "trial"},
          {"trial", r.index},
          {"verdict", result::verdict_str(r.verdict)},
          {"tx_packets", r.tx.packets},
          {"rx_distinct", r.rx.unique},
          {"lost", r.loopback ? J(r.lost) : J(nullptr)},
          {"offered_pps", r.rate.offered_pps},
          {"tx_seconds", r.tx_seconds}});
}

void JsonLinesSink::end(const J& summary) { line({{"type", "end"}, {"report", summary}}); }

CsvSink::CsvSink(const std::string& path) : f_(open_or_throw(path, "CSV")) {
    std::fputs("trial,t0,t1,tx_packets,tx_pps,tx_l1_bps,tx_l2_bps,rx_packets,rx_pps,rx_l1_bps,rx_l2_bps,rx_ours,rx_reordered,"
               "rx_duplicates,"
               "drops,backpressure,seq_gaps,requested_pps,generator_limited,lat_count,lat_min_ns,lat_p50_ns,"
               "lat_p99_ns,lat_max_ns\n",
               f_);
}

CsvSink::~CsvSink() { std::fclose(f_); }

void CsvSink::interval(const stats::IntervalRow& r) {
    fmt::print(f_, "{},{:.6f},{:.6f},{},{:.1f},{:.1f},{:.1f},{},{:.1f},{:.1f},{:.1f},{},{},{},{},{},{},{:.1f},{},{},{},{},{},{}\n",
               trial_, r.t0, r.t1, r.tx.packets, r.tx.pps(), r.tx.l1_bps(), r.tx.l2_bps(), r.rx.packets, r.rx.pps(),
               r.rx.l1_bps(), r.rx.l2_bps(), r.rx_ours, r.rx_reordered, r.rx_dup, r.drops, r.backpressure, r.seq_gaps, r.requested_pps,
               r.generator_limited ? 1 : 0, r.lat_count, r.lat_min, r.lat_p50, r.lat_p99, r.lat_max);
    std::fflush(f_);
}

std::string csv_companion(const std::string& path, const std::string& what) {
    const auto dot = path.rfind(".csv");
    const auto base = dot != std::string::npos && dot + 4 == path.size() ? path.substr(0, dot) : path;
    return base + "-" + what + ".csv";
}

}  // namespace lr::report
