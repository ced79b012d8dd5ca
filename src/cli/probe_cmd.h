// `linerate probe IFACE`: what this host and interface can do for linerate, and exactly
// what is missing (like qperf's conf, for kernel-bypass needs).
#pragma once
#include <CLI/CLI.hpp>
#include <string>

namespace lr::cli {

class ProbeCommand {
public:
    void add_to(CLI::App& app);
    bool chosen() const { return app_ && app_->parsed(); }
    // 0 when the afxdp backend can run on the interface, 3 otherwise.
    int run();

private:
    CLI::App* app_ = nullptr;
    std::string iface_, json_;
};

}  // namespace lr::cli
