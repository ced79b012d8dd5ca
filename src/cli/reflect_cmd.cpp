#include "cli/reflect_cmd.h"

#include <chrono>
#include <fmt/format.h>
#include <fstream>
#include <nlohmann/json.hpp>
#include <thread>

#include "backend/afxdp/netdev.h"
#include "backend/afxdp/xdp_reflect.h"
#include "cli/run_cmd.h"
#include "engine/control.h"
#include "engine/run.h"
#include "spec/parse.h"
#include "util/error.h"

namespace lr::cli {

CLI::App* add_reflect_command(CLI::App& app, ReflectOptions& o) {
    auto* r = app.add_subcommand("reflect", "Reflect linerate test frames back to the sender");
    r->footer(R"(Sends every linerate test frame (UDP/TCP carrying the signature) back where it came from with
MAC, IP addresses and ports swapped, for --duration or until SIGINT. The sender, with the same
port in --tx and --rx, reports round-trip latency, and with --outstanding the transaction rate.
  --backend xdp    (default) linerate's XDP program does it in the driver (XDP_TX), attached
                   with a bpf_link; other traffic reaches the kernel. Without linerate running:
                   ip link set dev PORT xdp obj build/bpf/xdp_reflect.bpf.o sec xdp
  --backend afxdp  in user space through one AF_XDP socket per queue
  --backend dpdk   in user space on any DPDK port (EAL arguments after --))");
    r->add_option("--backend", o.backend, "xdp, afxdp or dpdk")->capture_default_str();
    r->add_option("--port", o.port, "Interface (xdp, afxdp) or DPDK port to reflect on")->required()->type_name("PORT");
    r->add_option("--queues", o.queues, "afxdp/dpdk: queues to serve, one worker each")->capture_default_str();
    r->add_option("--xsk-mode", o.xsk_mode, "afxdp: copy, zero-copy or auto")->capture_default_str();
    r->add_option("--cpus", o.cpus, "afxdp/dpdk: worker CPUs")->type_name("LIST");
    r->add_option("eal", o.eal, "dpdk: EAL arguments, after --");
    r->add_option("--xdp-mode", o.xdp_mode, "auto, native or skb")->capture_default_str();
    r->add_option("--proto", o.proto, "udp, tcp or any")->capture_default_str();
    r->add_option("--dst-ports", o.dst_ports, "Destination port or range LO-HI of test frames")->capture_default_str();
    r->add_option("--duration", o.duration, "How long to reflect")->capture_default_str();
    r->add_option("--interval", o.interval, "Report interval")->capture_default_str();
    r->add_option("--json", o.json, "Write the counters as JSON to FILE")->type_name("FILE");
    r->add_flag("-q,--quiet", o.quiet, "No live lines");
    return r;
}

int run_reflect(const ReflectOptions& o) {
    if (o.backend == "afxdp" || o.backend == "dpdk") {
        // User space: the run engine with the reflect role (one worker per queue receives and
        // sends), so the report, watchdog and cleanup are those of `linerate run`.
        RunOptions ro;
        ro.backend = o.backend;
        ro.tx = ro.rx = {o.port + ",queues=" + o.queues};
        ro.eal = o.eal;
        ro.xdp_mode = o.xdp_mode;
        ro.xsk_mode = o.xsk_mode;
        ro.cpus = o.cpus;
        ro.duration = o.duration;
        ro.interval = o.interval;
        ro.json = o.json;
        ro.quiet = o.quiet;
        ro.no_signature = true;  // nothing is sent of our own
        ro.nonce = "0";
        ro.force = true;         // addresses are the sender's, swapped
        const auto dash = o.dst_ports.find('-');
        ro.dst_port = o.dst_ports.substr(0, dash);
        if (dash != std::string::npos) {  // the receive program matches the whole range
            const auto lo = spec::parse_uint(o.dst_ports.substr(0, dash), "--dst-ports", 1, 65535);
            const auto hi = spec::parse_uint(o.dst_ports.substr(dash + 1), "--dst-ports", lo, 65535);
            ro.flows = std::to_string(hi - lo + 1);
            ro.vary = "dst-port";
        }
        if (o.proto == "tcp") ro.proto = "tcp";
        spec::RunSpec s = to_spec(ro);
        s.reflect = true;
        s.validate();
        return engine::run(s);
    }
    if (o.backend != "xdp")
        throw UsageError(fmt::format("invalid --backend \"{}\": expected xdp, afxdp or dpdk", o.backend));
    afxdp::RxMatch m;
    if (o.proto == "udp") m.tcp = false;
    else if (o.proto == "tcp") m.udp = false;
    else if (o.proto != "any") throw UsageError(fmt::format("invalid --proto \"{}\": expected udp, tcp or any", o.proto));
    const auto dash = o.dst_ports.find('-');
    m.dst_port_lo = static_cast<uint16_t>(spec::parse_uint(o.dst_ports.substr(0, dash), "--dst-ports", 1, 65535));
    m.dst_port_hi = dash == std::string::npos
                        ? m.dst_port_lo
                        : static_cast<uint16_t>(spec::parse_uint(o.dst_ports.substr(dash + 1), "--dst-ports", 1, 65535));
    if (m.dst_port_hi < m.dst_port_lo) throw UsageError("--dst-ports: the range ends before it starts");
    const double duration = spec::parse_duration(o.duration, "--duration");
    const double interval = spec::parse_duration(o.interval, "--interval");
    const auto nd = afxdp::netdev_info(o.port);
    if (!nd.up) throw EnvError(fmt::format("interface {} is down", nd.name));

    afxdp::XdpReflector refl(m, nd.name, nd.ifindex, afxdp::parse_xdp_mode(o.xdp_mode));
    fmt::print("linerate reflect: {} ({}), XDP {} mode, program id {}, test frames to ports {}-{}\n", nd.name,
               nd.driver, afxdp::xdp_mode_str(refl.attached_mode()), refl.prog_id(), m.dst_port_lo, m.dst_port_hi);
    using Clock = std::chrono::steady_clock;
    const auto t0 = Clock::now();
    auto last_t = t0;
    lr_xdp_qstats last{};
    const unsigned queues = std::max(1u, nd.rx_queues);
    for (;;) {
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
        const auto now = Clock::now();
        const double t = std::chrono::duration<double>(now - t0).count();
        const bool done = t >= duration || engine::stop_requested();
        if (std::chrono::duration<double>(now - last_t).count() >= interval || done) {
            const auto s = refl.stats(queues);
            const double dt = std::chrono::duration<double>(now - last_t).count();
            if (!o.quiet)
                fmt::print("{:>7.2f}s  reflected {:>10.3f} Mpps  passed {:>8}\n", t,
                           (s.redirected - last.redirected) / dt / 1e6, s.passed - last.passed);
            last = s;
            last_t = now;
        }
        if (done) break;
    }
    const auto s = refl.stats(queues);
    const double secs = std::chrono::duration<double>(Clock::now() - t0).count();
    fmt::print("Reflected {} frames in {:.3f}s; passed {} other frames to the kernel\n", s.redirected, secs, s.passed);
    if (!o.json.empty()) {
        nlohmann::json j = {{"tool", "linerate reflect"},
                            {"port", nd.name},
                            {"driver", nd.driver},
                            {"xdp_mode", afxdp::xdp_mode_str(refl.attached_mode())},
                            {"seconds", secs},
                            {"received", s.received},
                            {"reflected", s.redirected},
                            {"passed", s.passed}};
        std::ofstream f(o.json);
        f << j.dump(2) << '\n';
        if (!f) throw EnvError("couldn't write " + o.json);
    }
    return 0;
}

}  // namespace lr::cli
