// The engine room of `linerate serve`: one OTG configuration at a time, turned into a session
// on the configured ports (engine::Session), and its flows' traffic as controlled trials
// (engine::TrialControl): started, paused, resumed and stopped flow by flow while the
// session's control thread measures them. The HTTP layer calls it from its own threads; it
// never touches a worker or a counter: it reads the control thread's live views (Sink::live)
// and the trials' results, and hands commands to the trial through its gates.
//
// Traffic: a start with no trial running begins one, with the named flows (or all) open and
// the others held; later starts, pauses and stops act on that trial's flows. A flow with a
// count (fixed_packets, fixed_seconds, bursts) stops by itself once every frame it sent has
// arrived or its drain window passed. When no flow is started or paused the trial ends and
// drains; its result gives each flow's final numbers, which the metrics show until the flow
// starts again. A stop returns once the flows it stopped have drained, so the counters read
// right after it are final. A configuration is refused while traffic runs.
#pragma once
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <map>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "engine/session.h"
#include "engine/trial_control.h"
#include "otg/config.h"
#include "otg/flow_numbers.h"
#include "otg/otg_service.h"
#include "result/sink.h"
#include "spec/run_spec.h"
#include "stats/capture.h"

namespace lr::otg {

// Makes the backend a session opens (backend::make_backend; the in-memory one in tests).
using BackendFactory = std::function<std::unique_ptr<backend::Backend>(spec::BackendKind)>;

class TrafficService final : public OtgService {
public:
    // `base`: the server's options as `run` takes them (backend, CPUs, tuning, EAL arguments),
    // from which every configuration's session starts. `extra`: sinks that follow every trial
    // (the Prometheus exporter).
    TrafficService(spec::RunSpec base, BackendFactory backends, std::vector<result::Sink*> extra = {});
    ~TrafficService();
    TrafficService(const TrafficService&) = delete;
    TrafficService& operator=(const TrafficService&) = delete;

    // POST /config: applied, or refused (OtgError: 400 with every refusal at its path, 409
    // while traffic runs, 500 when the ports cannot be opened). Returns the warnings.
    std::vector<std::string> set_config(const nlohmann::json& body) override;
    // GET /config: the configuration as set ({} before any).
    nlohmann::json config() const override;
    // POST /control/state (traffic, port link, port capture). Returns the warnings.
    std::vector<std::string> set_state(const nlohmann::json& body) override;
    // The metrics' numbers now.
    View view() const override;
    // POST /monitor/capture: the frames the port's receive queues kept while its capture was
    // started, as a pcap file; stops the capture. Throws OtgError.
    std::string capture(const std::string& port_name) override;
    // linerate's own counters per flow (reordered, duplicates, late, jitter...): GET
    // /linerate/flows.
    nlohmann::json extended_flows() const override;
    // Runs `f` with the session closed and no traffic running (the procedures' endpoint uses
    // the ports itself); meanwhile configurations and traffic are refused (409) and metrics
    // answered; the next start opens the session again. Throws OtgError (409) while traffic
    // runs or another `f` does.
    // ---- As one engine of several (a controller drives them: docs/multihost.md) ----
    // POST /linerate/engine/config: {config, local_ports, nonce, remote_macs}: the whole test's
    // configuration, of which this engine opens only `local_ports`. A flow leaving by another
    // engine's port is received here (its frames counted by the shared nonce and stream ids), a
    // flow to another engine's port sent but not received. Replies {warnings, ports: {name: {mac,
    // speed_bps}}} for the local ports.
    nlohmann::json set_engine_config(const nlohmann::json& body);
    // POST /linerate/engine/arm {flow_names}: a traffic run begins with every flow held, ready to
    // open at go(). 409 while traffic runs.
    std::vector<std::string> arm(const nlohmann::json& body);
    // POST /linerate/engine/go {at_ns}: opens the armed flows at CLOCK_REALTIME at_ns (at once
    // when past). Replies {opened_at_ns, late_ns, warnings}.
    nlohmann::json go(const nlohmann::json& body);
    // GET /linerate/engine/view: view() with every number a controller merges (view_json.h).
    nlohmann::json engine_view() const;

    template <class F>
    auto with_ports_free(F&& f) {
        lend_ports();
        struct Back {
            TrafficService& s;
            ~Back() { s.return_ports(); }
        } back{*this};
        return f();
    }

private:
    struct FlowRun {
        Transmit tx = Transmit::stopped;
        uint32_t start_no = 0;     // in the running trial; 0: not started in it
        uint32_t shares = 1;       // sending queues that carry it: each reports its end
        bool counted = false;      // ends by itself (a count or bursts)
        double sent_all_t = -1;    // trial clock when every queue had sent its count
        double stop_t = -1;        // trial clock when it was stopped (draining until its frames are in)
        uint64_t rx_seen = 0;      // frames received at the last live view that brought some
        double rx_change_t = -1;   // and its trial clock: a drain's quiet period counts from it
        FlowNumbers base;          // taken off the running trial's numbers (started again in it)
        FlowNumbers last;          // shown outside the running trial: its latest trial's, final
        bool in_trial = false;
        bool remote_tx = false;    // sent by another engine: received here only, stopped by the controller
    };
    // This engine's part of a several-host test (set_engine_config); none: a test of its own.
    struct EngineRole {
        std::vector<std::string> local_ports;              // OTG port names opened here
        std::map<std::string, std::string> remote_macs;    // other engines' ports' addresses, by port name
        struct SenderClock {
            std::string boot_id;
            int64_t realtime_minus_monotonic_ns = 0;
        };
        std::map<std::string, SenderClock> tx_clocks;  // by flow name: the clock of its sender, on another engine
        bool local(const std::string& port) const;
    };
    struct LivePoint {  // one live view, for rates
        double t = 0;
        std::vector<FlowNumbers> flows;
        std::vector<PortNumbers> ports;
    };
    class TrialSink;

    std::vector<std::string> apply_config(const nlohmann::json& body, std::optional<EngineRole> role,
                                          std::optional<uint32_t> nonce);
    // The L1 speed a port's percentages and line rate resolve against: the configuration's
    // layer1, else --line-rate, else the link's (the session open); none when nothing says.
    std::optional<double> rate_speed_bps(const OtgConfig& cfg, const std::string& port) const;
    bool busy() const { return armed_ || any_transmitting(); }  // the running trial has flows to send
    void refuse_while_running() const;
    // A traffic run whose flows have all stopped is over: waits (its drain) until it has ended.
    void finish_ended_run(std::unique_lock<std::mutex>& lk);
    void lend_ports();
    void return_ports();
    void open_session(const OtgConfig& cfg, spec::RunSpec spec);
    std::vector<spec::StreamSpec> streams_for(OtgConfig cfg) const;
    void start_flows(const std::vector<size_t>& flows, std::vector<std::string>& warnings, std::unique_lock<std::mutex>& lk);
    void stop_flows(const std::vector<size_t>& flows, std::unique_lock<std::mutex>& lk);
    void pause_flows(const std::vector<size_t>& flows, bool pause, std::vector<std::string>& warnings);
    void traffic_state(const nlohmann::json& body, std::vector<std::string>& warnings, std::unique_lock<std::mutex>& lk);
    void port_state(const nlohmann::json& body, std::vector<std::string>& warnings);
    std::vector<size_t> flow_indexes(const nlohmann::json& names, const std::string& path) const;
    std::vector<size_t> port_indexes(const nlohmann::json& names, const std::string& path) const;
    FlowNumbers numbers_of(size_t flow) const;
    bool any_transmitting() const;
    // Trial thread, under the lock.
    void on_live(const std::vector<stats::QueueId>& ids, const stats::Snapshot& s,
                 const std::vector<result::StreamLive>& streams);
    void on_finished(const result::TrialResult& r);

    spec::RunSpec base_;
    BackendFactory backends_;
    std::vector<result::Sink*> extra_;
    mutable std::mutex m_;
    std::condition_variable cv_;
    std::optional<OtgConfig> cfg_;
    std::unique_ptr<engine::Session> session_;
    spec::RunSpec session_spec_;  // what the session was opened for (its ports)
    std::vector<std::string> locations_;  // per configured port
    std::vector<FlowRun> runs_;           // per flow
    std::vector<PortNumbers> ports_done_;  // per configured port: the trials that ended since the configuration
    std::vector<bool> capturing_;         // per configured port
    std::vector<std::vector<stats::CapturedFrame>> captured_;  // per configured port: the last trial's
    std::vector<double> capture_from_, capture_to_;  // per port: CLOCK_MONOTONIC ns the capture was started, stopped
    // The running trial.
    std::unique_ptr<engine::TrialControl> control_;
    std::unique_ptr<TrialSink> sink_;
    std::thread trial_thread_;
    bool running_ = false, started_ = false;
    bool lent_ = false;  // the ports are a procedure's (with_ports_free)
    bool armed_ = false;  // a run begun by arm(), its flows waiting for go()
    bool live_seen_ = false;  // the running trial has sent a live view: its workers run
    std::vector<size_t> armed_flows_;
    std::optional<EngineRole> role_;
    std::string trial_error_, last_problem_;
    // The last trial that ended, as a controller's procedures judge it (engine_trial_json).
    nlohmann::json last_trial_ = nlohmann::json::object();
    uint64_t trials_finished_ = 0;
    std::vector<stats::QueueId> live_ids_;
    stats::Snapshot live_snap_;
    std::vector<result::StreamLive> live_;
    std::deque<LivePoint> history_;
};

}  // namespace lr::otg
