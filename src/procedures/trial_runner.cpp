#include "procedures/trial_runner.h"

#include <cmath>
#include <fmt/format.h>

#include "procedures/search.h"
#include "spec/rate.h"

namespace lr::procedures {

TrialJudgement judge_trial(const TrialPlan& p, const result::TrialResult& r, uint64_t host_drops,
                           double rate_tolerance, spec::LinkOutage outage_policy) {
    using K = InvalidKind;
    if (r.interrupted) return {K::interrupted, "interrupted"};
    if (!r.violations.empty()) return {K::invariant, r.violations.front()};
    // A link that went down says nothing about the device's throughput: the trial is repeated.
    if (!r.outages.empty() && outage_policy == spec::LinkOutage::fail)
        return {K::link, result::outage_text(r.outages.front())};
    if (r.tx.packets == 0) return {K::nothing_sent, "nothing was sent"};
    if (p.load_pps > 0) {
        const double err = (r.rate.offered_pps - p.load_pps) / p.load_pps;
        if (std::abs(err) > rate_tolerance)
            return {K::generator,
                    fmt::format("the generator offered {} for {} ({:+.3f} %, more than {:g} % off: it gave up {} "
                                "departure slots, {} stalls, the longest {})",
                                spec::format_pps(r.rate.offered_pps), spec::format_pps(p.load_pps), 100 * err,
                                100 * rate_tolerance, r.rate.skipped, r.rate.stalls,
                                spec::format_seconds(r.rate.longest_stall_s))};
    }
    if (p.max_stall_s > 0 && r.rate.longest_stall_s > p.max_stall_s)
        return {K::stalled,
                fmt::format("the sender stalled {} inside a burst of {} frames that lasts {} at {} (at most {} "
                            "allowed; it waited {} for a CPU in all): its frames were not back to back (a sender needs a core "
                            "no other busy task runs on)",
                            spec::format_seconds(r.rate.longest_stall_s), r.tx.packets,
                            spec::format_seconds(p.load_pps > 0 ? r.tx.packets / p.load_pps : r.tx_seconds),
                            spec::format_pps(p.load_pps), spec::format_seconds(p.max_stall_s),
                            spec::format_seconds(r.tx_cpu_wait.longest_s))};
    if (r.loss.egress_dropped)
        return {K::host_egress,
                fmt::format("this host's egress device dropped {} of the frames handed to it", r.loss.egress_dropped)};
    if (host_drops)
        return {K::host_rx, fmt::format("the instrument's own receive path dropped {} frames", host_drops)};
    if (r.rx.unique > r.tx.packets)
        return {K::invariant,
                fmt::format("received {} distinct test frames, more than the {} sent", r.rx.unique, r.tx.packets)};
    return {};
}

TrialLog TrialRunner::run(const TrialPlan& p, result::TrialResult* out) {
    spec::TrialSpec t;
    t.frame_size = p.frame_size;
    // A paced trial sends an exact number of frames (RFC 2544: a specific number of frames at
    // a specific rate), so the stretch shows whether the generator kept its schedule.
    t.count = p.count;
    if (!t.count && p.load_pps > 0)
        t.count = std::max<uint64_t>(std::llround(p.load_pps * p.duration_s), spec().tx_queue_total());
    t.duration_s = t.count ? std::max(3600.0, 10 * p.duration_s) : p.duration_s;
    t.rate = p.load_pps > 0 ? spec::RateSpec{spec::RateSpec::Unit::pps, p.load_pps} : spec::RateSpec{};
    auto r = trial(t, p.why);
    TrialLog l;
    l.index = r.index;
    l.plan = p;
    l.offered_pps = r.rate.offered_pps;
    l.tx_seconds = r.tx_seconds;
    l.sent = r.tx.packets;
    l.received = std::min(r.rx.unique, r.tx.packets);
    l.host_drops = r.loss.host_rx_dropped;
    l.loss_ratio = l.sent ? static_cast<double>(l.sent - l.received) / l.sent : 0;
    l.stalls = r.rate.stalls;
    l.longest_stall_s = r.rate.longest_stall_s;
    l.skipped = r.rate.skipped;
    l.sender_cpu_wait_s = r.tx_cpu_wait.longest_s;
    const auto j = judge_trial(p, r, l.host_drops, spec().procedure.rate_tolerance, spec().thresholds.link_outage);
    l.invalid_reason = j.invalid_reason;
    l.invalid_kind = j.kind;
    l.instrument_limited = j.instrument_limited();
    l.valid = j.valid();
    if (progress_) {
        fmt::print(progress_, "  trial {:>3}  {:>5}  {:>14}  {:>6.2f}s  sent {:>11}  recv {:>11}  loss {:>9.5f} %  {}{}\n",
                   l.index + 1, p.frame_size ? fmt::format("{}B", p.frame_size) : std::string("mix"), p.load_pps > 0 ? spec::format_pps(p.load_pps) : std::string("max"),
                   l.tx_seconds, l.sent, l.received, 100 * l.loss_ratio, p.why,
                   l.valid                           ? ""
                   : p.probe && l.instrument_limited ? fmt::format("  [not held: {}]", l.invalid_reason)
                                                     : fmt::format("  [invalid: {}]", l.invalid_reason));
        std::fflush(progress_);
    }
    log_.push_back(l);
    if (out) *out = std::move(r);
    return l;
}

result::TrialResult SessionTrialRunner::trial(const spec::TrialSpec& t, const std::string& why) {
    result::Sink quiet;
    return session_.run_trial(t, sink_ ? *sink_ : quiet, 0, why);
}

TrialRunner::Capacity TrialRunner::generator_capacity(unsigned frame_size, double line_pps) {
    constexpr double kTrialS = 1.0;      // each capacity trial
    constexpr double kFirstTry = 0.95;   // the first paced try, below the peak (pacing costs a little)
    constexpr unsigned kPacedTries = 4;  // paced tries, each lower, before the searches take over
    Capacity c;
    c.peak_pps =
        run({frame_size, 0, kTrialS, std::nullopt, "the generator's peak: as fast as it can", true}).offered_pps;
    // A generator that reaches the line rate is tried paced at the line rate itself.
    double load = line_pps > 0 && c.peak_pps >= 0.999 * line_pps ? line_pps : kFirstTry * c.peak_pps;
    for (unsigned i = 0; i < kPacedTries && load > 0 && !interrupted(); ++i) {
        const auto l = run({frame_size, load, kTrialS, std::nullopt,
                            fmt::format("does the generator hold {} paced?", spec::format_pps(load)), true});
        if (l.valid) {
            c.held_pps = load;
            c.confirmed = true;
            return c;
        }
        if (l.instrument_limited) load = kLimitedBackoff * std::min(load, l.offered_pps > 0 ? l.offered_pps : load);
    }
    c.held_pps = load;  // unconfirmed: a search lowers it further if it must
    return c;
}

}  // namespace lr::procedures
