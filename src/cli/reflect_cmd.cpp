#include "cli/reflect_cmd.h"

#include <fmt/format.h>
#include <fstream>
#include <nlohmann/json.hpp>

#include "cli/execute.h"
#include "cli/run_cmd.h"
#include "engine/interrupt.h"
#include "engine/session.h"
#include "report/console.h"
#include "report/json_report.h"
#include "util/error.h"
#ifdef LINERATE_HAVE_AFXDP
#include "backend/afxdp/reflect_in_driver.h"
#endif

namespace lr::cli {

void ReflectCommand::add_to(CLI::App& app) {
    app_ = app.add_subcommand("reflect", "Reflect linerate test frames back to the sender");
    app_->footer(R"(Sends every linerate test frame (UDP/TCP carrying the signature) back where it came from with
MAC, IP addresses and ports swapped, for --duration or until SIGINT. The sender, with the same
port in --tx and --rx, reports round-trip latency, and with --outstanding the transaction rate.
  --backend xdp    (default) linerate's XDP program does it in the driver (XDP_TX), attached
                   with a bpf_link; other traffic reaches the kernel. Without linerate running:
                   ip link set dev PORT xdp obj build/bpf/xdp_reflect.bpf.o sec xdp
  --backend afxdp  in user space through one AF_XDP socket per queue
  --backend dpdk   in user space on any DPDK port (EAL arguments after --))");
    opts_.bind(*app_, spec::Command::reflect);
}

namespace {

int reflect_user_space(const spec::RunSpec& spec) {
    engine::install_interrupt_handlers();
    engine::Session session(backend::make_backend(spec.backend), spec);
    report::ConsoleSink console(stdout, spec.quiet);
    report::TrialCollector trials;
    result::SinkList sinks;
    sinks.add(console);
    sinks.add(trials);
    session.run_trial(spec.trial(), sinks, 1);
    if (!spec.json_path.empty())
        report::write_json(spec.json_path, report::make_report(spec, session.environment(), trials.trials()));
    return exit_code(trials.trials());
}

#ifdef LINERATE_HAVE_AFXDP
int reflect_in_driver(const spec::Draft& d) {
    afxdp::DriverReflectSpec s;
    s.port = d.port;
    s.mode = d.spec.afxdp.xdp_mode;
    s.duration_s = d.duration_given ? d.spec.duration_s : spec::kReflectDurationS;
    s.interval_s = d.spec.interval_s;
    if (!d.any_proto) {
        s.match.udp = d.spec.frame.l4 == packet::L4::udp;
        s.match.tcp = d.spec.frame.l4 == packet::L4::tcp;
    }
    s.match.dst_port_lo = d.spec.frame.dst_port;
    s.match.dst_port_hi = std::max(d.dst_port_hi, d.spec.frame.dst_port);
    engine::install_interrupt_handlers();
    afxdp::DriverReflectInfo info;
    afxdp::DriverReflectCounts prev;
    const auto fin = afxdp::reflect_in_driver(
        s, [] { return engine::interrupt_requested(); },
        [&](const afxdp::DriverReflectInfo& i) {
            info = i;
            fmt::print("linerate reflect: {} ({}), XDP {} mode, program id {}, test frames to ports {}-{}\n", i.port,
                       i.driver, i.xdp_mode, i.prog_id, s.match.dst_port_lo, s.match.dst_port_hi);
            std::fflush(stdout);
        },
        [&](const afxdp::DriverReflectCounts& c) {
            const double dt = c.t - prev.t;
            if (!d.spec.quiet && dt > 0)
                fmt::print("{:>7.2f}s  reflected {:>10.3f} Mpps  passed {:>8}\n", c.t,
                           (c.reflected - prev.reflected) / dt / 1e6, c.passed - prev.passed);
            std::fflush(stdout);
            prev = c;
        });
    fmt::print("Reflected {} frames in {:.3f}s; passed {} other frames to the kernel\n", fin.reflected, fin.t,
               fin.passed);
    if (!d.spec.json_path.empty()) {
        nlohmann::json j = {{"tool", "linerate reflect"}, {"port", info.port},       {"driver", info.driver},
                            {"xdp_mode", info.xdp_mode},  {"seconds", fin.t},        {"received", fin.received},
                            {"reflected", fin.reflected}, {"passed", fin.passed}};
        report::write_json(d.spec.json_path, j);
    }
    return 0;
}
#endif

}  // namespace

int ReflectCommand::run() {
    const auto d = spec::build_reflect_draft(opts_.given());
    if (!d.spec.json_path.empty()) report::check_outputs({{"--json", d.spec.json_path, true}});
    if (d.reflect_backend != spec::ReflectBackend::xdp) return reflect_user_space(d.spec);
#ifdef LINERATE_HAVE_AFXDP
    return reflect_in_driver(d);
#else
    throw UsageError("reflect --backend xdp needs linerate built with AF_XDP support");
#endif
}

}  // namespace lr::cli
