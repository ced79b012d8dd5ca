// The option rows of the procedures and of the thresholds. Command-line options and
// profile keys are the same rows, so a profile says whatever the command line can.
#include <cmath>

#include "spec/option_rows.h"

namespace lr::spec::option_rows {
namespace {

// A ratio given in percent: "0.5" (%), kept as 0.005.
double percent_ratio(const Values& v, std::string_view what) { return parse_percent(one(v), what) / 100.0; }

// "0,0.5": loss ratios in percent, one goal each.
std::vector<double> parse_goals(const std::string& list) {
    std::vector<double> out;
    size_t pos = 0;
    while (pos <= list.size()) {
        auto comma = list.find(',', pos);
        if (comma == std::string::npos) comma = list.size();
        const auto item = list.substr(pos, comma - pos);
        try {
            out.push_back(parse_percent(item, "--goals") / 100.0);
        } catch (const UsageError&) {
            throw_invalid("--goals", list,
                          fmt::format("goal \"{}\": expected a loss ratio in % between 0 and 100", item));
        }
        pos = comma + 1;
    }
    return out;
}

J opt_rate(const std::optional<RateSpec>& r) { return r ? J(r->str()) : J(nullptr); }

}  // namespace

#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmissing-field-initializers"
void add_procedure_rows(std::vector<OptionDef>& t, const RunSpec& ds) {
    const auto& dp = ds.procedure;
    const auto num = [](auto v) { return fmt::format("{:g}", double(v)); };
    // ---- Procedures --------------------------------------------------------------------
    t.push_back({.name = "sizes", .group = "Procedures", .value_name = "SIZES",
                 .help = "Frame sizes, one trial (or search) each: a list (64,128,1518), a range LO:HI:*F or LO:HI:+S "
                         "(64:1518:*2), rfc2544 (64 128 256 512 1024 1280 1518) or rfc2544+jumbo (and 9000)",
                 .default_text = "--size", .commands = kProc,
                 .apply = [](Draft& d, const Values& v) {
                     d.spec.procedure.sizes = parse_sizes(one(v), "--sizes");
                     d.spec.procedure.sizes_typed = one(v);
                 },
                 .show = [](const RunSpec& s, J& j) { j["sizes"] = s.procedure.sizes; }});
    t.push_back({.name = "search", .group = "Procedures", .value_name = "METHOD",
                 .help = "throughput: mlr (MLRsearch, RFC 9971: short trials first, full-length ones to decide) or "
                         "binary (RFC 2544 section 26.1, every trial full length)",
                 .default_text = dp.search, .choices = &search_choices(), .commands = kProc,
                 .apply = [](Draft& d, const Values& v) {
                     d.spec.procedure.search =
                         to_string(SearchMethod(parse_choice(search_choices(), one(v), "--search")));
                 },
                 .show = [](const RunSpec& s, J& j) { j["search"] = s.procedure.search; }});
    t.push_back({.name = "preset", .group = "Procedures", .value_name = "NAME",
                 .help = "Search goals: rfc2544 (0 loss, 60 s trials), csit (NDR 0 % and PDR 0.5 %, 1 s trials, 21 s "
                         "sum, 50 % exceed, 0.5 % width) or tst009 (ETSI: 0 loss, 60 s trials, 120 s sum, 50 % "
                         "exceed); the options below override its values",
                 .default_text = std::string(to_string(kDefaultPreset)), .choices = &preset_choices(),
                 .commands = kProc,
                 .apply = [](Draft& d, const Values& v) {
                     d.spec.procedure.preset = to_string(Preset(parse_choice(preset_choices(), one(v), "--preset")));
                 },
                 .show = [](const RunSpec& s, J& j) { j["preset"] = s.procedure.preset; }});
    t.push_back({.name = "goals", .group = "Procedures", .value_name = "PCTS",
                 .help = "Loss ratios in % to search for, sharing trials: 0 is the NDR, 0.5 a PDR (e.g. 0,0.5)",
                 .default_text = "the preset's", .commands = kProc,
                 .apply = [](Draft& d, const Values& v) { d.spec.procedure.goal_losses = parse_goals(one(v)); },
                 .show = [](const RunSpec& s, J& j) { j["goals"] = s.procedure.goal_losses; }});
    t.push_back({.name = "trial-duration", .group = "Procedures", .value_name = "TIME",
                 .help = "throughput: the final trial duration (every trial of a binary search); latency, frame-loss "
                         "and sweep: each trial's duration",
                 .default_text = "the preset's (sweep: --duration)", .commands = kProc,
                 .apply = [](Draft& d, const Values& v) {
                     d.spec.procedure.final_trial_s = parse_duration(one(v), "--trial-duration");
                 },
                 .show = [](const RunSpec& s, J& j) { j["trial_duration_s"] = opt(s.procedure.final_trial_s); }});
    t.push_back({.name = "initial-duration", .group = "Procedures", .value_name = "TIME",
                 .help = "MLRsearch: the shortest trials, used while narrowing down",
                 .default_text = format_duration(kInitialTrialS),
                 .commands = kProc,
                 .apply = [](Draft& d, const Values& v) {
                     d.spec.procedure.initial_trial_s = parse_duration(one(v), "--initial-duration");
                 },
                 .show = [](const RunSpec& s, J& j) { j["initial_duration_s"] = opt(s.procedure.initial_trial_s); }});
    t.push_back({.name = "duration-sum", .group = "Procedures", .value_name = "TIME",
                 .help = "MLRsearch: full-length trial time at a load needed to decide it", .default_text = "the preset's",
                 .commands = kProc,
                 .apply = [](Draft& d, const Values& v) {
                     d.spec.procedure.duration_sum_s = parse_duration(one(v), "--duration-sum");
                 },
                 .show = [](const RunSpec& s, J& j) { j["duration_sum_s"] = opt(s.procedure.duration_sum_s); }});
    t.push_back({.name = "exceed-ratio", .group = "Procedures", .value_name = "PCT",
                 .help = "MLRsearch: the share of trial time at a load that may lose more than the goal while the "
                         "load still counts as a lower bound",
                 .default_text = "the preset's", .commands = kProc,
                 .apply = [](Draft& d, const Values& v) {
                     d.spec.procedure.exceed_ratio = percent_ratio(v, "--exceed-ratio");
                 },
                 .show = [](const RunSpec& s, J& j) { j["exceed_ratio"] = opt(s.procedure.exceed_ratio); }});
    t.push_back({.name = "width", .group = "Procedures", .value_name = "PCT",
                 .help = "Searches end when the bounds are this close, in % of the upper bound",
                 .default_text =
                     fmt::format("{} (back-to-back: {})", num(kSearchWidth * 100), num(kBackToBackWidth * 100)),
                 .commands = kProc,
                 .apply = [](Draft& d, const Values& v) {
                     const double w = percent_ratio(v, "--width");
                     if (w <= 0 || w >= 1) throw_invalid("--width", one(v), "between 0 and 100 %, exclusive");
                     d.spec.procedure.width = w;
                 },
                 .show = [](const RunSpec& s, J& j) { j["width"] = opt(s.procedure.width); }});
    t.push_back({.name = "max-rate", .group = "Procedures", .value_name = "RATE",
                 .help = "The highest load a search or frame-loss run offers (max: the line rate, else what the "
                         "generator reaches, measured first)",
                 .default_text = dp.max_rate.str(), .commands = kProc,
                 .apply = [](Draft& d, const Values& v) { d.spec.procedure.max_rate = parse_rate(one(v), "--max-rate"); },
                 .show = [](const RunSpec& s, J& j) { j["max_rate"] = s.procedure.max_rate.str(); }});
    t.push_back({.name = "min-rate", .group = "Procedures", .value_name = "RATE",
                 .help = "The lowest load a search offers", .default_text = "a thousandth of --max-rate",
                 .commands = kProc,
                 .apply = [](Draft& d, const Values& v) {
                     d.spec.procedure.min_rate = parse_rate(one(v), "--min-rate");
                     if (!d.spec.procedure.min_rate.limited())
                         throw UsageError("invalid --min-rate \"max\": give a rate");
                 },
                 .show = [](const RunSpec& s, J& j) {
                     j["min_rate"] = s.procedure.min_rate.limited() ? J(s.procedure.min_rate.str()) : J(nullptr);
                 }});
    t.push_back({.name = "max-trials", .group = "Procedures", .value_name = "N",
                 .help = "A search gives up (and says so) after this many trials per frame size",
                 .default_text = num(dp.max_trials),
                 .commands = kProc,
                 .apply = [](Draft& d, const Values& v) {
                     d.spec.procedure.max_trials = static_cast<uint32_t>(parse_uint(one(v), "--max-trials", 1, 100000));
                 },
                 .show = [](const RunSpec& s, J& j) { j["max_trials"] = s.procedure.max_trials; }});
    t.push_back({.name = "load", .group = "Procedures", .value_name = "PCT",
                 .help = "latency: the load, in % of the throughput found first at each size (a --rate instead "
                         "skips the search)",
                 .default_text = num(dp.latency_load * 100), .commands = kProc,
                 .apply = [](Draft& d, const Values& v) {
                     const double l = parse_percent(one(v), "--load");
                     if (l <= 0) throw_invalid("--load", one(v), "a load above 0 %");
                     d.spec.procedure.latency_load = l / 100.0;
                 },
                 .show = [](const RunSpec& s, J& j) { j["load_pct"] = s.procedure.latency_load * 100.0; }});
    t.push_back({.name = "repeat", .group = "Procedures", .value_name = "N",
                 .help = "latency and back-to-back: trials per frame size (RFC 2544 asks for 20 and 50)",
                 .default_text = num(dp.repeat), .commands = kProc,
                 .apply = [](Draft& d, const Values& v) {
                     d.spec.procedure.repeat = static_cast<uint32_t>(parse_uint(one(v), "--repeat", 1, 10000));
                 },
                 .show = [](const RunSpec& s, J& j) { j["repeat"] = s.procedure.repeat; }});
    t.push_back({.name = "step", .group = "Procedures", .value_name = "PCT",
                 .help = "frame-loss: each trial's load is this many % of the highest load below the previous one",
                 .default_text = num(dp.step_pct), .commands = kProc,
                 .apply = [](Draft& d, const Values& v) {
                     const double st = parse_percent(one(v), "--step");
                     if (st <= 0) throw_invalid("--step", one(v), "a step above 0 %");
                     d.spec.procedure.step_pct = st;
                 },
                 .show = [](const RunSpec& s, J& j) { j["step_pct"] = s.procedure.step_pct; }});

    t.push_back({.name = "rate-tolerance", .group = "Procedures", .value_name = "PCT",
                 .help = "A trial counts only if the generator offered its load this close (stalls it made up for "
                         "within --catch-up do not count against it); a load it cannot hold is generator-limited and "
                         "lowers the procedure's maximum. Loosen it only on a host that cannot pace, and say so",
                 .default_text = num(dp.rate_tolerance * 100), .commands = kProc,
                 .apply = [](Draft& d, const Values& v) {
                     const double t = percent_ratio(v, "--rate-tolerance");
                     if (t <= 0) throw_invalid("--rate-tolerance", one(v), "above 0 %");
                     d.spec.procedure.rate_tolerance = t;
                 },
                 .show = [](const RunSpec& s, J& j) { j["rate_tolerance_pct"] = s.procedure.rate_tolerance * 100; }});

    // ---- Thresholds ----------------------------------------------------------------------
    t.push_back({.name = "max-loss", .group = "Thresholds", .value_name = "PCT",
                 .help = "Fail (exit 1) when the loss exceeds this share of what was sent (needs --tx and --rx in one "
                         "run)",
                 .apply = [](Draft& d, const Values& v) {
                     d.spec.thresholds.max_loss_pct = parse_percent(one(v), "--max-loss");
                 },
                 .show = [](const RunSpec& s, J& j) { j["max_loss_pct"] = opt(s.thresholds.max_loss_pct); }});
    t.push_back({.name = "min-throughput", .group = "Thresholds", .value_name = "RATE",
                 .help = "Fail when less arrives than this (run, sweep: the received rate; throughput: the "
                         "throughput found), at every frame size; in any --rate unit",
                 .apply = [](Draft& d, const Values& v) {
                     d.spec.thresholds.min_throughput = parse_rate(one(v), "--min-throughput");
                     if (!d.spec.thresholds.min_throughput->limited())
                         throw UsageError("invalid --min-throughput \"max\": give a rate (100% is the line rate)");
                 },
                 .show = [](const RunSpec& s, J& j) { j["min_throughput"] = opt_rate(s.thresholds.min_throughput); }});
    t.push_back({.name = "max-latency", .group = "Thresholds", .value_name = "TIME",
                 .help = "Fail when any frame's latency exceeds this (e.g. 100us)",
                 .apply = [](Draft& d, const Values& v) {
                     d.spec.thresholds.max_latency_s = parse_duration(one(v), "--max-latency");
                 },
                 .show = [](const RunSpec& s, J& j) { j["max_latency_s"] = opt(s.thresholds.max_latency_s); }});
    t.push_back({.name = "max-latency-p99", .group = "Thresholds", .value_name = "TIME",
                 .help = "Fail when the 99th percentile of latency exceeds this",
                 .apply = [](Draft& d, const Values& v) {
                     d.spec.thresholds.max_latency_p99_s = parse_duration(one(v), "--max-latency-p99");
                 },
                 .show = [](const RunSpec& s, J& j) { j["max_latency_p99_s"] = opt(s.thresholds.max_latency_p99_s); }});
    t.push_back({.name = "max-jitter", .group = "Thresholds", .value_name = "TIME",
                 .help = "Fail when a stream's jitter (RFC 3550) exceeds this",
                 .apply = [](Draft& d, const Values& v) {
                     d.spec.thresholds.max_jitter_s = parse_duration(one(v), "--max-jitter");
                 },
                 .show = [](const RunSpec& s, J& j) { j["max_jitter_s"] = opt(s.thresholds.max_jitter_s); }});
    t.push_back({.name = "max-rate-error", .group = "Thresholds", .value_name = "PCT",
                 .help = "Fail when the offered rate is off the requested by more than this",
                 .apply = [](Draft& d, const Values& v) {
                     d.spec.thresholds.max_rate_error_pct = parse_percent(one(v), "--max-rate-error");
                 },
                 .show = [](const RunSpec& s, J& j) { j["max_rate_error_pct"] = opt(s.thresholds.max_rate_error_pct); }});
    t.push_back({.name = "max-invalid-trials", .group = "Thresholds", .value_name = "N",
                 .help = "Procedures: fail when more trials than this were invalid (the generator fell short, this "
                         "host dropped frames, a link went down), even though they were repeated or left out; "
                         "check uses 0 unless the profile sets it",
                 .commands = kProc,
                 .apply = [](Draft& d, const Values& v) {
                     d.spec.thresholds.max_invalid_trials = parse_uint(one(v), "--max-invalid-trials", 0, 1000000);
                 },
                 .show = [](const RunSpec& s, J& j) { j["max_invalid_trials"] = opt(s.thresholds.max_invalid_trials); }});
    t.push_back({.name = "link-outage", .group = "Thresholds", .value_name = "POLICY",
                 .help = "A port's link going down during a trial: fail (the trial fails, naming the port, when and "
                         "for how long) or tolerate (recorded and reported, judged by the other thresholds only)",
                 .default_text = std::string(to_string(ds.thresholds.link_outage)), .choices = &link_outage_choices(),
                 .apply = [](Draft& d, const Values& v) {
                     d.spec.thresholds.link_outage =
                         LinkOutage(parse_choice(link_outage_choices(), one(v), "--link-outage"));
                 },
                 .show = [](const RunSpec& s, J& j) { j["link_outage"] = to_string(s.thresholds.link_outage); }});
}
#pragma GCC diagnostic pop

}  // namespace lr::spec::option_rows
