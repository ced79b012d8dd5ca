#include "result/checks.h"

#include <algorithm>
#include <fmt/format.h>

#include "spec/rate.h"

namespace lr::result {
namespace {

Check at_most(std::string name, std::string option, double measured, double limit, std::string unit,
              std::string measured_text, std::string limit_text) {
    return Check{std::move(name), std::move(option), measured <= limit, measured, limit, std::move(unit),
                 std::move(measured_text), std::move(limit_text)};
}

Check unmeasured(std::string name, std::string option, double limit, std::string unit, std::string limit_text,
                 const char* why) {
    return Check{std::move(name), std::move(option), false, 0, limit, std::move(unit), why, std::move(limit_text)};
}

}  // namespace

std::vector<Check> trial_checks(const spec::Thresholds& th, const TrialResult& r, double line_rate_bps,
                                const std::string& label) {
    std::vector<Check> out;
    const auto named = [&](const char* what) { return label.empty() ? std::string(what) : fmt::format("{} {}", what, label); };
    if (th.max_loss_pct) {
        // The loss of the path under test: frames this host dropped itself (its egress device,
        // its receive path) are counted apart and named, never blamed on the path.
        const uint64_t host = r.loss.host_rx_dropped + r.loss.egress_dropped;
        const uint64_t path = r.lost > host ? r.lost - host : 0;
        const double pct = r.tx.packets ? 100.0 * path / r.tx.packets : 0;
        out.push_back(at_most(named("loss"), "max-loss", pct, *th.max_loss_pct, "%",
                              fmt::format("{:.6f} % ({} of {}{})", pct, path, r.tx.packets,
                                          host ? fmt::format("; {} more dropped by this host", host) : ""),
                              fmt::format("{} %", *th.max_loss_pct)));
    }
    if (th.min_throughput) {
        const double pps = r.tx_seconds > 0 ? r.rx.unique / r.tx_seconds : 0;
        // A mix's rates in bits count its mean frame, as sent.
        const double bytes = r.trial.frame_size || !r.tx.packets
                                 ? r.trial.frame_size
                                 : static_cast<double>(r.tx.bytes) / static_cast<double>(r.tx.packets);
        auto c = throughput_check(*th.min_throughput, pps, bytes, line_rate_bps, label);
        c.name = named("received rate");
        out.push_back(std::move(c));
    }
    const auto s = summarize(r.latency);
    // Latency max and p99: the same check on a different statistic.
    const auto latency = [&](const std::optional<double>& limit, const char* name, const char* option, uint64_t ns) {
        if (!limit) return;
        if (s.count == 0)
            out.push_back(unmeasured(named(name), option, *limit, "s", spec::format_seconds(*limit),
                                     "not measured (no timestamped frame arrived)"));
        else
            out.push_back(at_most(named(name), option, ns * 1e-9, *limit, "s", spec::format_seconds(ns * 1e-9), spec::format_seconds(*limit)));
    };
    latency(th.max_latency_s, "latency max", "max-latency", s.max);
    latency(th.max_latency_p99_s, "latency p99", "max-latency-p99", s.p99);
    if (th.max_jitter_s) {
        double worst = -1;
        for (const auto& st : r.flows)
            if (st.received > 1) worst = std::max(worst, st.jitter_ns * 1e-9);
        if (worst < 0)
            out.push_back(unmeasured(named("jitter"), "max-jitter", *th.max_jitter_s, "s", spec::format_seconds(*th.max_jitter_s),
                                     "not measured (no stream received two frames)"));
        else
            out.push_back(at_most(named("jitter"), "max-jitter", worst, *th.max_jitter_s, "s", spec::format_seconds(worst),
                                  spec::format_seconds(*th.max_jitter_s)));
    }
    if (th.max_rate_error_pct && r.rate.requested_pps > 0) {
        const double e = std::abs(r.rate.error_pct);
        out.push_back(at_most(named("rate error"), "max-rate-error", e, *th.max_rate_error_pct, "%",
                              fmt::format("{:.3f} % (offered {} of {})", r.rate.error_pct,
                                          spec::format_pps(r.rate.offered_pps), spec::format_pps(r.rate.requested_pps)),
                              fmt::format("{} %", *th.max_rate_error_pct)));
    }
    if (th.link_outage == spec::LinkOutage::fail && !r.outages.empty()) {
        // Every outage fails the trial; the first one is named in the check's text.
        double down = 0;
        for (const auto& o : r.outages) down += o.seconds;
        auto text = outage_text(r.outages.front());
        if (r.outages.size() > 1) text += fmt::format(" (and {} more outages)", r.outages.size() - 1);
        out.push_back(Check{named("link"), "link-outage", false, down, 0, "s", std::move(text), "fail"});
    }
    return out;
}

Check throughput_check(const spec::RateSpec& min, double found_pps, double frame_size, double line_rate_bps,
                       const std::string& label) {
    Check c;
    c.name = label.empty() ? "throughput" : fmt::format("throughput {}", label);
    c.option = "min-throughput";
    c.unit = "pps";
    c.measured = found_pps;
    c.measured_text = spec::describe_rate(found_pps, frame_size, line_rate_bps);
    try {
        c.threshold = spec::to_pps(min, frame_size, line_rate_bps);
        c.threshold_text = min.unit == spec::RateSpec::Unit::pps
                               ? min.str()
                               : fmt::format("{} = {}", min.str(), spec::format_pps(c.threshold));
        c.pass = found_pps >= c.threshold;
    } catch (const std::exception& e) {
        c.threshold_text = min.str();
        c.measured_text += fmt::format(" (threshold unusable: {})", e.what());
        c.pass = false;
    }
    return c;
}

std::string first_failure(const std::vector<Check>& checks) {
    for (const auto& c : checks)
        if (!c.pass)
            return fmt::format("{}: {} (threshold --{} {})", c.name, c.measured_text, c.option, c.threshold_text);
    return {};
}

bool all_pass(const std::vector<Check>& checks) {
    return std::all_of(checks.begin(), checks.end(), [](const Check& c) { return c.pass; });
}

}  // namespace lr::result
