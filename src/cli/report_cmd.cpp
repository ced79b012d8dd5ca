#include "cli/report_cmd.h"

#include <cerrno>
#include <cstring>
#include <fmt/format.h>
#include <fstream>
#include <nlohmann/json.hpp>

#include "report/html_report.h"
#include "report/json_report.h"
#include "util/error.h"

namespace lr::cli {

void ReportCommand::add_to(CLI::App& app) {
    app_ = app.add_subcommand("report", "Write a self-contained HTML report (charts, checks, trials) of a --json report");
    app_->add_option("input", input_, "The JSON report of a run or a procedure (--json FILE)")->required();
    app_->add_option("-o,--output", output_, "The HTML file to write")->required();
    app_->footer("Example:\n  linerate sweep ... --json sweep.json && linerate report sweep.json -o sweep.html");
}

int ReportCommand::run() {
    report::check_outputs({{"--output", output_, true}});
    std::ifstream in(input_);
    if (!in) throw UsageError(fmt::format("couldn't read {}: {}", input_, std::strerror(errno)));
    nlohmann::json j;
    try {
        j = nlohmann::json::parse(in);
    } catch (const nlohmann::json::parse_error& e) {
        throw UsageError(fmt::format("{} is not JSON: {}", input_, e.what()));
    }
    const auto html = report::html_report(j);
    report::write_file(output_, html, "HTML report");
    fmt::print("linerate: wrote {} ({} KiB, self-contained)\n", output_, (html.size() + 1023) / 1024);
    return 0;
}

}  // namespace lr::cli
