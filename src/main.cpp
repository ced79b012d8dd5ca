// linerate: subcommand dispatch only.
#include <CLI/CLI.hpp>
#include <csignal>
#include <cstdio>
#include <fmt/format.h>

#include "cli/run_cmd.h"
#ifdef LINERATE_HAVE_AFXDP
#include "cli/probe_cmd.h"
#include "cli/reflect_cmd.h"
#endif
#include "engine/control.h"
#include "engine/run.h"
#include "util/error.h"

namespace {

void on_signal(int) { lr::engine::request_stop(); }

}  // namespace

int main(int argc, char** argv) {
    CLI::App app{"linerate: line-rate traffic generator and counter (DPDK and AF_XDP)", "linerate"};
    app.require_subcommand(1);
    app.set_version_flag("--version", LINERATE_VERSION);
    lr::cli::RunOptions run_opts;
    auto* run = lr::cli::add_run_command(app, run_opts);
    auto* version = app.add_subcommand("version", "Print the version");
#ifdef LINERATE_HAVE_AFXDP
    lr::cli::ProbeOptions probe_opts;
    auto* probe = lr::cli::add_probe_command(app, probe_opts);
    lr::cli::ReflectOptions reflect_opts;
    auto* reflect = lr::cli::add_reflect_command(app, reflect_opts);
#endif

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
#ifdef LINERATE_HAVE_AFXDP
        if (probe->parsed()) return lr::cli::run_probe(probe_opts);
        if (reflect->parsed()) {
            std::signal(SIGINT, on_signal);
            std::signal(SIGTERM, on_signal);
            return lr::cli::run_reflect(reflect_opts);
        }
#endif
        if (run->parsed()) {
            const auto spec = lr::cli::to_spec(run_opts);
            std::signal(SIGINT, on_signal);
            std::signal(SIGTERM, on_signal);
            return lr::engine::run(spec);
        }
    } catch (const lr::Error& e) {
        fmt::print(stderr, "linerate: error: {}\n", e.what());
        return static_cast<int>(e.code());
    } catch (const std::exception& e) {
        fmt::print(stderr, "linerate: internal error: {}\n", e.what());
        return static_cast<int>(lr::ExitCode::invalid_run);
    }
    return static_cast<int>(lr::ExitCode::usage);
}
