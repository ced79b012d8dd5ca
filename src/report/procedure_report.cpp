#include "report/procedure_report.h"

#include <fmt/format.h>

#include "report/checks_report.h"
#include "report/json_report.h"
#include "report/result_fields.h"
#include "spec/options.h"
#include "spec/rate.h"

namespace lr::report {
namespace {

using J = nlohmann::json;
using result::ProcedureResult;

std::string pct_of_line(double pps, double size, double line_bps) {
    return line_bps > 0 ? fmt::format("{:.2f} %", 100.0 * spec::l1_bps(pps, size) / line_bps) : "-";
}

J rate_json(double pps, double size, double line_bps) {
    J j = {{"pps", pps}, {"l1_bps", spec::l1_bps(pps, size)}, {"l2_bps", spec::l2_bps(pps, size)}};
    j["line_rate_pct"] = line_bps > 0 ? J(100.0 * spec::l1_bps(pps, size) / line_bps) : J(nullptr);
    return j;
}

J range_json(const result::LoadRange& r) {
    return {{"min_pps", r.min_pps},
            {"max_pps", r.max_pps},
            {"max_source", r.max_source},
            {"line_rate_pps", r.line_pps > 0 ? J(r.line_pps) : J(nullptr)},
            {"generator_peak_pps", r.peak_pps > 0 ? J(r.peak_pps) : J(nullptr)},
            {"generator_ceiling_pps", r.ceiling_pps > 0 ? J(r.ceiling_pps) : J(nullptr)},
            {"generator_limited", r.generator_limited}};
}

J opt_rate(const std::optional<double>& v, double size, double line_bps) {
    return v ? rate_json(*v, size, line_bps) : J(nullptr);
}

void print_sweep(std::FILE* out, const ProcedureResult& r) {
    fmt::print(out, "\n{:>6}  {:>13}  {:>13}  {:>12}  {:>12}  {:>11}  {:>12}  {:>10}\n", "size", "requested", "offered",
               "received", "sent", "loss", "L1 recv", "lat p99");
    for (const auto& row : r.sweep) {
        const auto& t = row.trial;
        fmt::print(out, "{:>6}  {:>13}  {:>13}  {:>12}  {:>12}  {:>9.5f} %  {:>12}  {:>10}{}\n", r.size_short(row.size),
                   row.requested_pps > 0 ? spec::format_pps(row.requested_pps) : "max", spec::format_pps(t.offered_pps),
                   spec::format_pps(row.rx_pps), t.sent, 100 * t.loss_ratio,
                   spec::format_bps(spec::l1_bps(row.rx_pps, r.frame_bytes(row.size))),
                   row.latency.count ? fmt::format("{:.1f} us", row.latency.p99 / 1e3) : "-",
                   t.valid ? "" : "  invalid: " + t.invalid_reason);
    }
}

void print_throughput(std::FILE* out, const ProcedureResult& r) {
    fmt::print(out, "\n{:>6}  {:<10} {:>13}  {:>10}  {:>14}  {:>14}  {:>13}  {:>13}  {:>6}  {}\n", "size", "goal",
               "throughput", "% line", "L1", "L2", "lower bound", "upper bound", "trials", "");
    for (const auto& row : r.throughput)
        for (const auto& g : row.search.goals) {
            const double tp = g.conditional.value_or(0);
            fmt::print(out, "{:>6}  {:<10} {:>13}  {:>10}  {:>14}  {:>14}  {:>13}  {:>13}  {:>6}  {}\n", r.size_short(row.size),
                       g.goal.name, (g.at_least ? ">= " : "") + spec::format_pps(tp),
                       pct_of_line(tp, r.frame_bytes(row.size), r.line_rate_bps),
                       spec::format_bps(spec::l1_bps(tp, r.frame_bytes(row.size))), spec::format_bps(spec::l2_bps(tp, r.frame_bytes(row.size))),
                       g.lower ? spec::format_pps(*g.lower) : "-", g.upper ? spec::format_pps(*g.upper) : "-",
                       row.trials, g.regular ? "" : g.at_least ? g.irregular_reason : "irregular: " + g.irregular_reason);
        }
}

void print_latency(std::FILE* out, const ProcedureResult& r) {
    fmt::print(out, "\n{:>6}  {:>13}  {:>6}  {:>10}  {:>10}  {:>10}  {:>10}  {:>10}  {:>10}  {}\n", "size", "load",
               "trials", "min", "mean", "p50", "p99", "max", "jitter", "load from");
    const auto us = [](double ns) { return fmt::format("{:.2f} us", ns / 1e3); };
    for (const auto& row : r.latency)
        fmt::print(out, "{:>6}  {:>13}  {:>6}  {:>10}  {:>10}  {:>10}  {:>10}  {:>10}  {:>10}  {}\n", r.size_short(row.size),
                   spec::format_pps(row.load_pps), row.per_trial.size(), us(row.all.min), us(row.mean_of_means_ns),
                   us(row.all.p50), us(row.all.p99), us(row.all.max), us(row.worst_jitter_ns), row.load_source);
}

void print_frame_loss(std::FILE* out, const ProcedureResult& r) {
    for (const auto& row : r.frame_loss) {
        fmt::print(out, "\n{} (100 % = {}, {}):\n{:>8}  {:>13}  {:>12}  {:>12}  {:>11}\n", r.size_text(row.size),
                   spec::format_pps(row.range.max_pps), row.range.max_source, "load", "rate", "sent", "received",
                   "frame loss");
        for (const auto& s : row.steps)
            fmt::print(out, "{:>6.1f} %  {:>13}  {:>12}  {:>12}  {:>9.5f} %\n", s.load_pct, spec::format_pps(s.load_pps),
                       s.sent, s.received, s.loss_pct);
    }
}

void print_back_to_back(std::FILE* out, const ProcedureResult& r) {
    fmt::print(out, "\n{:>6}  {:>13}  {:>7}  {:>12}  {:>12}  {:>12}  {:>12}\n", "size", "load", "repeats", "mean burst",
               "min", "max", "seconds");
    for (const auto& row : r.back_to_back)
        fmt::print(out, "{:>6}  {:>13}  {:>7}  {:>11.0f}{}  {:>12}  {:>12}  {:>12.6f}\n", r.size_short(row.size),
                   spec::format_pps(row.load_pps), row.bursts.size(), row.mean, row.capped ? "+" : " ", row.min,
                   row.max, row.load_pps > 0 ? row.mean / row.load_pps : 0.0);
    for (const auto& row : r.back_to_back)
        if (row.capped)
            fmt::print(out, "{}: the longest burst tried ({} frames) arrived whole at least once: the device "
                            "buffers at least that much (+)\n",
                       r.size_text(row.size), row.longest_tried);
}

J goal_json(const result::GoalResult& g, double size, double line_bps) {
    return {{"name", g.goal.name},
            {"loss_ratio", g.goal.loss_ratio},
            {"exceed_ratio", g.goal.exceed_ratio},
            {"final_trial_s", g.goal.final_trial_s},
            {"duration_sum_s", g.goal.duration_sum_s},
            {"width", g.goal.width},
            {"regular", g.regular},
            {"at_least", g.at_least},
            {"irregular_reason", g.regular ? J(nullptr) : J(g.irregular_reason)},
            {"throughput", opt_rate(g.conditional, size, line_bps)},
            {"lower_bound", opt_rate(g.lower, size, line_bps)},
            {"upper_bound", opt_rate(g.upper, size, line_bps)}};
}

J rows_json(const ProcedureResult& r) {
    // A row of a stream mix has no one size: null, the mix described at the top ("mix").
    const auto size_json = [](unsigned size) { return size ? J(size) : J(nullptr); };
    auto rows = J::array();
    const double lb = r.line_rate_bps;
    for (const auto& row : r.sweep)
        rows.push_back({{"size", size_json(row.size)},
                        {"requested_pps", row.requested_pps > 0 ? J(row.requested_pps) : J(nullptr)},
                        {"offered", rate_json(row.trial.offered_pps, r.frame_bytes(row.size), lb)},
                        {"received", rate_json(row.rx_pps, r.frame_bytes(row.size), lb)},
                        {"sent", row.trial.sent},
                        {"received_frames", row.trial.received},
                        {"loss_ratio", row.trial.loss_ratio},
                        {"latency", latency_json(row.latency)},
                        {"valid", row.trial.valid},
                        {"invalid_reason", row.trial.valid ? J(nullptr) : J(row.trial.invalid_reason)},
                        {"trial", row.trial.index}});
    for (const auto& row : r.throughput) {
        auto goals = J::array();
        for (const auto& g : row.search.goals) goals.push_back(goal_json(g, r.frame_bytes(row.size), lb));
        rows.push_back({{"size", size_json(row.size)},
                        {"range", range_json(row.range)},
                        {"goals", goals},
                        {"trials", row.trials},
                        {"first_trial", row.first_trial},
                        {"trial_seconds", row.search.trial_seconds},
                        {"ended_early", row.search.ended_early},
                        {"end_reason", row.search.ended_early ? J(row.search.end_reason) : J(nullptr)}});
    }
    for (const auto& row : r.latency) {
        auto per = J::array();
        for (const auto& s : row.per_trial) per.push_back(latency_json(s));
        rows.push_back({{"size", size_json(row.size)},
                        {"load", rate_json(row.load_pps, r.frame_bytes(row.size), lb)},
                        {"load_source", row.load_source},
                        {"latency", latency_json(row.all)},
                        {"mean_of_trial_means_ns", row.mean_of_means_ns},
                        {"worst_jitter_ns", row.worst_jitter_ns},
                        {"sent", row.sent},
                        {"received", row.received},
                        {"per_trial", per}});
    }
    for (const auto& row : r.frame_loss) {
        auto steps = J::array();
        for (const auto& s : row.steps)
            steps.push_back({{"load_pct", s.load_pct},
                             {"load", rate_json(s.load_pps, r.frame_bytes(row.size), lb)},
                             {"sent", s.sent},
                             {"received", s.received},
                             {"frame_loss_pct", s.loss_pct}});
        rows.push_back({{"size", size_json(row.size)}, {"range", range_json(row.range)}, {"steps", steps}});
    }
    for (const auto& row : r.back_to_back)
        rows.push_back({{"size", size_json(row.size)},
                        {"load", rate_json(row.load_pps, r.frame_bytes(row.size), lb)},
                        {"longest_tried", row.longest_tried},
                        {"bursts", row.bursts},
                        {"mean", row.mean},
                        {"min", row.min},
                        {"max", row.max},
                        {"mean_seconds", row.load_pps > 0 ? row.mean / row.load_pps : 0.0},
                        {"capped", row.capped}});
    return rows;
}

}  // namespace

void print_procedure(std::FILE* out, const ProcedureResult& r) {
    fmt::print(out, "\n{} done: {} trials in {:.1f} s{}\n", spec::to_string(r.kind), r.trials.size(), r.seconds,
               r.line_rate_bps > 0 ? fmt::format(", line rate {}", spec::format_bps(r.line_rate_bps)) : "");
    if (!r.mix_label.empty())
        fmt::print(out, "over {}: every stream scaled by one load, its bits/s at the mean frame of {:.2f} B\n",
                   r.mix_label, r.mix_mean_size);
    switch (r.kind) {
        case spec::Procedure::sweep: print_sweep(out, r); break;
        case spec::Procedure::throughput: print_throughput(out, r); break;
        case spec::Procedure::latency: print_latency(out, r); break;
        case spec::Procedure::frame_loss: print_frame_loss(out, r); break;
        case spec::Procedure::back_to_back: print_back_to_back(out, r); break;
        case spec::Procedure::run: break;
    }
    for (const auto& n : r.notes) fmt::print(out, "note: {}\n", n);
    fmt::print(out, "\n");
    print_checks(out, r.checks, r.verdict(), r.verdict_reason());
}

J procedure_report(const spec::RunSpec& spec, const J& environment, const ProcedureResult& r) {
    J j;
    j["schema_version"] = kSchemaVersion;
    j["tool"] = "linerate";
    j["procedure"] = std::string(spec::to_string(r.kind));
    j["spec"] = spec::spec_json(spec);
    j["environment"] = environment;
    j["line_rate_bps"] = r.line_rate_bps > 0 ? J(r.line_rate_bps) : J(nullptr);
    j["mix"] = r.mix_label.empty() ? J(nullptr) : J{{"label", r.mix_label}, {"mean_size", r.mix_mean_size}};
    j["seconds"] = r.seconds;
    j["rows"] = rows_json(r);
    j["trials"] = json_array(trial_log_fields(), r.trials);
    j["checks"] = checks_json(r.checks);
    j["notes"] = r.notes;
    const auto bad = r.invalid_trials();
    j["verdict"] = {{"result", result::verdict_str(r.verdict())},
                    {"reason", r.verdict_reason()},
                    {"invalid_trials", bad.count},
                    {"measuring_trials", bad.of}};
    return j;
}

}  // namespace lr::report
