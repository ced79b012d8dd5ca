#include "procedures/procedures.h"

#include <algorithm>
#include <chrono>
#include <fmt/format.h>

#include "spec/rate.h"

namespace lr::procedures {
namespace {

void run_sweep(TrialRunner& run, ProcedureResult& out) {
    const auto& spec = run.spec();
    for (unsigned size : spec.procedure.sizes) {
        if (run.interrupted()) return;
        spec::TrialSpec t = spec.trial();
        t.frame_size = size;
        SweepRow row;
        row.size = size;
        row.requested_pps = run.rate_pps(t);
        result::TrialResult r;
        row.trial = run_valid(run, {size, row.requested_pps, plain_trial_s(spec), spec.count, "sweep"}, &r);
        row.rx_pps = r.tx_seconds > 0 ? r.rx.unique / r.tx_seconds : 0;
        row.latency = result::summarize(r.latency);
        out.sweep.push_back(row);
        if (!row.trial.valid) {  // still invalid when repeated: this row measured nothing to judge
            if (!out.invalid) {
                out.invalid = true;
                out.invalid_reason = fmt::format("{}: {}", out.size_text(size), row.trial.invalid_reason);
            }
            continue;
        }
        auto checks = result::trial_checks(spec.thresholds, r, out.line_rate_bps, out.size_short(size));
        out.checks.insert(out.checks.end(), checks.begin(), checks.end());
    }
}

void run_throughput(TrialRunner& run, ProcedureResult& out) {
    const auto& spec = run.spec();
    const auto goals = goals_for(spec.procedure);
    for (unsigned size : spec.procedure.sizes) {
        if (run.interrupted()) return;
        ThroughputRow row;
        row.size = size;
        row.first_trial = static_cast<unsigned>(run.log().size());
        row.range = load_range(run, size, out.notes);
        row.search = search_throughput(run, spec, size, row.range, goals);
        row.trials = static_cast<unsigned>(run.log().size()) - row.first_trial;
        for (const auto& n : row.search.notes) out.notes.push_back(fmt::format("{}: {}", out.size_text(size), n));
        if (row.search.ended_early && !out.invalid) {
            out.invalid = true;
            out.invalid_reason = fmt::format("{}: {}", out.size_text(size), row.search.end_reason);
        }
        if (spec.thresholds.min_throughput)
            for (const auto& g : row.search.goals)
                out.checks.push_back(result::throughput_check(*spec.thresholds.min_throughput,
                                                              g.conditional.value_or(0), out.frame_bytes(size), out.line_rate_bps,
                                                              fmt::format("{} {}", g.goal.name, out.size_short(size))));
        out.throughput.push_back(std::move(row));
    }
}

}  // namespace

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

LoadRange load_range(TrialRunner& run, unsigned size, std::vector<std::string>& notes) {
    const auto& spec = run.spec();
    const double line_bps = run.line_rate_bps();
    const double bytes = run.mean_frame_size(size);
    const auto at = run.size_label(size);
    LoadRange r;
    if (line_bps > 0) r.line_pps = spec::line_rate_pps(line_bps, bytes);
    const auto cap = run.generator_capacity(size, r.line_pps);
    r.peak_pps = cap.peak_pps;
    r.ceiling_pps = cap.held_pps;
    const std::string ceiling = fmt::format("the generator's ceiling {} at {} (the highest load it holds paced; "
                                            "{} as fast as it can{})",
                                            spec::format_pps(cap.held_pps), at, spec::format_pps(cap.peak_pps),
                                            cap.confirmed ? "" : "; not confirmed by a valid paced trial");
    if (spec.procedure.max_rate.limited()) {
        const double asked = spec::to_pps(spec.procedure.max_rate, bytes, line_bps);
        if (asked > cap.held_pps) {
            r.max_pps = cap.held_pps;
            r.generator_limited = true;
            r.max_source = ceiling;
            notes.push_back(fmt::format("--max-rate {} is more than this host's generator holds at {} B: the "
                                        "procedure's maximum is {}",
                                        spec.procedure.max_rate.str(), at, ceiling));
        } else {
            r.max_pps = asked;
            r.max_source = "--max-rate " + spec.procedure.max_rate.str();
        }
    } else if (r.line_pps > 0 && r.line_pps <= cap.held_pps) {
        r.max_pps = r.line_pps;
        r.max_source = "the line rate";
    } else {
        r.max_pps = cap.held_pps;
        r.generator_limited = true;
        r.max_source = ceiling + (r.line_pps > 0 ? ", below the line rate: generator-limited" : "");
    }
    r.min_pps = spec.procedure.min_rate.limited() ? spec::to_pps(spec.procedure.min_rate, bytes, line_bps)
                                                  : r.max_pps / 1000.0;
    r.min_pps = std::min(r.min_pps, r.max_pps);
    return r;
}

SearchResult search_throughput(TrialRunner& run, const spec::RunSpec& spec, unsigned size, const LoadRange& range,
                               const std::vector<Goal>& goals) {
    SearchLimits lim;
    lim.min_load = range.min_pps;
    lim.max_load = range.max_pps;
    lim.max_is_generator = range.generator_limited;
    lim.max_trials = spec.procedure.max_trials;
    lim.invalid_retries = kInvalidRetries;
    const Measurer m = [&](double load, double duration_s, const std::string& why) {
        if (run.interrupted()) return TrialOutcome{0, 0, 0, false, false, "interrupted"};
        const auto l = run.run({size, load, duration_s, std::nullopt, why});
        return TrialOutcome{l.loss_ratio, l.offered_pps, duration_s, l.valid, l.instrument_limited, l.invalid_reason};
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
    SessionTrialRunner run(s, progress, sink);
    return run_procedure(run);
}

ProcedureResult run_procedure(TrialRunner& run) {
    const auto t0 = std::chrono::steady_clock::now();
    ProcedureResult out;
    const auto& spec = run.spec();
    out.kind = spec.procedure.kind;
    out.line_rate_bps = run.line_rate_bps();
    if (!spec.single_fixed_stream()) {
        out.mix_label = run.size_label(0);
        out.mix_mean_size = run.mean_frame_size(0);
    }
    switch (out.kind) {
        case spec::Procedure::sweep: run_sweep(run, out); break;
        case spec::Procedure::throughput: run_throughput(run, out); break;
        case spec::Procedure::latency: run_latency(run, out); break;
        case spec::Procedure::frame_loss: run_frame_loss(run, out); break;
        case spec::Procedure::back_to_back: run_back_to_back(run, out); break;
        case spec::Procedure::run: break;
    }
    out.trials = run.log();
    if (const auto& most = spec.thresholds.max_invalid_trials) {
        const auto bad = out.invalid_trials();
        out.checks.push_back({"invalid trials", "max-invalid-trials", bad.count <= *most, double(bad.count),
                              double(*most), "trials",
                              bad.count ? bad.summary : fmt::format("none of {} trials", bad.of),
                              fmt::format("{}", *most)});
    }
    out.interrupted = run.interrupted();
    if (out.interrupted && !out.invalid) out.invalid_reason = "interrupted";
    out.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    return out;
}

}  // namespace lr::procedures
