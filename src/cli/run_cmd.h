// `linerate run`: transmit and/or receive-and-measure on named ports, for one or more trials.
#pragma once
#include <CLI/CLI.hpp>

#include "cli/option_binding.h"
#include "result/result.h"

namespace lr::cli {

class RunCommand {
public:
    void add_to(CLI::App& app);
    bool chosen() const { return app_ && app_->parsed(); }
    // Builds the spec from the options, runs the session, writes the reports; returns the exit code.
    int run();

private:
    CLI::App* app_ = nullptr;
    BoundOptions opts_;
};

}  // namespace lr::cli
