#include "cli/execute.h"

#include <fmt/format.h>

#include "engine/interrupt.h"
#include "engine/session.h"
#include "procedures/procedures.h"
#include "report/checks_report.h"
#include "report/console.h"
#include "report/json_report.h"
#include "report/procedure_report.h"
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

int execute_run(engine::Session& session, const spec::RunSpec& spec, const ExecuteInfo& info) {
    report::ConsoleSink console(stdout, spec.quiet);
    report::TrialCollector trials;
    result::SinkList sinks;
    sinks.add(console);
    sinks.add(trials);
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
        fmt::print("\n");
        report::print_checks(stdout, checks, rc == 4 ? result::Verdict::invalid : rc == 1 ? result::Verdict::fail
                                                                                          : result::Verdict::pass,
                             invalid);
    }
    if (!spec.json_path.empty()) {
        auto j = report::make_report(spec, session.environment(), all);
        j["checks"] = report::checks_json(checks);
        report::write_json(spec.json_path, j);
    }
    if (!spec.junit_path.empty()) {
        auto s = suite_of(spec, info, seconds);
        s.checks = checks;
        s.invalid = !invalid.empty();
        s.invalid_reason = invalid;
        report::write_junit(spec.junit_path, s);
    }
    return rc;
}

int execute_procedure(engine::Session& session, const spec::RunSpec& spec, const ExecuteInfo& info) {
    const bool searches = spec.procedure.kind == spec::Procedure::throughput ||
                          (spec.procedure.kind == spec::Procedure::latency && !spec.rate.limited());
    fmt::print("linerate {}: sizes {} B{}\n", spec::to_string(spec.procedure.kind), fmt::join(spec.procedure.sizes, " "),
               searches ? fmt::format(", {}", spec.procedure.search == "mlr" ? "MLRsearch" : "binary search") : "");
    std::fflush(stdout);
    const auto r = procedures::run_procedure(session, spec.quiet ? nullptr : stdout);
    report::print_procedure(stdout, r);
    if (!spec.json_path.empty()) report::write_json(spec.json_path, report::procedure_report(spec, session.environment(), r));
    if (!spec.junit_path.empty()) {
        auto s = suite_of(spec, info, r.seconds);
        s.checks = r.checks;
        s.invalid = r.verdict() == result::Verdict::invalid;
        s.invalid_reason = r.invalid_reason;
        report::write_junit(spec.junit_path, s);
    }
    return code_of(r.verdict());
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
    engine::install_interrupt_handlers();
    engine::Session session(backend::make_backend(spec.backend), spec);
    if (spec.tx_enabled() && spec.signed_frames())
        fmt::print("linerate: signing frames ({}) with run nonce {}; receive-only runs need --nonce {}\n",
                   packet::sig_level_str(spec.sig_level()), spec.nonce, spec.nonce);
    // Which TX engine each sending port got, and why (afxdp --tx-engine auto).
    const auto env = session.environment();
    if (env.contains("ports"))
        for (const auto& p : env["ports"])
            if (p.contains("tx_engine_why") && p["tx_engine_why"].is_string())
                fmt::print("linerate: {} sends with {} ({})\n", p["name"].get<std::string>(),
                           p["tx_engine"].get<std::string>(), p["tx_engine_why"].get<std::string>());
    if (spec.procedure.kind == spec::Procedure::run) return execute_run(session, spec, info);
    return execute_procedure(session, spec, info);
}

}  // namespace lr::cli
