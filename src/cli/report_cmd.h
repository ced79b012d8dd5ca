// `linerate report RUN.json -o report.html`: the HTML report of a run or procedure.
#pragma once
#include <CLI/CLI.hpp>
#include <string>

namespace lr::cli {

class ReportCommand {
public:
    void add_to(CLI::App& app);
    bool chosen() const { return app_ && app_->parsed(); }
    int run();

private:
    CLI::App* app_ = nullptr;
    std::string input_, output_;
};

}  // namespace lr::cli
