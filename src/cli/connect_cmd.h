// `linerate connect`: TCP connection rate against a real listener (netperf TCP_CRR's question
// at the packet level): SYNs at a rate or with N in flight, every handshake timed and ended
// as --close asks, every outcome counted (docs/connect.md).
#pragma once
#include <CLI/CLI.hpp>

#include "cli/option_binding.h"

namespace lr::cli {

class ConnectCommand {
public:
    void add_to(CLI::App& app);
    bool chosen() const { return app_ && app_->parsed(); }
    int run();

private:
    CLI::App* app_ = nullptr;
    BoundOptions opts_;
};

}  // namespace lr::cli
