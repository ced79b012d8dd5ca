// A session opens the backend and its ports once (DPDK's EAL once per process) and runs any
// number of trials on them. Each trial gets fresh counters and a fresh stop state, starts
// from drained, idle queues, re-writes frame templates only when the frame changed, drains,
// and returns its result. `linerate run` is a session of --trials trials (one by default);
// procedures run many.
#pragma once
#include <chrono>
#include <memory>

#include <nlohmann/json.hpp>

#include "backend/backend.h"
#include "engine/planner.h"
#include "engine/trial_control.h"
#include "result/result.h"
#include "result/sink.h"
#include "spec/run_spec.h"

namespace lr::engine {

class Session {
public:
    // Opens `be` for `spec` (validated). Throws lr::Error when a port cannot be opened; then
    // nothing is left open.
    Session(std::unique_ptr<backend::Backend> be, const spec::RunSpec& spec);
    ~Session();
    Session(const Session&) = delete;
    Session& operator=(const Session&) = delete;

    // Runs one trial with `t`'s values in place of the spec's. A trial after the session's
    // first starts no sooner than --settle after the previous one ended (its drain included):
    // the device under test rests, RFC 2544 section 23's "wait for the DUT to restabilize". A
    // trial that drained at once would otherwise follow the last within a few milliseconds,
    // before a policer's bucket refilled or a software device's backlog cleared, and measure
    // what the previous trial left behind. A signal ends the wait. Throws UsageError when `t`
    // does not fit the session (a frame larger than the session was opened for).
    // `why`: a procedure's reason for the trial, shown by the live views. With --capture, the
    // frames the queues kept are in the result the sinks get (TrialResult::captured: the pcap
    // sink writes them) and dropped from the one returned; over the session the queues keep at
    // most --capture-count frames.
    result::TrialResult run_trial(const spec::TrialSpec& t, result::Sink& sink, unsigned planned = 0,
                                  const std::string& why = {});
    // A controlled trial (engine/trial_control.h): `control` starts and stops its streams and
    // ends its TX phase; no rate is judged (streams run when the controller says), and the
    // trial's duration and count are not limits.
    result::TrialResult run_controlled_trial(TrialControl& control, result::Sink& sink);
    // Replaces the streams the next trials send (a controller's new configuration on the same
    // ports): checked as when the session opened (frames within the session's largest frame,
    // the ports' MTU, rates within the ports' line rate). Throws UsageError; the session is
    // unchanged then.
    void set_streams(std::vector<spec::StreamSpec> streams);
    // True once a signal asked the run to end: no further trial should start.
    bool interrupted() const;
    unsigned trials_run() const { return trials_; }

    const spec::RunSpec& spec() const { return spec_; }
    // The links' L1 bit rate in all: --line-rate, else the sum of the sending ports' link
    // speeds when each reports one; 0 when unknown.
    double line_rate_bps() const;
    // The most the sending ports carry, and where that comes from: --line-rate, else the
    // ports' link speeds (named), else the fastest standard Ethernet per port.
    spec::RateCeiling rate_ceiling() const;
    // `t`'s rate in packets/s for its frame size (0: as fast as possible). Throws UsageError
    // for a percentage without a known line rate, or a rate above it.
    // A stream mix: the sum of its paced streams' rates (0 when none is paced).
    double rate_pps(const spec::TrialSpec& t) const;
    // A trial's frame size in bytes (FCS included); frame size 0 is the stream mix: its mean
    // frame, the streams weighted by their parts of the load.
    double mean_frame_size(unsigned frame_size) const;
    // "64 B", "--size imix", "the mix of 3 streams": what a procedure's row measured.
    std::string size_label(unsigned frame_size) const;
    const std::vector<backend::PortInfo>& ports() const { return be_->ports(); }
    // A port's link down or up (Backend::set_link), by its index in ports().
    void set_link(unsigned port_index, bool up) { be_->set_link(port_index, up); }
    // A port's link now: 1 up, 0 down, -1 unknown. Between trials only (a trial's control
    // thread reads the ports then).
    int link_now(unsigned port_index) const { return be_->port_sample(port_index).link; }
    // Host, linerate and backend facts for the report's "environment".
    nlohmann::json environment() const;
    // What the backend's trials still need once the ports are open (Backend::capabilities_after_setup).
    std::vector<int> capabilities_after_setup() const { return be_->capabilities_after_setup(); }

private:
    void settle() const;  // waits out --settle since the last trial ended
    result::TrialResult run(const spec::RunSpec& s, result::Sink& sink, unsigned planned, const std::string& why,
                            TrialControl* control);

    spec::RunSpec spec_;
    std::unique_ptr<backend::Backend> be_;
    backend::SessionLayout layout_;
    CounterSlots slots_;
    uint32_t captured_ = 0;  // --capture: frames the queues kept so far, at most --capture-count
    unsigned opened_l3_ = 0;  // the largest IP packet the ports were opened for (their MTU checked)
    unsigned trials_ = 0;
    std::chrono::steady_clock::time_point last_trial_end_;
};

}  // namespace lr::engine
