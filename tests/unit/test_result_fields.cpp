// Every output writes a result through its one field list (report/result_fields.h): the JSON
// report, the JSON lines, the CSV files and the Prometheus values agree on keys and values.
// A trial on the in-memory backend feeds the sinks as a run does, and the outputs are compared.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include "backend/loop/loop_backend.h"
#include "engine/session.h"
#include "report/csv.h"
#include "report/json_report.h"
#include "report/metric_values.h"
#include "report/procedure_report.h"
#include "report/result_fields.h"
#include "report/stream_sinks.h"
#include "spec/options.h"

using namespace lr;
using J = nlohmann::json;

namespace {

struct TempDir {
    std::string path;
    TempDir() {
        char t[] = "/tmp/lr-fields-XXXXXX";
        path = mkdtemp(t);
    }
    ~TempDir() { std::system(("rm -rf '" + path + "'").c_str()); }
    std::string operator/(const std::string& name) const { return path + "/" + name; }
};

std::vector<std::string> lines_of(const std::string& path) {
    std::ifstream f(path);
    std::vector<std::string> out;
    for (std::string l; std::getline(f, l);) out.push_back(l);
    return out;
}

// Splits a CSV line of linerate's (no quoted commas in these files).
std::vector<std::string> split(const std::string& line) {
    std::vector<std::string> out;
    std::stringstream ss(line);
    for (std::string c; std::getline(ss, c, ',');) out.push_back(c);
    if (!line.empty() && line.back() == ',') out.emplace_back();
    return out;
}

// The value at a CSV column ("tx.packets") in a JSON object; null when absent.
J at_column(const J& j, const std::string& column) {
    const J* v = &j;
    std::stringstream ss(column);
    for (std::string k; std::getline(ss, k, '.');) {
        if (!v->is_object() || !v->contains(k)) return nullptr;
        v = &(*v)[k];
    }
    return *v;
}

// What a CSV cell holds for a JSON value.
std::string cell_text(const J& v) { return v.is_null() ? "" : v.is_string() ? v.get<std::string>() : v.dump(); }

spec::RunSpec loop_spec(spec::OptionValues o) {
    auto s = spec::build_run_spec(o);
    s.backend = spec::BackendKind::loop;
    s.interval_s = 0.05;
    s.settle_s = 0;
    return s;
}

// Two signed, paced trials on the in-memory wire, through the JSON lines, the CSV and the
// collector for the report, as `linerate run --trials 2` feeds them.
struct Outputs {
    TempDir dir;
    spec::RunSpec spec = loop_spec({{"tx", {"a"}}, {"rx", {"b"}}, {"count", {"20000"}}, {"rate", {"100kpps"}},
                                    {"trials", {"2"}}});
    J report;
    std::vector<J> lines;
    std::vector<std::string> csv;
    std::vector<result::TrialResult> trials;

    Outputs() {
        {
            engine::Session session(loop::make_loop_backend(), spec);
            report::JsonLinesSink jl(dir / "r.jsonl");
            report::CsvSink csvs(dir / "r.csv");
            report::TrialCollector collect;
            result::SinkList sinks;
            sinks.add(jl);
            sinks.add(csvs);
            sinks.add(collect);
            for (unsigned i = 0; i < spec.trials; ++i) session.run_trial(spec.trial(), sinks, spec.trials);
            report = report::make_report(spec, {}, collect.trials());
            trials = collect.trials();
            jl.end(report);
            csvs.close();
            EXPECT_EQ(jl.error(), "");
            EXPECT_EQ(csvs.error(), "");
        }
        for (const auto& l : lines_of(dir / "r.jsonl")) lines.push_back(J::parse(l));
        csv = lines_of(dir / "r.csv");
    }
};

const Outputs& outputs() {
    static const Outputs o;
    return o;
}

}  // namespace

TEST(ResultFields, TheReportsIntervalRowIsTheJsonLinesRowWithoutTypeAndTrial) {
    const auto& o = outputs();
    ASSERT_EQ(o.report["trials"].size(), 2u);
    std::vector<std::vector<J>> from_lines(2);
    for (auto l : o.lines) {
        if (l["type"] != "interval") continue;
        const auto t = l["trial"].get<unsigned>();
        ASSERT_LT(t, 2u);
        l.erase("type");
        l.erase("trial");
        from_lines[t].push_back(l);
    }
    std::vector<J> from_report;
    for (unsigned t = 0; t < 2; ++t) {
        const auto& iv = o.report["trials"][t]["intervals"];
        ASSERT_GE(iv.size(), 4u) << "a 200 ms trial at 50 ms intervals";
        ASSERT_EQ(from_lines[t].size(), iv.size()) << "trial " << t;
        for (size_t i = 0; i < iv.size(); ++i) EXPECT_EQ(from_lines[t][i], iv[i]) << "trial " << t << ", interval " << i;
        from_report.insert(from_report.end(), iv.begin(), iv.end());
    }
    // The run measures latency live: the intervals carry it, with the report's latency keys.
    size_t timed = 0;
    for (const auto& iv : from_report) {
        ASSERT_TRUE(iv["latency"].is_object()) << iv.dump();
        timed += iv["latency"]["count"].get<size_t>();
        for (const auto& [k, v] : iv["latency"].items())
            EXPECT_TRUE(o.report["latency"].contains(k)) << "interval latency key " << k << " is not the report's";
        EXPECT_EQ(iv["requested_pps"], 100000.0);
    }
    EXPECT_EQ(timed, o.trials[0].latency.count() + o.trials[1].latency.count()) << "the intervals add up";
}

TEST(ResultFields, TheCsvHeaderIsTheIntervalFieldsAndEveryCellTheJsonValue) {
    const auto& o = outputs();
    auto cols = report::interval_fields().columns();
    cols.insert(cols.begin(), "trial");
    ASSERT_FALSE(o.csv.empty());
    EXPECT_EQ(split(o.csv[0]), cols);
    EXPECT_EQ(report::CsvSink::columns(), cols);
    for (const char* c : {"tx.packets", "rx.pps", "latency.p50_ns", "generator_limited", "requested_pps"})
        EXPECT_NE(std::find(cols.begin(), cols.end(), c), cols.end()) << c;
    size_t row = 1;
    for (unsigned t = 0; t < 2; ++t)
        for (const auto& iv : o.report["trials"][t]["intervals"]) {
            ASSERT_LT(row, o.csv.size());
            const auto cells = split(o.csv[row++]);
            ASSERT_EQ(cells.size(), cols.size()) << o.csv[row - 1];
            EXPECT_EQ(cells[0], std::to_string(t));
            for (size_t c = 1; c < cols.size(); ++c)
                EXPECT_EQ(cells[c], cell_text(at_column(iv, cols[c]))) << "column " << cols[c] << ", row " << row - 1;
        }
    EXPECT_EQ(row, o.csv.size()) << "a row per interval, nothing else";
}

TEST(ResultFields, AnIntervalWithoutLiveLatencyIsNullInJsonAndEmptyInCsv) {
    stats::IntervalRow row;
    row.t1 = 1;
    row.tx = {1000, 64000, 1};
    const auto j = report::interval_json(row);
    EXPECT_TRUE(j["latency"].is_null());
    EXPECT_TRUE(j["requested_pps"].is_null()) << "unpaced";
    const auto cols = report::interval_fields().columns();
    const auto cells = report::interval_fields().cells(row);
    ASSERT_EQ(cells.size(), cols.size());
    for (size_t i = 0; i < cols.size(); ++i)
        if (cols[i].rfind("latency.", 0) == 0) {
            EXPECT_TRUE(cells[i].is_null()) << cols[i];
        }
    EXPECT_EQ(report::csv_line(cells).substr(0, 22), "0.0,1.0,1000,64000,1.0") << "numbers as in JSON";
}

TEST(ResultFields, TheJsonLinesTrialLineAgreesWithTheReport) {
    const auto& o = outputs();
    std::vector<J> trial_lines;
    for (const auto& l : o.lines)
        if (l["type"] == "trial") trial_lines.push_back(l);
    ASSERT_EQ(trial_lines.size(), 2u);
    for (unsigned t = 0; t < 2; ++t) {
        const auto& l = trial_lines[t];
        const auto& rep = o.report["trials"][t];
        EXPECT_EQ(l["trial"], t);
        EXPECT_EQ(l["verdict"], rep["verdict"]["result"]);
        EXPECT_EQ(l["tx_packets"], rep["totals"]["tx"]["packets"]);
        EXPECT_EQ(l["rx_distinct"], rep["totals"]["rx_classes"]["distinct"]);
        EXPECT_EQ(l["lost"], rep["totals"]["lost"]);
        EXPECT_EQ(l["offered_pps"], rep["totals"]["offered_pps"]);
        EXPECT_EQ(l["tx_seconds"], rep["totals"]["tx_seconds"]);
        EXPECT_EQ(rep["totals"]["tx"]["packets"], 20000u);
    }
    EXPECT_EQ(o.lines.back()["type"], "end");
    EXPECT_EQ(o.lines.back()["report"], o.report);
}

TEST(ResultFields, LatencyIsSpeltOneWayInEveryPlace) {
    const auto& o = outputs();
    const auto summary_keys = report::latency_fields().keys();
    const std::set<std::string> keys(summary_keys.begin(), summary_keys.end());
    for (const char* k : {"count", "min_ns", "mean_ns", "p50_ns", "p90_ns", "p99_ns", "p999_ns", "max_ns"})
        EXPECT_EQ(keys.count(k), 1u) << k;
    auto keys_of = [](const J& j) {
        std::set<std::string> s;
        for (const auto& [k, v] : j.items()) s.insert(k);
        return s;
    };
    auto trial = keys_of(o.report["latency"]);
    trial.erase("kind");
    trial.erase("buckets");
    EXPECT_EQ(trial, keys) << "the trial's latency";
    for (const auto& q : o.report["queues"])
        if (q["dir"] == "rx") {
            EXPECT_EQ(keys_of(q["latency"]), keys) << "a queue's latency";
        }
    for (const auto& [k, q] : report::latency_quantiles()) EXPECT_EQ(keys.count(k), 1u) << "quantile " << k;
    for (const auto& k : report::live_latency_fields().keys()) EXPECT_EQ(keys.count(k), 1u) << "interval " << k;
    EXPECT_THROW(report::latency_fields().only({"p50"}), std::logic_error) << "a selection by a wrong name fails";
}

TEST(ResultFields, TheTrialLatencyCarriesTheWholeHistogram) {
    const auto& o = outputs();
    const auto& L = o.report["latency"];
    ASSERT_TRUE(L.is_object());
    const auto& b = L["buckets"];
    ASSERT_FALSE(b.empty());
    uint64_t n = 0, prev_upper = 0;
    for (const auto& x : b) {
        const auto lo = x["lower_ns"].get<uint64_t>(), hi = x["upper_ns"].get<uint64_t>();
        EXPECT_GT(x["count"].get<uint64_t>(), 0u) << "non-empty buckets only";
        EXPECT_LT(lo, hi);
        EXPECT_GE(lo, prev_upper) << "lowest first, not overlapping";
        prev_upper = hi;
        n += x["count"].get<uint64_t>();
    }
    EXPECT_EQ(n, L["count"].get<uint64_t>()) << "every timed frame is in a bucket";
    EXPECT_LE(b.front()["lower_ns"].get<uint64_t>(), L["min_ns"].get<uint64_t>());
    EXPECT_GT(b.front()["upper_ns"].get<uint64_t>(), L["min_ns"].get<uint64_t>()) << "the minimum is in the first";
    EXPECT_LE(b.back()["lower_ns"].get<uint64_t>(), L["max_ns"].get<uint64_t>());
    EXPECT_GT(b.back()["upper_ns"].get<uint64_t>(), L["max_ns"].get<uint64_t>()) << "the maximum is in the last";
    // The median lies in the bucket where half the frames are counted.
    uint64_t seen = 0;
    for (const auto& x : b) {
        seen += x["count"].get<uint64_t>();
        if (2 * seen >= n) {
            const auto p50 = L["p50_ns"].get<uint64_t>();
            EXPECT_GE(p50, x["lower_ns"].get<uint64_t>());
            EXPECT_LT(p50, x["upper_ns"].get<uint64_t>());
            break;
        }
    }
}

TEST(ResultFields, HistogramBucketsAreExactBelow128NsAndCoverValuesBeyondTheRange) {
    stats::LatencyHistogram h;
    h.add(5, 3);
    h.add(1000);
    h.add(uint64_t(1) << 45);  // beyond 2^41 ns: counted in the last bucket
    const auto b = result::latency_buckets(h);
    ASSERT_EQ(b.size(), 3u);
    EXPECT_EQ(b[0].lower_ns, 5u);
    EXPECT_EQ(b[0].upper_ns, 6u);
    EXPECT_EQ(b[0].count, 3u);
    EXPECT_LE(b[1].lower_ns, 1000u);
    EXPECT_GT(b[1].upper_ns, 1000u);
    EXPECT_EQ(b[1].upper_ns - b[1].lower_ns, 4u) << "2^9 <= 1000 < 2^10: 512 / 128 ns wide";
    EXPECT_GT(b[2].upper_ns, uint64_t(1) << 45);
    EXPECT_TRUE(result::latency_buckets(stats::LatencyHistogram{}).empty());
}

TEST(ResultFields, PrometheusGaugesHoldTheIntervalsValues) {
    const auto& o = outputs();
    const auto& ivs = o.trials[1].intervals;
    const auto timed = std::find_if(ivs.begin(), ivs.end(), [](const stats::IntervalRow& r) { return r.lat_count > 0; });
    ASSERT_NE(timed, ivs.end());
    const auto& iv = *timed;
    const auto j = report::interval_json(iv);
    std::map<std::string, double> got;
    for (const auto& g : report::interval_gauges(iv)) {
        std::string key = g.name;
        for (const auto& [k, v] : g.labels) key += "," + k + "=" + v;
        EXPECT_EQ(got.count(key), 0u) << "one value per series: " << key;
        got[key] = g.value;
    }
    EXPECT_DOUBLE_EQ(got.at("linerate_rate_packets_per_second,direction=tx"), j["tx"]["pps"].get<double>());
    EXPECT_DOUBLE_EQ(got.at("linerate_rate_packets_per_second,direction=rx"), j["rx"]["pps"].get<double>());
    EXPECT_DOUBLE_EQ(got.at("linerate_rate_bits_per_second,direction=rx,layer=l1"), j["rx"]["l1_bps"].get<double>());
    EXPECT_DOUBLE_EQ(got.at("linerate_rate_bits_per_second,direction=tx,layer=l2"), j["tx"]["l2_bps"].get<double>());
    EXPECT_DOUBLE_EQ(got.at("linerate_sequence_gaps"), j["seq_gaps"].get<double>());
    EXPECT_DOUBLE_EQ(got.at("linerate_generator_limited"), j["generator_limited"].get<bool>() ? 1 : 0);
    const std::map<std::string, std::string> quantile = {
        {"min_ns", "0"}, {"p50_ns", "0.5"}, {"p99_ns", "0.99"}, {"max_ns", "1"}};
    for (const auto& [k, q] : quantile)
        EXPECT_DOUBLE_EQ(got.at("linerate_latency_seconds,quantile=" + q), j["latency"][k].get<double>() * 1e-9) << k;
    EXPECT_EQ(got.size(), 6u + 2u + 4u) << "rates, gaps, generator-limited, four quantiles";
    // The receive classes by the report's names.
    const auto& rxq = o.trials[1].queues.back();
    ASSERT_EQ(rxq.id.dir, stats::Dir::rx);
    const auto counts = report::rx_class_counts(rxq.final);
    const auto& rep = o.report["queues"].back();
    ASSERT_EQ(counts.size(), report::rx_class_fields().keys().size());
    for (const auto& [cls, v] : counts) EXPECT_EQ(rep[cls], v) << cls;
}

TEST(ResultFields, QueuesCarryTheTotalsReceiveClassesAndRxOnlyFieldsOnlyOnRx) {
    const auto& o = outputs();
    for (const auto& q : o.report["queues"]) {
        for (const auto& k : report::rx_class_fields().keys()) EXPECT_EQ(q.contains(k), q["dir"] == "rx") << k;
        EXPECT_EQ(q.contains("latency"), q["dir"] == "rx");
    }
    for (const auto& [k, v] : o.report["totals"]["rx_classes"].items())
        EXPECT_EQ(o.report["queues"].back()[k], v) << "one receiving queue: the totals are its own";
}

TEST(ResultFields, TheTrialsCsvHasTheTrialLogFieldsAsTheReportsTrials) {
    result::ProcedureResult r;
    result::TrialLog t;
    t.index = 3;
    t.plan.frame_size = 512;
    t.plan.load_pps = 1000;
    t.plan.why = "bisect, between 1 and 2";
    t.sent = 100;
    t.received = 99;
    t.loss_ratio = 0.01;
    t.valid = false;
    t.invalid_reason = "the generator fell short";
    r.trials = {t};
    const auto j = report::procedure_report(loop_spec({{"tx", {"a"}}, {"rx", {"b"}}}), {}, r);
    ASSERT_EQ(j["trials"].size(), 1u);
    const auto csv = report::csv_table(report::trial_log_fields(), r.trials);
    const auto header = csv.substr(0, csv.find('\n'));
    const auto cols = report::trial_log_fields().columns();
    EXPECT_EQ(split(header), cols);
    std::set<std::string> keys;
    for (const auto& [k, v] : j["trials"][0].items()) keys.insert(k);
    EXPECT_EQ(keys, std::set<std::string>(cols.begin(), cols.end())) << "the report's trial keys are the columns";
    EXPECT_NE(csv.find(",\"bisect, between 1 and 2\","), std::string::npos) << csv;
    EXPECT_NE(csv.find(",false,false,the generator fell short\n"), std::string::npos) << csv;
}

// Fields::value takes a getter that captures nothing (stored as a function pointer) or one that
// does (stored as a closure): both write the same JSON value and the same one CSV cell, and a
// condition that does not hold leaves the key out and the cell empty.
TEST(ResultFields, ValueFieldsWithAndWithoutStateWriteTheSameJsonAndCells) {
    struct Item {
        int n;
        bool shown;
    };
    using F = report::Fields<Item>;
    const int offset = 1000;
    const F fields{
        F::value("plain", [](const Item& i) { return i.n; }),
        F::value("offset", [offset](const Item& i) { return i.n + offset; }),
        F::value("label", [](const Item& i) { return "n" + std::to_string(i.n); }),
        F::value("shown_only", [](const Item& i) { return i.n * 2; }, [](const Item& i) { return i.shown; }),
    };
    EXPECT_EQ(fields.columns(), (std::vector<std::string>{"plain", "offset", "label", "shown_only"}));

    const Item a{7, true};
    EXPECT_EQ(fields.json(a), (J{{"plain", 7}, {"offset", 1007}, {"label", "n7"}, {"shown_only", 14}}));
    EXPECT_EQ(fields.cells(a), (std::vector<J>{7, 1007, "n7", 14}));

    const Item b{3, false};
    EXPECT_EQ(fields.json(b), (J{{"plain", 3}, {"offset", 1003}, {"label", "n3"}}));
    EXPECT_EQ(fields.cells(b), (std::vector<J>{3, 1003, "n3", nullptr}));
    EXPECT_EQ(report::csv_table(fields, std::vector<Item>{a, b}), "plain,offset,label,shown_only\n7,1007,n7,14\n3,1003,n3,\n");
}
