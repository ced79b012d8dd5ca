// `linerate sweep | throughput | latency | frame-loss | back-to-back`: the procedures, each
// taking the options of `run` (ports, frames, backend) and its own (docs/procedures.md).
#pragma once
#include <CLI/CLI.hpp>

#include "cli/option_binding.h"
#include "spec/procedure_spec.h"

namespace lr::cli {

class ProcedureCommand {
public:
    explicit ProcedureCommand(spec::Procedure kind) : kind_(kind) {}
    void add_to(CLI::App& app);
    bool chosen() const { return app_ && app_->parsed(); }
    int run();

private:
    spec::Procedure kind_;
    CLI::App* app_ = nullptr;
    BoundOptions opts_;
};

// `linerate check PROFILE [options]`: runs a profile file and judges it (PASS/FAIL per check,
// --junit for CI). Options on the command line override the file's.
class CheckCommand {
public:
    void add_to(CLI::App& app);
    bool chosen() const { return app_ && app_->parsed(); }
    int run();

private:
    CLI::App* app_ = nullptr;
    std::string profile_;
    BoundOptions opts_;
};

}  // namespace lr::cli
