// Runs the trials of a procedure on an open session and judges whether each one is valid:
// the generator did its part (offered load within 0.1 % of the request, the trial not
// stretched by more than 1 %), the instrument dropped nothing itself, and no invariant broke.
// Only then is "sent minus received" the device's loss. Unsent frames were never sent, so
// they are not loss either (TRex and CSIT both shipped that bug).
#pragma once
#include <cstdint>
#include <cstdio>
#include <optional>
#include <string>
#include <vector>

#include "engine/session.h"
#include "result/result.h"

namespace lr::procedures {

struct TrialPlan {
    unsigned frame_size = 64;
    double load_pps = 0;     // 0: as fast as possible
    double duration_s = 1;
    std::optional<uint64_t> count;  // a fixed number of frames (back-to-back bursts, sweeps with --count)
    std::string why;         // why this trial: "initial", "bisect between ...", "repeat 3 of 20"
};

// What the report lists of every trial, so a user can audit a procedure.
struct TrialLog {
    unsigned index = 0;  // in the session, 0-based
    TrialPlan plan;
    double offered_pps = 0;
    double tx_seconds = 0;
    uint64_t sent = 0, received = 0;  // test frames the devices accepted; distinct ones that arrived
    uint64_t host_drops = 0;          // frames the instrument's own receive path dropped
    double loss_ratio = 0;            // (sent - received) / sent
    bool valid = true;
    std::string invalid_reason;
};

class TrialRunner {
public:
    // progress: one line per trial (nullptr: silent); sink: the trials' intervals and results
    // (exporters: JSON lines, CSV, metrics; nullptr: none).
    TrialRunner(engine::Session& s, std::FILE* progress, result::Sink* sink = nullptr)
        : session_(s), progress_(progress), sink_(sink) {}

    // Runs one trial. `result` (optional) receives the engine's full result.
    TrialLog run(const TrialPlan& p, result::TrialResult* result = nullptr);
    bool interrupted() const { return session_.interrupted(); }
    engine::Session& session() { return session_; }
    const std::vector<TrialLog>& log() const { return log_; }
    // The highest rate the generator reaches at `frame_size`: a short trial as fast as it can.
    double generator_ceiling(unsigned frame_size);

private:
    engine::Session& session_;
    std::FILE* progress_;
    result::Sink* sink_;
    std::vector<TrialLog> log_;
};

// The trial's validity (see above); "" when valid. host_drops: what the instrument's receive
// side dropped itself (missed by the NIC, no buffer, no socket, a full socket ring).
// rate_tolerance: the largest |offered - requested| / requested (--rate-tolerance);
// outage_policy: whether a link outage makes the trial invalid (--link-outage fail).
std::string invalid_reason(const TrialPlan& p, const result::TrialResult& r, uint64_t host_drops,
                           double rate_tolerance = 0.001, spec::LinkOutage outage_policy = spec::LinkOutage::fail);

}  // namespace lr::procedures
