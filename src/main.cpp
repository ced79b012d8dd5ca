// linerate: subcommand dispatch only.
#include <CLI/CLI.hpp>
#include <cstdio>
#include <fmt/format.h>

#include "cli/connect_cmd.h"
#include "cli/impair_cmd.h"
#include "cli/procedure_cmd.h"
#include "cli/reflect_cmd.h"
#include "cli/report_cmd.h"
#include "cli/run_cmd.h"
#include "cli/serve_cmd.h"
#include "spec/options.h"
#include "util/cpus.h"
#include "util/error.h"
#ifdef LINERATE_HAVE_AFXDP
#include "cli/probe_cmd.h"
#endif

int main(int argc, char** argv) {
    lr::util::allowed_cpus();  // the process's CPUs, before any thread is restricted
    CLI::App app{"linerate: line-rate traffic generator and counter (DPDK and AF_XDP)", "linerate"};
    app.require_subcommand(1);
    app.set_version_flag("--version", LINERATE_VERSION);
    lr::cli::RunCommand run;
    run.add_to(app);
    std::vector<lr::cli::ProcedureCommand> procedures;
    for (auto k : {lr::spec::Procedure::sweep, lr::spec::Procedure::throughput, lr::spec::Procedure::latency,
                   lr::spec::Procedure::frame_loss, lr::spec::Procedure::back_to_back})
        procedures.emplace_back(k);
    for (auto& p : procedures) p.add_to(app);
    lr::cli::CheckCommand check;
    check.add_to(app);
    lr::cli::ReflectCommand reflect;
    reflect.add_to(app);
    lr::cli::ReportCommand report;
    report.add_to(app);
    lr::cli::ServeCommand serve;
    serve.add_to(app);
    lr::cli::ImpairCommand impair;
    impair.add_to(app);
    lr::cli::ConnectCommand connect;
    connect.add_to(app);
#ifdef LINERATE_HAVE_AFXDP
    lr::cli::ProbeCommand probe;
    probe.add_to(app);
#endif
    auto* version = app.add_subcommand("version", "Print the version");
    std::string options_of = "run";
    auto* options = app.add_subcommand("options", "Print the option reference of a command as Markdown (docs/usage.md)");
    options->add_option("command", options_of,
                        "run, reflect, procedures (the options only the procedures take), serve, impair, connect or "
                        "stream (the keys of --stream)")
        ->check(CLI::IsMember({"run", "reflect", "procedures", "serve", "impair", "connect", "stream"}));

    try {
        app.parse(argc, argv);
    } catch (const CLI::ParseError& e) {
        const int rc = app.exit(e);
        return rc == 0 ? 0 : static_cast<int>(lr::ExitCode::usage);
    }

    try {
        if (version->parsed()) {
            fmt::print("linerate {}\n", LINERATE_VERSION);
            return 0;
        }
        if (options->parsed() && options_of == "stream") {
            fmt::print("{}", lr::spec::stream_keys_markdown());
            return 0;
        }
        if (options->parsed()) {
            fmt::print("{}", lr::spec::options_markdown(options_of == "run"       ? lr::spec::Command::run
                                                        : options_of == "reflect" ? lr::spec::Command::reflect
                                                        : options_of == "serve"   ? lr::spec::Command::serve
                                                        : options_of == "impair"  ? lr::spec::Command::impair
                                                        : options_of == "connect" ? lr::spec::Command::connect
                                                                                  : lr::spec::Command::procedure));
            return 0;
        }
#ifdef LINERATE_HAVE_AFXDP
        if (probe.chosen()) return probe.run();
#endif
        if (reflect.chosen()) return reflect.run();
        if (report.chosen()) return report.run();
        if (serve.chosen()) return serve.run();
        if (impair.chosen()) return impair.run();
        if (connect.chosen()) return connect.run();
        if (run.chosen()) return run.run();
        if (check.chosen()) return check.run();
        for (auto& p : procedures)
            if (p.chosen()) return p.run();
    } catch (const lr::Error& e) {
        fmt::print(stderr, "linerate: error: {}\n", e.what());
        return static_cast<int>(e.code());
    } catch (const std::exception& e) {
        fmt::print(stderr, "linerate: internal error: {}\n", e.what());
        return static_cast<int>(lr::ExitCode::invalid_run);
    }
    return static_cast<int>(lr::ExitCode::usage);
}
