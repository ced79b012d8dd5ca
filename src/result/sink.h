// Where results go while a session runs: the control thread calls a sink at the start of
// each trial, once per interval with the row it computed from its own snapshots, and when
// the trial has a result. Console, JSON and later exporters are sinks; none of them touches
// a worker's counters.
#pragma once
#include <string>
#include <vector>

#include "result/result.h"
#include "spec/run_spec.h"
#include "stats/snapshot.h"

namespace lr::result {

struct TrialStart {
    unsigned index = 0;  // 0-based
    unsigned of = 1;     // trials planned in the session (0 = not known in advance)
    const spec::RunSpec* spec = nullptr;  // the session's spec with this trial's values in place
    std::string why;                      // a procedure's reason for this trial ("bisect between ...")
};

class Sink {
public:
    virtual ~Sink() = default;
    virtual void trial_started(const TrialStart&) {}
    // Every interval, before interval(): the control thread's own snapshot of every queue's
    // counters (cumulative since the trial started) and the ports' (exporters read these).
    virtual void snapshot(const std::vector<stats::QueueId>&, const stats::Snapshot&) {}
    virtual void interval(const stats::IntervalRow&) {}
    // A mix of streams, every interval before interval(): each stream's counts so far.
    virtual void streams_live(const std::vector<StreamLive>&) {}
    // A controlled trial (engine/trial_control.h), every live period and once after the
    // workers ended: the counters as in snapshot(), and each stream's counts so far (as of
    // the workers' last answers; empty when the trial has no stream counts).
    virtual void live(const std::vector<stats::QueueId>&, const stats::Snapshot&, const std::vector<StreamLive>&) {}
    // linerate impair, every interval before interval(): each direction's counts so far.
    virtual void impair_live(const std::vector<ImpairLive>&) {}
    // linerate connect, every interval before interval(): each queue's counts so far.
    virtual void connect_live(const std::vector<ConnectLive>&) {}
    virtual void trial_finished(const TrialResult&) {}
};

// Fans every call out to several sinks, in order.
class SinkList final : public Sink {
public:
    void add(Sink& s) { sinks_.push_back(&s); }
    void trial_started(const TrialStart& t) override {
        for (auto* s : sinks_) s->trial_started(t);
    }
    void snapshot(const std::vector<stats::QueueId>& ids, const stats::Snapshot& snap) override {
        for (auto* s : sinks_) s->snapshot(ids, snap);
    }
    void interval(const stats::IntervalRow& r) override {
        for (auto* s : sinks_) s->interval(r);
    }
    void streams_live(const std::vector<StreamLive>& v) override {
        for (auto* s : sinks_) s->streams_live(v);
    }
    void live(const std::vector<stats::QueueId>& ids, const stats::Snapshot& snap,
              const std::vector<StreamLive>& v) override {
        for (auto* s : sinks_) s->live(ids, snap, v);
    }
    void impair_live(const std::vector<ImpairLive>& v) override {
        for (auto* s : sinks_) s->impair_live(v);
    }
    void connect_live(const std::vector<ConnectLive>& v) override {
        for (auto* s : sinks_) s->connect_live(v);
    }
    void trial_finished(const TrialResult& r) override {
        for (auto* s : sinks_) s->trial_finished(r);
    }

private:
    std::vector<Sink*> sinks_;
};

}  // namespace lr::result
