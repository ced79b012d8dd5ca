// `linerate run`: transmit and/or receive-and-count on named ports.
#pragma once
#include <CLI/CLI.hpp>
#include <string>
#include <vector>

#include "spec/run_spec.h"

namespace lr::cli {

// Raw option strings, converted by to_spec() with precise error messages.
struct RunOptions {
    std::string backend = "dpdk", xdp_mode = "auto", xsk_mode = "auto", rx_mode = "socket", cpus;
    std::vector<std::string> tx, rx, eal, ring_pairs;
    std::string size = "min", proto = "udp", vlan, vlan_pcp = "0";
    bool ipv6 = false;
    std::string src_mac = "02:00:00:00:00:01", dst_mac = "02:00:00:00:00:02";
    std::string src_ip, dst_ip, src_port = "1024", dst_port = "1024", ttl = "1";
    std::string flows = "0", vary = "src-ip,src-port";
    std::string count, rate, outstanding, response_timeout = "100ms", duration, interval = "1s", drain = "2s", stall = "3s";
    std::string burst = "0", descriptors = "0", mbufs = "0";
    std::string json, max_loss;
    std::string nonce;
    bool quiet = false, force = false, stop_when_idle = false, no_signature = false;
};

CLI::App* add_run_command(CLI::App& app, RunOptions& o);
// Converts and validates; throws lr::UsageError.
spec::RunSpec to_spec(const RunOptions& o);

}  // namespace lr::cli
