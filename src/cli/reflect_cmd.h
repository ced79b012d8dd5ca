// `linerate reflect`: send linerate test frames back where they came from, so the sender
// measures round-trip latency and transaction rates. XDP mode: XDP_TX in the driver, no
// user space in the data path.
#pragma once
#include <CLI/CLI.hpp>
#include <string>

namespace lr::cli {

struct ReflectOptions {
    std::string backend = "xdp", port, queues = "1", xdp_mode = "auto", xsk_mode = "auto", proto = "any",
                dst_ports = "1024", duration = "60s", interval = "1s", json, cpus;
    std::vector<std::string> eal;
    bool quiet = false;
};

CLI::App* add_reflect_command(CLI::App& app, ReflectOptions& o);
int run_reflect(const ReflectOptions& o);

}  // namespace lr::cli
