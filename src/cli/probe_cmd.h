// `linerate probe IFACE`: what this host and interface can do for linerate, and exactly
// what is missing (like qperf's conf, for kernel-bypass needs).
#pragma once
#include <CLI/CLI.hpp>
#include <string>

namespace lr::cli {

struct ProbeOptions {
    std::string iface;
    std::string json;
};

CLI::App* add_probe_command(CLI::App& app, ProbeOptions& o);
// Returns the exit code: 0 when the afxdp backend can run on the interface, 3 otherwise.
int run_probe(const ProbeOptions& o);

}  // namespace lr::cli
