#include "cli/procedure_cmd.h"

#include <fmt/format.h>

#include "cli/execute.h"
#include "report/checks_report.h"
#include "util/error.h"
#include "spec/options.h"
#include "spec/profile.h"

namespace lr::cli {
namespace {

struct About {
    const char* summary;
    const char* example;
};

About about(spec::Procedure k) {
    switch (k) {
        case spec::Procedure::sweep:
            return {"One trial per frame size at the given rate: a row per size (sent, received, loss, latency)",
                    "linerate sweep --backend afxdp --tx veth0 --rx veth1 --sizes 64:1518:*2 --rate 100k "
                    "--duration 2s"};
        case spec::Procedure::throughput:
            return {"RFC 2544 throughput: the highest load whose loss ratio meets each goal (NDR, PDR), by "
                    "MLRsearch (RFC 9971) or binary search",
                    "linerate throughput --backend afxdp --tx veth0 --rx veth1 --preset csit --sizes 64,1518"};
        case spec::Procedure::latency:
            return {"RFC 2544 latency: repeated trials at a share of the throughput (found first) or at --rate",
                    "linerate latency --backend afxdp --tx veth0 --rx veth1 --rate 100k --repeat 20 "
                    "--trial-duration 10s"};
        case spec::Procedure::frame_loss:
            return {"RFC 2544 frame loss rate: trials from 100 % of the highest load down in --step steps until two "
                    "in a row lose nothing",
                    "linerate frame-loss --backend afxdp --tx veth0 --rx veth1 --max-rate 1M --step 10"};
        case spec::Procedure::back_to_back:
            return {"RFC 2544 back-to-back: the longest burst at the highest load that arrives whole, repeated",
                    "linerate back-to-back --backend afxdp --tx veth0 --rx veth1 --max-rate 1M --repeat 50"};
        case spec::Procedure::run: break;
    }
    return {"", ""};
}

}  // namespace

void ProcedureCommand::add_to(CLI::App& app) {
    const auto a = about(kind_);
    app_ = app.add_subcommand(std::string(spec::to_string(kind_)), a.summary);
    app_->footer(fmt::format(R"(Every trial starts from drained, idle queues and drains before it is counted. A trial is
valid only when the generator offered its load within 0.1 %, did not stretch the trial by more
than 1 % and dropped nothing itself; invalid trials are repeated or end the procedure.
Every trial is listed (load, duration, sent, received, loss, why), in the JSON report too.

Example:
  {}

Exit codes: 0 pass, 1 threshold failed, 2 usage error, 3 environment error, 4 invalid run.)",
                             a.example));
    opts_.bind(*app_, spec::Command::procedure);
}

int ProcedureCommand::run() { return execute(spec::build_run_spec(opts_.given(), kind_), {}); }

void CheckCommand::add_to(CLI::App& app) {
    app_ = app.add_subcommand("check", "Run a profile file (config/*.toml) and judge it: PASS/FAIL per threshold");
    app_->add_option("profile", profile_, "The profile (TOML): docs/profiles.md")->required();
    app_->footer(R"(Options given here override the profile's (same names: a profile key is an option name).

Example:
  linerate check config/testbed-acceptance.toml --junit results.xml

Exit codes: 0 every check passed, 1 a threshold failed, 2 usage or profile error,
3 environment error, 4 invalid run.)");
    opts_.bind(*app_, unsigned(spec::Command::run) | unsigned(spec::Command::procedure));
}

int CheckCommand::run() {
    const auto profile = spec::load_profile(profile_);
    auto spec = spec::build_profile_spec(profile, opts_.given());
    // A profile judges its procedure: an invalid trial fails it unless the profile allows some.
    if (!spec.thresholds.max_invalid_trials) spec.thresholds.max_invalid_trials = 0;
    fmt::print("linerate check {}: {}{}\n", profile.path, profile.name,
               profile.description.empty() ? "" : " - " + profile.description);
    ExecuteInfo info;
    info.suite = profile.name;
    info.properties = {{"profile", profile.path}};
    info.print_checks = true;
    try {
        return execute(spec, info);
    } catch (const Error& e) {
        // A CI server still gets its JUnit file: one error testcase with the reason (unless the
        // JUnit file itself is what cannot be written).
        if (!spec.junit_path.empty()) try {
            report::JunitSuite s;
            s.name = profile.name;
            s.classname = fmt::format("linerate.{}", spec::to_string(spec.procedure.kind));
            s.properties = info.properties;
            s.invalid = true;
            s.invalid_reason = e.what();
            s.error_case = "setup";
            report::write_junit(spec.junit_path, s);
        } catch (const Error&) {
        }
        throw;
    }
}

}  // namespace lr::cli
