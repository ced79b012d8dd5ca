#include "cli/connect_cmd.h"

#include <fmt/format.h>

#include "cli/execute.h"
#include "spec/choices.h"
#include "spec/rate.h"

namespace lr::cli {

void ConnectCommand::add_to(CLI::App& app) {
    app_ = app.add_subcommand("connect", "TCP connection rate against a real listener: SYNs, SYN-ACKs, and each "
                                         "connection reset, closed or aborted");
    app_->footer(R"(Each queue sends SYNs to --dst-ip:--dst-port (a listening socket of a real TCP stack) from
source ports taken in turn, at --rate connections per second or as fast as --outstanding
handshakes in flight allow (--rate max, the default), and answers every SYN-ACK at once:
--close rst (ACK, then RST), fin (FIN-ACK, then the listener's FIN acknowledged) or abort
(RST: no connection opens). It reports connections per second and the handshake's latency
(SYN to SYN-ACK) per queue; every SYN ends answered, refused or timed out. --dst-mac must be
the listener's (or the next router's) MAC address; the listener's answers go to --src-ip,
which the port's own stack must answer ARP for.

Examples:
  connections per second to a web server's port 80 for 10 s, each reset after its handshake:
    linerate connect --backend afxdp --port veth0 --dst-ip 198.18.0.2 --dst-mac 0a:1b:2c:3d:4e:5f --dst-port 80
  10,000 connections at 2,000/s, each closed with FIN both ways:
    linerate connect --backend afxdp --port veth0 --dst-ip 198.18.0.2 --dst-mac 0a:1b:2c:3d:4e:5f --dst-port 80 \
      --rate 2k --count 10000 --close fin

Exit codes: 0 ran, 2 usage error, 3 environment error, 4 invalid (counts that do not add up).)");
    opts_.bind(*app_, spec::Command::connect);
}

int ConnectCommand::run() {
    const auto spec = spec::build_connect_spec(opts_.given());
    const auto& c = *spec.connect;
    fmt::print("linerate connect: {} -> {} port {} from {} ports {}-{}, {} on {} queue{}, {} in flight at most per "
               "queue, close {}\n",
               c.port, spec.frame.dst_ip.str(), spec.frame.dst_port, spec.frame.src_ip.str(), c.src_port_lo,
               c.src_port_hi, spec.rate.limited() ? "at " + spec.rate.quoted() : std::string("as fast as answered"),
               c.queues, c.queues == 1 ? "" : "s", c.outstanding, spec::to_string(c.close));
    std::fflush(stdout);
    return execute(spec, {"linerate connect", {}, false});
}

}  // namespace lr::cli
