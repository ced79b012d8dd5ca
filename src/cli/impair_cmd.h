// `linerate impair`: a network emulator between two ports (delay, jitter, loss, duplicates,
// reordering, corruption, a rate), forwarding every frame both ways until stopped, every
// decision counted (docs/impair.md).
#pragma once
#include <CLI/CLI.hpp>

#include "cli/option_binding.h"

namespace lr::cli {

class ImpairCommand {
public:
    void add_to(CLI::App& app);
    bool chosen() const { return app_ && app_->parsed(); }
    int run();

private:
    CLI::App* app_ = nullptr;
    BoundOptions opts_;
};

}  // namespace lr::cli
