// Runs the trials of a procedure on an open session and judges whether each one is valid:
// the generator did its part (offered load within --rate-tolerance of the request: stalls it
// made up for within the catch-up window do not count against it), the instrument dropped
// nothing itself, and no invariant broke. Only then is "sent minus received" the device's
// loss. Unsent frames were never sent, so they are not loss either (TRex and CSIT both
// shipped that bug). A trial this host could not carry out at its load (the generator fell
// short, or its own receive or egress path dropped frames) is instrument-limited: the
// searches lower their ceiling rather than retry it (procedures/search.h).
#pragma once
#include <cstdint>
#include <cstdio>
#include <optional>
#include <string>
#include <vector>

#include "engine/session.h"
#include "result/procedure_result.h"
#include "result/result.h"

namespace lr::procedures {

// The plan and the log of a trial are plain data (result/procedure_result.h).
using result::invalid_kind_text;
using result::InvalidKind;
using result::TrialLog;
using result::TrialPlan;

// What the procedures run their trials on: one session's ports (SessionTrialRunner), or
// engines on several hosts driven by a controller (otg/controller_procedures.h). run() is the
// same for both: the trial, its judgement, its log line and its place in the log.
class TrialRunner {
public:
    // progress: one line per trial (nullptr: silent).
    explicit TrialRunner(std::FILE* progress) : progress_(progress) {}
    virtual ~TrialRunner() = default;
    TrialRunner(const TrialRunner&) = delete;
    TrialRunner& operator=(const TrialRunner&) = delete;

    // Runs one trial. `result` (optional) receives its full result.
    TrialLog run(const TrialPlan& p, result::TrialResult* result = nullptr);
    const std::vector<TrialLog>& log() const { return log_; }
    // What the generator can do at `frame_size` on these ports, with the receiver and
    // whatever the path under test costs this host running: its peak (a trial as fast as it
    // can) and the highest load it holds paced (a valid paced trial at it, below the peak).
    struct Capacity {
        double peak_pps = 0;
        double held_pps = 0;
        bool confirmed = false;  // a paced trial at held_pps was valid
    };
    Capacity generator_capacity(unsigned frame_size, double line_pps);

    // What the procedures read of the session (engine::Session's meanings).
    virtual bool interrupted() const = 0;
    virtual const spec::RunSpec& spec() const = 0;
    virtual double line_rate_bps() const = 0;
    virtual double rate_pps(const spec::TrialSpec& t) const = 0;
    virtual double mean_frame_size(unsigned frame_size) const = 0;
    virtual std::string size_label(unsigned frame_size) const = 0;

protected:
    // The trial itself, as engine::Session::run_trial runs it.
    virtual result::TrialResult trial(const spec::TrialSpec& t, const std::string& why) = 0;

private:
    std::FILE* progress_;
    std::vector<TrialLog> log_;
};

// The trials on one session's ports. sink: the trials' intervals and results (exporters: JSON
// lines, CSV, metrics; nullptr: none).
class SessionTrialRunner final : public TrialRunner {
public:
    SessionTrialRunner(engine::Session& s, std::FILE* progress, result::Sink* sink = nullptr)
        : TrialRunner(progress), session_(s), sink_(sink) {}
    engine::Session& session() { return session_; }
    bool interrupted() const override { return session_.interrupted(); }
    const spec::RunSpec& spec() const override { return session_.spec(); }
    double line_rate_bps() const override { return session_.line_rate_bps(); }
    double rate_pps(const spec::TrialSpec& t) const override { return session_.rate_pps(t); }
    double mean_frame_size(unsigned frame_size) const override { return session_.mean_frame_size(frame_size); }
    std::string size_label(unsigned frame_size) const override { return session_.size_label(frame_size); }

protected:
    result::TrialResult trial(const spec::TrialSpec& t, const std::string& why) override;

private:
    engine::Session& session_;
    result::Sink* sink_;
};

// The trial's validity (see above). host_drops: what the instrument's receive side dropped
// itself (missed by the NIC, no buffer, no socket, a full socket ring). rate_tolerance: the
// largest |offered - requested| / requested (--rate-tolerance); outage_policy: whether a link
// outage makes the trial invalid (--link-outage fail).
struct TrialJudgement {
    InvalidKind kind = InvalidKind::none;
    std::string invalid_reason;       // "" when valid
    bool valid() const { return kind == InvalidKind::none; }
    // The host could not carry the load (see above).
    bool instrument_limited() const {
        return kind == InvalidKind::generator || kind == InvalidKind::host_egress || kind == InvalidKind::host_rx;
    }
};
TrialJudgement judge_trial(const TrialPlan& p, const result::TrialResult& r, uint64_t host_drops,
                           double rate_tolerance = 0.001, spec::LinkOutage outage_policy = spec::LinkOutage::fail);

}  // namespace lr::procedures
