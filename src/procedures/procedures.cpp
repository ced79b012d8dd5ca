#include "procedures/procedures.h"

#include <algorithm>
#include <chrono>
#include <fmt/format.h>

#include "spec/rate.h"

namespace lr::procedures {
namespace {

std::string size_label(unsigned size) { return fmt::format("{}B", size); }

void run_sweep(TrialRunner& run, ProcedureResult& out) {
    const auto& spec = run.session().spec();
    for (unsigned size : spec.procedure.sizes) {
        if (run.interrupted()) return;
        spec::TrialSpec t = spec.trial();
        t.frame_size = size;
        SweepRow row;
        row.size = size;
        row.requested_pps = run.session().rate_pps(t);
        result::TrialResult r;
        row.trial = run.run({size, row.requested_pps, plain_trial_s(spec), spec.count, "sweep"}, &r);
        row.rx_pps = r.tx_seconds > 0 ? r.rx.unique / r.tx_seconds : 0;
        row.latency = result::summarize(r.latency);
        if (!r.violations.empty() && !out.invalid) {
            out.invalid = true;
            out.invalid_reason = fmt::format("{} B: {}", size, r.violations.front());
        }
        auto checks = result::trial_checks(spec.thresholds, r, out.line_rate_bps, size_label(size));
        out.checks.insert(out.checks.end(), checks.begin(), checks.end());
        out.sweep.push_back(row);
    }
}

void run_throughput(TrialRunner& run, ProcedureResult& out) {
    const auto& spec = run.session().spec();
    const auto goals = goals_for(spec.procedure);
    for (unsigned size : spec.procedure.sizes) {
        if (run.interrupted()) return;
        ThroughputRow row;
        row.size = size;
        row.first_trial = static_cast<unsigned>(run.log().size());
        row.range = load_range(run, size);
        row.search = search_throughput(run, spec, size, row.range, goals);
        row.trials = static_cast<unsigned>(run.log().size()) - row.first_trial;
        if (row.search.ended_early && !out.invalid) {
            out.invalid = true;
            out.invalid_reason = fmt::format("{} B: {}", size, row.search.end_reason);
        }
        if (spec.thresholds.min_throughput)
            for (const auto& g : row.search.goals)
                out.checks.push_back(result::throughput_check(*spec.thresholds.min_throughput,
                                                              g.conditional.value_or(0), size, out.line_rate_bps,
                                                              fmt::format("{} {}", g.goal.name, size_label(size))));
        out.throughput.push_back(std::move(row));
    }
}

}  // namespace

result::Verdict ProcedureResult::verdict() const {
    if (invalid || interrupted) return result::Verdict::invalid;
    return result::all_pass(checks) ? result::Verdict::pass : result::Verdict::fail;
}

std::vector<Goal> goals_for(const spec::ProcedureSpec& p) {
    const auto base = preset_goals(p.preset.empty() ? std::string(spec::to_string(spec::kDefaultPreset)) : p.preset);
    std::vector<Goal> goals;
    if (p.goal_losses.empty()) {
        goals = base;
    } else {
        for (double loss : p.goal_losses) {
            Goal g = base.front();
            g.loss_ratio = loss;
            g.name = loss == 0 ? "NDR" : fmt::format("PDR{:g}%", loss * 100);
            goals.push_back(g);
        }
    }
    for (auto& g : goals) {
        // A shorter final trial keeps the preset's proportions: its duration sum scales with it.
        const double sum_per_trial = g.duration_sum_s / g.final_trial_s;
        if (p.final_trial_s) {
            g.final_trial_s = *p.final_trial_s;
            g.duration_sum_s = sum_per_trial * g.final_trial_s;
        }
        if (p.initial_trial_s) g.initial_trial_s = *p.initial_trial_s;
        g.initial_trial_s = std::min(g.initial_trial_s, g.final_trial_s);
        if (p.duration_sum_s) g.duration_sum_s = *p.duration_sum_s;
        g.duration_sum_s = std::max(g.duration_sum_s, g.final_trial_s);
        if (p.exceed_ratio) g.exceed_ratio = *p.exceed_ratio;
        if (p.width) g.width = *p.width;
    }
    return goals;
}

double plain_trial_s(const spec::RunSpec& spec) {
    return spec.procedure.final_trial_s ? *spec.procedure.final_trial_s : spec.duration_s;
}

LoadRange load_range(TrialRunner& run, unsigned size) {
    const auto& spec = run.session().spec();
    const double line_bps = run.session().line_rate_bps();
    LoadRange r;
    if (line_bps > 0) r.line_pps = spec::line_rate_pps(line_bps, size);
    if (spec.procedure.max_rate.limited()) {
        r.max_pps = spec::to_pps(spec.procedure.max_rate, size, line_bps);
        r.max_source = "--max-rate " + spec.procedure.max_rate.str();
    } else {
        r.ceiling_pps = run.generator_ceiling(size);
        const double usable = 0.95 * r.ceiling_pps;
        if (r.line_pps > 0 && r.line_pps <= usable) {
            r.max_pps = r.line_pps;
            r.max_source = "the line rate";
        } else {
            r.max_pps = usable;
            r.max_source = fmt::format("95 % of the generator's ceiling {}{}", spec::format_pps(r.ceiling_pps),
                                       r.line_pps > 0 ? " (below the line rate: generator-limited)" : "");
        }
    }
    r.min_pps = spec.procedure.min_rate.limited() ? spec::to_pps(spec.procedure.min_rate, size, line_bps)
                                                  : r.max_pps / 1000.0;
    r.min_pps = std::min(r.min_pps, r.max_pps);
    return r;
}

SearchResult search_throughput(TrialRunner& run, const spec::RunSpec& spec, unsigned size, const LoadRange& range,
                               const std::vector<Goal>& goals) {
    SearchLimits lim;
    lim.min_load = range.min_pps;
    lim.max_load = range.max_pps;
    lim.max_trials = spec.procedure.max_trials;
    lim.invalid_retries = kInvalidRetries;
    const Measurer m = [&](double load, double duration_s, const std::string& why) {
        if (run.interrupted()) return TrialOutcome{0, 0, 0, false, "interrupted"};
        const auto l = run.run({size, load, duration_s, std::nullopt, why});
        return TrialOutcome{l.loss_ratio, l.offered_pps, duration_s, l.valid, l.invalid_reason};
    };
    return spec.procedure.search == "binary" ? binary_search(goals, lim, m) : mlr_search(goals, lim, m);
}

TrialLog run_valid(TrialRunner& run, const TrialPlan& p, result::TrialResult* r, unsigned retries) {
    retries = std::min(retries, kInvalidRetries);
    auto l = run.run(p, r);
    for (unsigned i = 0; i < retries && !l.valid && !run.interrupted(); ++i) {
        auto again = p;
        again.why += fmt::format(" (again: {})", l.invalid_reason);
        l = run.run(again, r);
    }
    return l;
}

ProcedureResult run_procedure(engine::Session& s, std::FILE* progress, result::Sink* sink) {
    const auto t0 = std::chrono::steady_clock::now();
    ProcedureResult out;
    out.kind = s.spec().procedure.kind;
    out.line_rate_bps = s.line_rate_bps();
    TrialRunner run(s, progress, sink);
    switch (out.kind) {
        case spec::Procedure::sweep: run_sweep(run, out); break;
        case spec::Procedure::throughput: run_throughput(run, out); break;
        case spec::Procedure::latency: run_latency(run, out); break;
        case spec::Procedure::frame_loss: run_frame_loss(run, out); break;
        case spec::Procedure::back_to_back: run_back_to_back(run, out); break;
        case spec::Procedure::run: break;
    }
    out.trials = run.log();
    out.interrupted = s.interrupted();
    if (out.interrupted && !out.invalid) out.invalid_reason = "interrupted";
    out.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    return out;
}

}  // namespace lr::procedures
