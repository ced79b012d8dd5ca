#include "report/stream_sinks.h"

#include <algorithm>
#include <fmt/format.h>
#include <map>

#include "report/json_report.h"
#include "util/error.h"

namespace lr::report {
namespace {

using J = nlohmann::json;

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

JsonLinesSink::JsonLinesSink(const std::string& path) : file_(path, "JSON lines") {}

void JsonLinesSink::line(const J& j) {
    file_.write(j.dump() + "\n");
    file_.flush();
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

void JsonLinesSink::end(const J& summary) {
    line({{"type", "end"}, {"report", summary}});
    file_.close();
}

CsvSink::CsvSink(const std::string& path) : file_(path, "CSV") {
    file_.write("trial,t0,t1,tx_packets,tx_pps,tx_l1_bps,tx_l2_bps,rx_packets,rx_pps,rx_l1_bps,rx_l2_bps,rx_ours,"
                "rx_reordered,rx_duplicates,drops,backpressure,seq_gaps,requested_pps,generator_limited,lat_count,"
                "lat_min_ns,lat_p50_ns,lat_p99_ns,lat_max_ns\n");
}

void CsvSink::interval(const stats::IntervalRow& r) {
    file_.write(fmt::format(
        "{},{:.6f},{:.6f},{},{:.1f},{:.1f},{:.1f},{},{:.1f},{:.1f},{:.1f},{},{},{},{},{},{},{:.1f},{},{},{},{},{},{}\n",
        trial_, r.t0, r.t1, r.tx.packets, r.tx.pps(), r.tx.l1_bps(), r.tx.l2_bps(), r.rx.packets, r.rx.pps(),
        r.rx.l1_bps(), r.rx.l2_bps(), r.rx_ours, r.rx_reordered, r.rx_dup, r.drops, r.backpressure, r.seq_gaps,
        r.requested_pps, r.generator_limited ? 1 : 0, r.lat_count, r.lat_min, r.lat_p50, r.lat_p99, r.lat_max));
    file_.flush();
}

std::string table_csv(const J& rows) {
    std::vector<std::string> cols;
    std::vector<std::map<std::string, std::string>> flat;
    for (const auto& row : rows) {
        std::map<std::string, std::string> f;
        auto put = [&](const std::string& k, const J& v) {
            if (v.is_array() || v.is_object()) return;
            if (std::find(cols.begin(), cols.end(), k) == cols.end()) cols.push_back(k);
            f[k] = v.is_string() ? v.get<std::string>() : v.is_null() ? "" : v.dump();
        };
        for (const auto& [k, v] : row.items()) {
            if (v.is_object())
                for (const auto& [k2, v2] : v.items()) put(k + "." + k2, v2);
            else
                put(k, v);
        }
        flat.push_back(std::move(f));
    }
    std::string out;
    auto cell = [&out](size_t i, const std::string& s) {
        if (i) out += ',';
        if (s.find_first_of(",\"\n") == std::string::npos) {
            out += s;
            return;
        }
        out += '"';
        for (char ch : s) {
            if (ch == '"') out += '"';
            out += ch;
        }
        out += '"';
    };
    for (size_t i = 0; i < cols.size(); ++i) cell(i, cols[i]);
    out += '\n';
    for (const auto& f : flat) {
        for (size_t i = 0; i < cols.size(); ++i) {
            const auto it = f.find(cols[i]);
            cell(i, it == f.end() ? std::string() : it->second);
        }
        out += '\n';
    }
    return out;
}

}  // namespace lr::report
