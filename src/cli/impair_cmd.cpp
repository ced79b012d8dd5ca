#include "cli/impair_cmd.h"

#include <fmt/format.h>

#include "cli/execute.h"
#include "spec/rate.h"

namespace lr::cli {

void ImpairCommand::add_to(CLI::App& app) {
    app_ = app.add_subcommand("impair", "Emulate a network path between two ports: delay, jitter, loss, duplicates, "
                                        "reordering, corruption, a rate");
    app_->footer(R"(Every frame that arrives on one port of --between leaves by the other (both ways unless
--direction says one), after what the options ask; every decision is counted, and --seed
makes a run's random decisions again. It runs until SIGINT or --duration, with the live
lines, --json, --json-stream and --metrics of the other commands.

Examples:
  100 ms of delay with 1 ms of normal jitter and 0.1 % loss between two interfaces:
    linerate impair --backend afxdp --between veth1,veth2 --delay 100ms --jitter 1ms --loss 0.1%
  a 1 Gbit/s link with 10 ms of delay and a queue of 5000 frames, one way:
    linerate impair --backend afxdp --between veth1,veth2 --direction a-to-b --delay 10ms --rate 1Gbps --limit 5000

Exit codes: 0 ran, 2 usage error (an impossible setting), 3 environment error, 4 invalid (counts that do not add up).)");
    opts_.bind(*app_, spec::Command::impair);
}

int ImpairCommand::run() {
    const auto spec = spec::build_impair_spec(opts_.given());
    const auto& im = *spec.impair;
    const auto& p = im.plan;
    std::string what = fmt::format("delay {}", spec::format_seconds(static_cast<double>(p.delay_ns) * 1e-9));
    if (p.jitter_ns)
        what += fmt::format(", jitter {} ({})", spec::format_seconds(static_cast<double>(p.jitter_ns) * 1e-9),
                            spec::to_string(p.dist));
    if (p.loss > 0 || p.gilbert) what += fmt::format(", loss {:.4g} % ({})", 100 * p.mean_loss(), im.loss_typed);
    if (p.duplicate > 0) what += fmt::format(", duplicates {:.4g} %", 100 * p.duplicate);
    if (p.reorder > 0) what += fmt::format(", reordering {:.4g} %", 100 * p.reorder);
    if (p.corrupt > 0) what += fmt::format(", corruption {:.4g} %", 100 * p.corrupt);
    if (!im.rate_typed.empty()) what += ", " + im.rate_typed;
    fmt::print("linerate impair: {} {} {}: {}; up to {} frames held, seed {}\n", im.a,
               im.direction == spec::ImpairDirection::both     ? "<->"
               : im.direction == spec::ImpairDirection::a_to_b ? "->"
                                                                : "<-",
               im.b, what, p.limit, p.seed);
    std::fflush(stdout);
    return execute(spec, {"linerate impair", {}, false});
}

}  // namespace lr::cli
