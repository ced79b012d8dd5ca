// `linerate reflect`: send linerate test frames back where they came from, so the sender
// measures round-trip latency and transaction rates. In the driver (XDP_TX, no user space in
// the data path) or in user space on AF_XDP or DPDK (the run engine with the reflect role).
#pragma once
#include <CLI/CLI.hpp>

#include "cli/option_binding.h"

namespace lr::cli {

class ReflectCommand {
public:
    void add_to(CLI::App& app);
    bool chosen() const { return app_ && app_->parsed(); }
    int run();

private:
    CLI::App* app_ = nullptr;
    BoundOptions opts_;
};

}  // namespace lr::cli
