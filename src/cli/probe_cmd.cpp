#include "cli/probe_cmd.h"

#include <fmt/format.h>

#include "host/probe.h"
#include "report/json_report.h"
#include "util/error.h"

namespace lr::cli {

void ProbeCommand::add_to(CLI::App& app) {
    app_ = app.add_subcommand("probe", "Report what this host and an interface support, and what is missing");
    app_->add_option("iface", iface_, "Network interface to examine")->required();
    app_->add_option("--json", json_, "Also write the findings as JSON to FILE")->type_name("FILE");
}

int ProbeCommand::run() {
    if (!json_.empty()) report::check_outputs({{"--json", json_, true}});
    const auto rep = host::probe_interface(iface_);
    fmt::print("linerate probe {}: kernel {}, driver {}, {} RX / {} TX queues, MTU {}\n", rep.iface, rep.kernel,
               rep.driver.empty() ? "?" : rep.driver, rep.rx_queues, rep.tx_queues, rep.mtu);
    for (const auto& c : rep.checks) fmt::print("  [{}] {:<15} {}\n", c.ok ? "ok" : "--", c.name, c.detail);
    fmt::print("afxdp backend: {}\n", rep.afxdp_usable() ? "usable" : "NOT usable (see the checks marked --)");
    if (!json_.empty()) report::write_json(json_, rep.json);
    return rep.afxdp_usable() ? 0 : static_cast<int>(ExitCode::environment);
}

}  // namespace lr::cli
