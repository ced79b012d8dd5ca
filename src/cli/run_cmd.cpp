#include "cli/run_cmd.h"

#include <fmt/format.h>

#include "cli/execute.h"

namespace lr::cli {

void RunCommand::add_to(CLI::App& app) {
    app_ = app.add_subcommand("run", "Transmit and/or receive-and-measure on DPDK ports or kernel interfaces");
    app_->footer(R"(Ports: DPDK device names or ids (--backend dpdk), or interface names (--backend afxdp),
with an optional queue count: PORT or PORT,queues=N. Each queue gets its own pinned worker.
EAL arguments go after "--" and are passed to DPDK unchanged; linerate adds --in-memory,
--no-telemetry and an lcore map unless you give your own.
Every frame with room is signed (stream, sequence, timestamp, run nonce): receivers report
loss, reordering, duplicates, latency and jitter per stream (docs/measurement.md).

Examples:
  transmit 10M 64-byte UDP frames into a null device:
    linerate run --tx net_null0 --count 10M -- --vdev=net_null0 --no-pci
  TX on one ring port, RX on its pair, 2 queues each, for 5 seconds:
    linerate run --ring-pair ringA,ringB --tx ringA,queues=2 --rx ringB,queues=2 --duration 5s -- --no-pci
  DPDK's net_af_xdp on a veth (inside its namespace):
    linerate run --tx net_af_xdp0 --duration 10s -- --vdev=net_af_xdp0,iface=veth0 --no-pci
  plain kernel, AF_XDP sockets, send on veth0 and measure on veth1:
    linerate run --backend afxdp --tx veth0 --rx veth1 --count 1M --rate 500k
  ping-pong transactions through a reflector (far side: linerate reflect --port IF):
    linerate run --backend afxdp --tx veth0 --rx veth0 --outstanding 1 --count 100k

The run is always finite: --count, or --duration (default 10s).
Exit codes: 0 pass, 1 threshold failed, 2 usage error, 3 environment error, 4 invalid run.)");
    opts_.bind(*app_, spec::Command::run);
}

int RunCommand::run() { return execute(spec::build_run_spec(opts_.given()), {}); }

}  // namespace lr::cli
