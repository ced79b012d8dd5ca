#include "cli/execute.h"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <linux/capability.h>
#include <memory>

#include "engine/interrupt.h"
#include "engine/session.h"
#include "util/privileges.h"
#include "procedures/procedures.h"
#include "report/checks_report.h"
#include "report/console.h"
#include "report/csv.h"
#include "report/json_report.h"
#include "report/live_table.h"
#include "report/metrics.h"
#include "report/output_files.h"
#include "report/pcap_sink.h"
#include "report/procedure_report.h"
#include "report/result_fields.h"
#include "report/stream_sinks.h"
#include "result/checks.h"
#include "util/error.h"

namespace lr::cli {
namespace {

int code_of(result::Verdict v) {
    switch (v) {
        case result::Verdict::pass: return static_cast<int>(ExitCode::ok);
        case result::Verdict::fail: return static_cast<int>(ExitCode::threshold_failed);
        case result::Verdict::invalid: return static_cast<int>(ExitCode::invalid_run);
    }
    return static_cast<int>(ExitCode::invalid_run);
}

report::JunitSuite suite_of(const spec::RunSpec& spec, const ExecuteInfo& info, double seconds) {
    report::JunitSuite s;
    s.name = info.suite.empty() ? fmt::format("linerate {}", spec::to_string(spec.procedure.kind)) : info.suite;
    s.classname = fmt::format("linerate.{}", spec::to_string(spec.procedure.kind));
    s.seconds = seconds;
    s.properties = info.properties;
    s.properties.emplace_back("procedure", std::string(spec::to_string(spec.procedure.kind)));
    s.properties.emplace_back("backend", std::string(spec::to_string(spec.backend)));
    return s;
}

// The outputs that follow the run as it goes (--json-stream, --csv, --metrics), and the
// console's stream: stderr when the JSON lines take stdout.
struct Outputs {
    std::FILE* out = stdout;
    std::unique_ptr<report::JsonLinesSink> lines;
    std::unique_ptr<report::CsvSink> csv;
    std::unique_ptr<report::MetricsSink> metrics;
    std::unique_ptr<report::PcapSink> capture;
    std::unique_ptr<report::LiveTableSink> table;  // on a terminal: the live view replaces the lines
    result::SinkList list;

    explicit Outputs(const spec::RunSpec& spec) {
        if (!spec.json_stream_path.empty()) {
            lines = std::make_unique<report::JsonLinesSink>(spec.json_stream_path);
            list.add(*lines);
            if (spec.json_stream_path == "-") out = stderr;
        }
        if (!spec.csv_path.empty()) {
            csv = std::make_unique<report::CsvSink>(spec.csv_path);
            list.add(*csv);
        }
        if (!spec.capture_path.empty()) {
            capture = std::make_unique<report::PcapSink>(spec.capture_path, spec.capture_count);
            list.add(*capture);
        }
        if (!spec.quiet && report::is_terminal(out)) {
            table = std::make_unique<report::LiveTableSink>(out, report::colour_wanted(out));
            list.add(*table);
        }
    }
    // The metrics server's threads start once the capabilities are dropped: they serve the
    // network and must hold none.
    void start_metrics(const spec::RunSpec& spec) {
        if (spec.metrics_listen.empty()) return;
        metrics = std::make_unique<report::MetricsSink>(spec.metrics_listen);
        list.add(*metrics);
    }
    void end(const nlohmann::json& summary) {
        if (lines) lines->end(summary);
    }

    // A file written whole at the end: a failure is kept and the other outputs are still written.
    template <class F>
    void write_whole(F&& write) {
        try {
            write();
        } catch (const Error& e) {
            errors.push_back(e.what());
        }
    }
    // Every output's failure, each named once with its reason; exit code 3 when there was one
    // (docs/usage.md, "Exit codes"), else the run's.
    int finish(int rc) {
        if (csv) csv->close();
        for (const auto* e : {lines ? &lines->error() : nullptr, csv ? &csv->error() : nullptr,
                              capture ? &capture->error() : nullptr})
            if (e && !e->empty()) errors.push_back(*e);
        for (const auto& e : errors) fmt::print(stderr, "linerate: error: {}\n", e);
        return errors.empty() ? rc : static_cast<int>(ExitCode::environment);
    }
    std::vector<std::string> errors;
};

int execute_run(engine::Session& session, const spec::RunSpec& spec, const ExecuteInfo& info, Outputs& o) {
    report::ConsoleSink console(o.out, spec.quiet || o.table != nullptr);
    report::TrialCollector trials;
    result::SinkList sinks;
    sinks.add(console);
    sinks.add(trials);
    sinks.add(o.list);
    for (unsigned i = 0; i < spec.trials && !session.interrupted(); ++i) session.run_trial(spec.trial(), sinks, spec.trials);
    const auto& all = trials.trials();
    std::vector<result::Check> checks;
    double seconds = 0;
    std::string invalid;
    for (const auto& t : all) {
        const auto label = all.size() > 1 ? fmt::format("trial {}", t.index + 1) : std::string();
        auto c = result::trial_checks(spec.thresholds, t, session.line_rate_bps(), label);
        checks.insert(checks.end(), c.begin(), c.end());
        seconds += t.total_seconds;
        if (t.verdict == result::Verdict::invalid && invalid.empty()) invalid = t.verdict_reason;
    }
    const int rc = exit_code(all);
    if (spec.thresholds.any() || info.print_checks) {
        fmt::print(o.out, "\n");
        report::print_checks(o.out, checks, rc == 4 ? result::Verdict::invalid : rc == 1 ? result::Verdict::fail
                                                                                        : result::Verdict::pass,
                             invalid);
    }
    auto j = report::make_report(spec, session.environment(), all);
    j["checks"] = report::checks_json(checks);
    if (!spec.json_path.empty()) o.write_whole([&] { report::write_json(spec.json_path, j); });
    o.end(j);
    if (!spec.junit_path.empty()) {
        auto s = suite_of(spec, info, seconds);
        s.checks = checks;
        s.invalid = !invalid.empty();
        s.invalid_reason = invalid;
        o.write_whole([&] { report::write_junit(spec.junit_path, s); });
    }
    return o.finish(rc);
}

int execute_procedure(engine::Session& session, const spec::RunSpec& spec, const ExecuteInfo& info, Outputs& o) {
    const bool searches = spec.procedure.kind == spec::Procedure::throughput ||
                          (spec.procedure.kind == spec::Procedure::latency && !spec.rate.limited());
    fmt::print(o.out, "linerate {}: {}{}\n", spec::to_string(spec.procedure.kind),
               spec.single_fixed_stream() ? fmt::format("sizes {} B", fmt::join(spec.procedure.sizes, " "))
                                          : fmt::format("{} (mean {:.2f} B)", session.size_label(0),
                                                        session.mean_frame_size(0)),
               searches ? fmt::format(", {}", spec.procedure.search == "mlr" ? "MLRsearch" : "binary search") : "");
    std::fflush(o.out);
    const auto r = procedures::run_procedure(session, spec.quiet ? nullptr : o.out, &o.list);
    report::print_procedure(o.out, r);
    const auto j = report::procedure_report(spec, session.environment(), r);
    if (!spec.json_path.empty()) o.write_whole([&] { report::write_json(spec.json_path, j); });
    if (!spec.csv_path.empty()) {
        o.write_whole([&] {
            report::write_file(report::csv_companion(spec.csv_path, "trials"),
                               report::csv_table(report::trial_log_fields(), r.trials), "CSV table");
        });
        o.write_whole([&] {
            report::write_file(report::csv_companion(spec.csv_path, "sizes"), report::table_csv(j["rows"]),
                               "CSV table");
        });
    }
    o.end(j);
    if (!spec.junit_path.empty()) {
        auto s = suite_of(spec, info, r.seconds);
        s.checks = r.checks;
        s.invalid = r.verdict() == result::Verdict::invalid;
        s.invalid_reason = r.invalid_reason;
        o.write_whole([&] { report::write_junit(spec.junit_path, s); });
    }
    return o.finish(code_of(r.verdict()));
}

}  // namespace

int exit_code(const std::vector<result::TrialResult>& trials) {
    ExitCode worst = ExitCode::ok;
    for (const auto& t : trials) {
        if (t.verdict == result::Verdict::invalid) return static_cast<int>(ExitCode::invalid_run);
        if (t.verdict == result::Verdict::fail) worst = ExitCode::threshold_failed;
    }
    return static_cast<int>(worst);
}

int execute(const spec::RunSpec& spec, const ExecuteInfo& info) {
    // Every output is checked before the ports open: a bad path costs nothing, not a whole run.
    report::check_outputs(report::output_paths(spec));
    engine::install_interrupt_handlers();
    Outputs o(spec);  // output files open before the ports (and before the capabilities go)
    engine::Session session(backend::make_backend(spec.backend), spec);
    // Set up: from here on the process holds only what the run itself needs. Each trial's paced
    // senders raise their own priority when they start (--sender-nice): CAP_SYS_NICE stays if held.
    auto keep = session.capabilities_after_setup();
    if (spec.tx_enabled() && spec.sender_nice && util::has_capability(CAP_SYS_NICE)) keep.push_back(CAP_SYS_NICE);
    util::drop_all_but(keep);
    o.start_metrics(spec);  // a port in use fails here, before anything is sent
    if (spec.tx_enabled() && spec.signed_frames())
        fmt::print(o.out, "linerate: signing frames ({}) with run nonce {}; receive-only runs need --nonce {}\n",
                   packet::sig_level_str(spec.sig_level()), spec.nonce, spec.nonce);
    if (o.metrics) fmt::print(o.out, "linerate: Prometheus metrics at http://{}/metrics\n", o.metrics->address());
    // Which TX engine each sending port got, and why (afxdp --tx-engine auto).
    const auto env = session.environment();
    if (env.contains("ports"))
        for (const auto& p : env["ports"])
            if (p.contains("tx_engine_why") && p["tx_engine_why"].is_string())
                fmt::print(o.out, "linerate: {} sends with {} ({})\n", p["name"].get<std::string>(),
                           p["tx_engine"].get<std::string>(), p["tx_engine_why"].get<std::string>());
    if (spec.procedure.kind == spec::Procedure::run) return execute_run(session, spec, info, o);
    return execute_procedure(session, spec, info, o);
}

}  // namespace lr::cli
