#include "procedures/trial_runner.h"

#include <cmath>
#include <fmt/format.h>

#include "spec/rate.h"

namespace lr::procedures {


std::string invalid_reason(const TrialPlan& p, const result::TrialResult& r, uint64_t host_drops,
                           double rate_tolerance, spec::LinkOutage outage_policy) {
    if (r.interrupted) return "interrupted";
    if (!r.violations.empty()) return r.violations.front();
    // A link that went down says nothing about the device's throughput: the trial is repeated.
    if (!r.outages.empty() && outage_policy == spec::LinkOutage::fail) return result::outage_text(r.outages.front());
    if (r.tx.packets == 0) return "nothing was sent";
    if (p.load_pps > 0) {
        const double err = (r.rate.offered_pps - p.load_pps) / p.load_pps;
        if (std::abs(err) > rate_tolerance)
            return fmt::format("the generator offered {} for {} ({:+.3f} %, more than {:g} % off)",
                               spec::format_pps(r.rate.offered_pps), spec::format_pps(p.load_pps), 100 * err,
                               100 * rate_tolerance);
        if (r.rate.stretch_pct > std::max(1.0, 100 * rate_tolerance))
            return fmt::format("the trial took {:.1f} % longer than planned", r.rate.stretch_pct);
    }
    if (r.loss.egress_dropped)
        return fmt::format("this host's egress device dropped {} of the frames handed to it", r.loss.egress_dropped);
    if (host_drops) return fmt::format("the instrument's own receive path dropped {} frames", host_drops);
    if (r.rx.unique > r.tx.packets)
        return fmt::format("received {} distinct test frames, more than the {} sent", r.rx.unique, r.tx.packets);
    return {};
}

TrialLog TrialRunner::run(const TrialPlan& p, result::TrialResult* out) {
    spec::TrialSpec t;
    t.frame_size = p.frame_size;
    // A paced trial sends an exact number of frames (RFC 2544: a specific number of frames at
    // a specific rate), so the stretch shows whether the generator kept its schedule.
    t.count = p.count;
    if (!t.count && p.load_pps > 0)
        t.count = std::max<uint64_t>(std::llround(p.load_pps * p.duration_s), session_.spec().tx_queue_total());
    t.duration_s = t.count ? std::max(3600.0, 10 * p.duration_s) : p.duration_s;
    t.rate = p.load_pps > 0 ? spec::RateSpec{spec::RateSpec::Unit::pps, p.load_pps} : spec::RateSpec{};
    result::Sink quiet;
    auto r = session_.run_trial(t, sink_ ? *sink_ : quiet, 0, p.why);
    TrialLog l;
    l.index = r.index;
    l.plan = p;
    l.offered_pps = r.rate.offered_pps;
    l.tx_seconds = r.tx_seconds;
    l.sent = r.tx.packets;
    l.received = std::min(r.rx.unique, r.tx.packets);
    l.host_drops = r.loss.host_rx_dropped;
    l.loss_ratio = l.sent ? static_cast<double>(l.sent - l.received) / l.sent : 0;
    l.invalid_reason = invalid_reason(p, r, l.host_drops, session_.spec().procedure.rate_tolerance,
                                      session_.spec().thresholds.link_outage);
    l.valid = l.invalid_reason.empty();
    if (progress_) {
        fmt::print(progress_, "  trial {:>3}  {:>4}B  {:>14}  {:>6.2f}s  sent {:>11}  recv {:>11}  loss {:>9.5f} %  {}{}\n",
                   l.index + 1, p.frame_size, p.load_pps > 0 ? spec::format_pps(p.load_pps) : std::string("max"),
                   l.tx_seconds, l.sent, l.received, 100 * l.loss_ratio, p.why,
                   l.valid ? "" : fmt::format("  [invalid: {}]", l.invalid_reason));
        std::fflush(progress_);
    }
    log_.push_back(l);
    if (out) *out = std::move(r);
    return l;
}

double TrialRunner::generator_ceiling(unsigned frame_size) {
    const auto l = run({frame_size, 0, 1.0, std::nullopt, "measure the generator's ceiling"});
    return l.offered_pps;
}

}  // namespace lr::procedures
