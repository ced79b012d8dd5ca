#include "engine/session.h"

#include <algorithm>
#include <fmt/format.h>
#include <sys/utsname.h>
#include <thread>

#include "engine/controller.h"
#include "engine/interrupt.h"
#include "engine/replay_load.h"
#include "spec/stream_rates.h"
#include "stats/tsc_clock.h"
#include "util/error.h"
#include "util/privileges.h"

namespace lr::engine {

Session::Session(std::unique_ptr<backend::Backend> be, const spec::RunSpec& spec)
    : spec_(spec), be_(std::move(be)), layout_(plan_layout(spec_)), slots_(plan_counters(layout_)) {
    clear_interrupt();
    load_replays(spec_);  // a capture's bad record is refused before any port is touched
    spec_.validate();
    try {
        be_->open(spec_, layout_);
        opened_l3_ = spec_.largest_packet().l3;
        // The ports' line rate is known from here: a rate above it is refused before anything is sent.
        spec_.check_rates(rate_ceiling(), true);
        // A procedure scales the mix by one load: the streams' rates become their shares of it.
        if (spec_.procedure.kind != spec::Procedure::run) spec::rates_to_shares(spec_, line_rate_bps());
    } catch (...) {
        be_->close();
        throw;
    }
    stats::tsc_rate();  // calibrate the workers' burst clock (~20 ms) before any of them starts
}

Session::~Session() { be_->close(); }

bool Session::interrupted() const { return interrupt_requested(); }

void Session::settle() const {
    using namespace std::chrono;
    const auto until = last_trial_end_ + duration_cast<steady_clock::duration>(duration<double>(spec_.settle_s));
    constexpr auto kStep = milliseconds(10);  // how soon a signal ends the wait
    for (auto now = steady_clock::now(); now < until && !interrupted(); now = steady_clock::now())
        std::this_thread::sleep_for(std::min<steady_clock::duration>(until - now, kStep));
}

result::TrialResult Session::run_trial(const spec::TrialSpec& t, result::Sink& sink, unsigned planned,
                                       const std::string& why) {
    if (t.frame_size > spec_.session_max_frame())
        throw UsageError(fmt::format("a {}-byte frame is larger than this session was opened for ({} bytes)",
                                     t.frame_size, spec_.session_max_frame()));
    spec::RunSpec s = spec_.with_trial(t);
    s.validate();
    s.line_rate_bps = line_rate_bps();
    s.rate_pps = rate_pps(t);
    s.capture_remaining = spec_.capture_path.empty() ? 0 : spec_.capture_count - captured_;
    return run(s, sink, planned, why, nullptr);
}

result::TrialResult Session::run_controlled_trial(TrialControl& control, result::Sink& sink) {
    spec::RunSpec s = spec_;
    s.line_rate_bps = line_rate_bps();
    s.rate_pps = 0;  // each stream keeps its own rate; the trial as a whole is not judged on one
    s.count.reset();
    s.capture_remaining = spec_.capture_path.empty() ? 0 : spec_.capture_count;  // each trial its own capture
    return run(s, sink, 0, {}, &control);
}

void Session::set_streams(std::vector<spec::StreamSpec> streams) {
    spec::RunSpec s = spec_;
    s.streams = std::move(streams);
    load_replays(s);
    s.validate();
    if (s.session_max_frame() > spec_.session_max_frame() || s.largest_packet().l3 > opened_l3_)
        throw UsageError(fmt::format("a {}-byte frame is larger than this session was opened for ({} bytes)",
                                     s.session_max_frame(), spec_.session_max_frame()));
    if (const auto why = be_->cannot_run(s); !why.empty()) throw UsageError(why);
    s.check_rates(rate_ceiling(), true);
    spec_ = std::move(s);
}

result::TrialResult Session::run(const spec::RunSpec& s, result::Sink& sink, unsigned planned, const std::string& why,
                                 TrialControl* control) {
    spec::RunSpec spec = s;
    if (trials_ > 0) settle();
    sink.trial_started({trials_, planned, &spec, why});
    auto r = engine::run_trial(*be_, spec, layout_, slots_, trials_, sink, control);
    // Each queue kept up to what remained: the file takes the first of them, by time.
    if (!control) captured_ += static_cast<uint32_t>(std::min<size_t>(r.captured.size(), spec.capture_remaining));
    ++trials_;
    last_trial_end_ = std::chrono::steady_clock::now();
    sink.trial_finished(r);
    r.captured.clear();  // written by the sinks; the result kept for the report does not carry them
    r.captured.shrink_to_fit();
    return r;
}

double Session::rate_pps(const spec::TrialSpec& t) const {
    if (spec_.single_fixed_stream()) return spec::to_pps(t.rate, t.frame_size, line_rate_bps());
    auto s = spec_.with_trial(t);
    return spec::total_pps(spec::stream_rates(s, line_rate_bps()));
}

double Session::mean_frame_size(unsigned frame_size) const {
    if (frame_size) return frame_size;
    auto s = spec_;
    s.rate = spec::RateSpec{};  // the weights alone (every stream shares the load after rates_to_shares)
    s.count.reset();
    return spec::mix_mean_size(spec::stream_rates(s, line_rate_bps()));
}

std::string Session::size_label(unsigned frame_size) const {
    if (frame_size) return fmt::format("{} B", frame_size);
    if (spec_.streams.empty()) return fmt::format("--size {}", spec_.size.str());
    return fmt::format("the mix of {} streams", spec_.streams.size());
}

double Session::line_rate_bps() const {
    if (spec_.line_rate_bps > 0) return spec_.line_rate_bps;
    double bps = 0;
    for (const auto& pq : spec_.tx) {
        const auto it = std::find_if(be_->ports().begin(), be_->ports().end(),
                                     [&](const backend::PortInfo& p) { return p.name == pq.port; });
        if (it == be_->ports().end() || it->link_speed_mbps == 0) return 0;
        bps += it->link_speed_mbps * 1e6;
    }
    return bps;
}

spec::RateCeiling Session::rate_ceiling() const {
    if (spec_.line_rate_bps > 0 || line_rate_bps() <= 0)
        return spec::spec_ceiling(spec_.line_rate_bps, spec_.tx.size());
    std::string ports;
    for (size_t i = 0; i < spec_.tx.size(); ++i) {
        const auto& name = spec_.tx[i].port;
        const auto it = std::find_if(be_->ports().begin(), be_->ports().end(),
                                     [&](const backend::PortInfo& p) { return p.name == name; });
        ports += fmt::format("{}{}", i == 0 ? "" : i + 1 == spec_.tx.size() ? " and " : ", ", name);
        if (spec_.tx.size() > 1) ports += fmt::format(" ({})", spec::format_bps(it->link_speed_mbps * 1e6));
    }
    const double bps = line_rate_bps();
    return {bps,
            fmt::format("the {} line rate of {} {} ({} link speed{})", spec::format_bps(bps),
                        spec_.tx.size() > 1 ? "ports" : "port", ports, spec_.tx.size() > 1 ? "their" : "its",
                        spec_.tx.size() > 1 ? "s" : ""),
            true};
}

nlohmann::json Session::environment() const {
    utsname u{};
    uname(&u);
    nlohmann::json env = {{"linerate_version", LINERATE_VERSION},
                          {"kernel", std::string(u.sysname) + " " + u.release},
                          {"machine", u.machine},
                          {"hostname", u.nodename},
                          {"cpus_online", std::thread::hardware_concurrency()}};
    env.update(be_->environment());
    const auto caps = util::capability_record();
    if (caps.dropped)
        env["capabilities"] = {{"before_setup_done", caps.before}, {"after_setup", caps.after}};
    return env;
}

}  // namespace lr::engine
