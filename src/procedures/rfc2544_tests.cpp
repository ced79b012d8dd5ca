// RFC 2544 sections 26.2 (latency), 26.3 (frame loss rate) and 26.4 (back-to-back frames).
#include <algorithm>
#include <fmt/format.h>
#include <numeric>

#include "procedures/procedures.h"
#include "spec/rate.h"

namespace lr::procedures {
namespace {

void mark_invalid(ProcedureResult& out, unsigned size, const TrialLog& l) {
    if (out.invalid) return;
    out.invalid = true;
    out.invalid_reason = fmt::format("{}: {}", out.size_text(size), l.invalid_reason);
}

// Frame loss and back-to-back run at one load (their top step, their burst rate). A load this
// host cannot hold (a trial still instrument-limited after its repeats: the generator short,
// or this host's egress or receive path dropping) is lowered by kLowerBy and the procedure's
// trials at that size start over, at most kLowerings times, each with a note; the searches do
// the same with their maximum. Any other invalid trial ends the procedure.
constexpr double kLowerBy = 0.9;
constexpr unsigned kLowerings = 3;

// A back-to-back burst is judged only if its senders never fell further behind than this
// share of its length (at least kMinBurstHoleS). The device's buffer fills at L - R (load L
// above its rate R); a hole of s before the buffer holds s R frames leaves the device idle for
// part of it, and the frames made up after the hole cannot give that service back: the burst
// that fits shrinks by s R L / (L - R) frames. A hole of share h at the very start understates
// the buffer by h R / (L - R) of the burst: by 5 % at 2R, by 10 % if the generator's ceiling
// clamped L to 1.5R. Later holes cost nothing (the buffer drains during them and the made-up
// frames refill it). A burst that stalled longer is repeated, and the procedure ends invalid
// if it keeps stalling: a sender that shares its core with another busy process waits for it
// a tick at a time (4 ms).
constexpr double kBurstHoleShare = 0.05;
constexpr double kMinBurstHoleS = 200e-6;

bool lower_load(ProcedureResult& out, unsigned size, const TrialLog& l, double& load, unsigned& lowerings,
                const char* what) {
    if (!l.instrument_limited || lowerings >= kLowerings) return false;
    ++lowerings;
    const double lower = load * kLowerBy;
    out.notes.push_back(fmt::format("{} at {}: this host could not hold {} ({}); lowered to {} and started over",
                                    what, out.size_text(size), spec::format_pps(load), l.invalid_reason, spec::format_pps(lower)));
    load = lower;
    return true;
}

// The latency trials' load at `size`: --rate, else --load of the NDR found by a search.
double latency_load(TrialRunner& run, ProcedureResult& out, unsigned size, std::string& source) {
    const auto& spec = run.spec();
    if (spec.rate.limited()) {
        spec::TrialSpec t = spec.trial();
        t.frame_size = size;
        source = "--rate " + spec.rate.str();
        return run.rate_pps(t);
    }
    auto goals = goals_for(spec.procedure);
    goals.resize(1);  // the first goal (the NDR unless --goals says otherwise)
    const auto range = load_range(run, size, out.notes);
    const auto found = search_throughput(run, spec, size, range, goals);
    const auto& g = found.goals.front();
    if (found.ended_early || !g.conditional || *g.conditional <= 0) {
        if (!out.invalid) {
            out.invalid = true;
            out.invalid_reason = fmt::format("{}: no throughput to measure latency at ({})", out.size_text(size),
                                             found.ended_early ? found.end_reason : g.irregular_reason);
        }
        return 0;
    }
    source = fmt::format("{:g} % of {} {}", spec.procedure.latency_load * 100, g.goal.name,
                         spec::format_pps(*g.conditional));
    return spec.procedure.latency_load * *g.conditional;
}

}  // namespace

void run_latency(TrialRunner& run, ProcedureResult& out) {
    const auto& spec = run.spec();
    for (unsigned size : spec.procedure.sizes) {
        if (run.interrupted() || out.invalid) return;
        LatencyRow row;
        row.size = size;
        row.load_pps = latency_load(run, out, size, row.load_source);
        if (row.load_pps <= 0) return;
        stats::LatencyHistogram merged;
        result::TrialResult worst_loss;  // for the checks: the trial with the most loss
        result::TrialResult all;         // latency and streams of every trial, for the checks
        double sum_means = 0;
        for (uint32_t i = 0; i < spec.procedure.repeat && !run.interrupted(); ++i) {
            result::TrialResult r;
            const auto l = run_valid(run,
                                     {size, row.load_pps, plain_trial_s(spec), std::nullopt,
                                      fmt::format("latency {} of {}", i + 1, spec.procedure.repeat)},
                                     &r);
            if (!l.valid) return mark_invalid(out, size, l);
            const auto s = result::summarize(r.latency);
            row.per_trial.push_back(s);
            sum_means += s.mean;
            merged.merge(r.latency);
            row.sent += l.sent;
            row.received += l.received;
            for (const auto& st : r.flows) row.worst_jitter_ns = std::max(row.worst_jitter_ns, st.jitter_ns);
            if (i == 0 || r.lost > worst_loss.lost) worst_loss = r;
            if (i == 0) all = r;
            all.flows.insert(all.flows.end(), r.flows.begin(), r.flows.end());
        }
        if (row.per_trial.empty()) return;
        row.all = result::summarize(merged);
        row.mean_of_means_ns = sum_means / row.per_trial.size();
        // Latency checks on every frame of every trial; the loss check on the worst trial.
        all.latency = merged;
        all.lost = worst_loss.lost;
        all.tx = worst_loss.tx;
        auto th = spec.thresholds;
        th.min_throughput.reset();
        th.max_rate_error_pct.reset();
        auto checks = result::trial_checks(th, all, out.line_rate_bps, out.size_short(size));
        out.checks.insert(out.checks.end(), checks.begin(), checks.end());
        out.latency.push_back(std::move(row));
    }
}

void run_frame_loss(TrialRunner& run, ProcedureResult& out) {
    const auto& spec = run.spec();
    for (unsigned size : spec.procedure.sizes) {
        if (run.interrupted() || out.invalid) return;
        FrameLossRow row;
        row.size = size;
        row.range = load_range(run, size, out.notes);
        unsigned clean_in_a_row = 0, lowerings = 0;
        unsigned step = 0;
        while (clean_in_a_row < 2) {
            const double pct = 100.0 - step * spec.procedure.step_pct;
            if (pct <= 0 || run.interrupted()) break;
            const double load = row.range.max_pps * pct / 100.0;
            const auto l = run_valid(run, {size, load, plain_trial_s(spec), std::nullopt,
                                           fmt::format("frame loss at {:g} %", pct)},
                                     nullptr);
            // A top this host cannot hold is lowered, and the walk starts over from it (step 0 again).
            if (!l.valid && step == 0 && lower_load(out, size, l, row.range.max_pps, lowerings, "frame loss"))
                continue;
            if (!l.valid) return mark_invalid(out, size, l);
            row.steps.push_back({load, pct, l.sent, l.received, 100.0 * l.loss_ratio});
            clean_in_a_row = l.received == l.sent ? clean_in_a_row + 1 : 0;
            ++step;
        }
        if (spec.thresholds.max_loss_pct && !row.steps.empty()) {
            const auto& top = row.steps.front();
            out.checks.push_back({fmt::format("loss at {} {}", spec::format_pps(top.load_pps), out.size_short(size)),
                                  "max-loss", top.loss_pct <= *spec.thresholds.max_loss_pct, top.loss_pct,
                                  *spec.thresholds.max_loss_pct, "%",
                                  fmt::format("{:.6f} % ({} of {})", top.loss_pct, top.sent - top.received, top.sent),
                                  fmt::format("{} %", *spec.thresholds.max_loss_pct)});
        }
        out.frame_loss.push_back(std::move(row));
    }
}

void run_back_to_back(TrialRunner& run, ProcedureResult& out) {
    const auto& spec = run.spec();
    for (unsigned size : spec.procedure.sizes) {
        if (run.interrupted() || out.invalid) return;
        BackToBackRow row;
        row.size = size;
        const auto range = load_range(run, size, out.notes);
        row.load_pps = range.max_pps;
        // The longest burst tried: --count, else the load for the trial duration (RFC 2544: 2 s).
        const double seconds = spec.procedure.final_trial_s ? *spec.procedure.final_trial_s : 2.0;
        row.longest_tried = spec.count ? *spec.count : static_cast<uint64_t>(row.load_pps * seconds);
        const uint64_t floor = std::max<uint64_t>(spec.tx_queue_total(), 1);
        const double width = spec.procedure.width.value_or(spec.procedure.default_width());
        unsigned lowerings = 0;
        bool lowered = false;
        // One trial of `n` frames: whole or not; nullopt when invalid (then `lowered` says
        // whether the load was lowered, else the procedure is marked invalid).
        const auto whole = [&](uint64_t n, const std::string& why) -> std::optional<bool> {
            TrialPlan plan{size, row.load_pps, seconds, n, why};
            if (row.load_pps > 0) plan.max_stall_s = std::max(kMinBurstHoleS, kBurstHoleShare * n / row.load_pps);
            const auto l = run_valid(run, plan, nullptr);
            if (!l.valid) {
                if (lower_load(out, size, l, row.load_pps, lowerings, "back-to-back"))
                    lowered = true;
                else
                    mark_invalid(out, size, l);
                return std::nullopt;
            }
            return l.received == l.sent && l.sent == n;
        };
        // One repetition: the longest burst that arrived whole, or nullopt when a trial was
        // invalid.
        const auto longest_whole = [&](const std::string& tag) -> std::optional<uint64_t> {
            const auto top = whole(row.longest_tried, "the longest burst, " + tag);
            if (!top) return std::nullopt;
            if (*top) {
                row.capped = true;
                return row.longest_tried;
            }
            uint64_t lo = 0, hi = row.longest_tried;  // lo arrived whole (0 trivially), hi did not
            while (hi - lo > std::max<uint64_t>(floor, static_cast<uint64_t>(width * hi))) {
                const uint64_t mid = std::max(floor, lo + (hi - lo) / 2);
                const auto ok = whole(mid, fmt::format("bisect {}..{}, {}", lo, hi, tag));
                if (!ok) return std::nullopt;
                (*ok ? lo : hi) = mid;
                if (mid == floor && !*ok) break;
            }
            return lo;
        };
        for (uint32_t rep = 0; rep < spec.procedure.repeat && !run.interrupted();) {
            const auto burst = longest_whole(fmt::format("repeat {} of {}", rep + 1, spec.procedure.repeat));
            if (burst) {
                row.bursts.push_back(*burst);
                ++rep;
                continue;
            }
            if (!lowered) return;
            lowered = false;  // every repetition again, at the lowered load
            rep = 0;
            row.bursts.clear();
            row.capped = false;
            if (!spec.count) row.longest_tried = static_cast<uint64_t>(row.load_pps * seconds);
        }
        if (row.bursts.empty()) return;
        row.min = *std::min_element(row.bursts.begin(), row.bursts.end());
        row.max = *std::max_element(row.bursts.begin(), row.bursts.end());
        row.mean = std::accumulate(row.bursts.begin(), row.bursts.end(), 0.0) / row.bursts.size();
        out.back_to_back.push_back(std::move(row));
    }
}

}  // namespace lr::procedures
