// `linerate serve --controller`: an OTG server whose ports are other linerate engines' (each a
// `linerate serve` on its host), so a snappi script drives several hosts as one test
// (docs/multihost.md). The controller is an OTG client of its engines:
//
// - a configuration goes to every engine it names (ports[].location ENGINE:PORT;LOCAL-PORT or
//   a location map's name), whole, with the ports each engine opens and one run nonce: every
//   engine signs with the same nonce and the same stream ids, so any engine's receiver counts
//   any engine's frames;
// - a start arms every engine (its run begun, every flow held), then opens them all at one
//   set time (CLOCK_REALTIME), and reports how far apart they opened (the start skew);
// - metrics are the engines' views merged (view_merge.h); a flow whose frames another engine
//   receives is stopped there once its sender has sent them all and they had time to arrive;
// - an engine that fails or stops answering during a run is named in every answer after it,
//   and the other engines are stopped: never a partial answer given as a whole one.
#pragma once
#include <atomic>
#include <memory>
#include <condition_variable>
#include <cstdint>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "otg/clock_info.h"
#include "otg/config.h"
#include "otg/engine_client.h"
#include "otg/location_map.h"
#include "otg/otg_service.h"
#include "otg/view_merge.h"

namespace lr::otg {

struct ControllerOptions {
    LocationMap locations;
    std::optional<uint32_t> nonce;  // none: a random one for the controller's life
    double control_timeout_s = 60;  // an engine's command (a stop waits for its drain)
    double poll_timeout_s = 2;      // an engine's view or metrics
    double poll_period_s = 0.1;     // how often a running test's engines are watched
};

class ControllerService final : public OtgService {
public:
    explicit ControllerService(ControllerOptions o);
    ~ControllerService() override;
    ControllerService(const ControllerService&) = delete;
    ControllerService& operator=(const ControllerService&) = delete;

    std::vector<std::string> set_config(const nlohmann::json& body) override;
    nlohmann::json config() const override;
    std::vector<std::string> set_state(const nlohmann::json& body) override;
    View view() const override;
    std::string capture(const std::string& port_name) override;
    nlohmann::json extended_flows() const override;
    // GET /metrics: the engines' expositions merged, labelled host, and the controller's own.
    std::string metrics() const;

    // One trial of a procedure across engines (otg/controller_procedures.h): `config` set as by
    // POST /config, every flow started at one set time (and stopped `stop_after_s` later when
    // given), and back once every flow has stopped and every engine has finished its trial,
    // within `timeout_s`. Throws OtgError naming an engine.
    struct TrialAcross {
        MergedView merged;
        std::vector<EngineTrial> engines;           // each engine's trial, in engine order
        std::vector<std::string> engine_names;      // ENGINE-HOST:PORT
        std::vector<size_t> flow_tx_engine;         // per flow of `config`
        double sent_for_s = 0;                      // stop_after_s: from the start's return to the stop's
    };
    TrialAcross run_trial_across(const nlohmann::json& config, double timeout_s,
                                 std::optional<double> stop_after_s = std::nullopt);
    // The configuration in place: its ports' locations by name, and the link speeds their
    // engines reported (bits/s; a port without one is left out).
    std::map<std::string, std::string> port_locations() const;
    std::map<std::string, double> port_speeds_bps() const;
    const LocationMap& location_map() const { return o_.locations; }
    // Every engine of the configuration in place, with its ports and clock (a report's environment).
    nlohmann::json engines_json() const;

private:
    struct Engine {
        Endpoint endpoint;
        std::unique_ptr<EngineClient> client;
        std::vector<std::string> ports;  // the configuration's port names it holds
        ClockInfo clock;
        std::string backend;  // what it said it runs (GET /linerate/engine)
    };
    // What a configuration set up; replaced whole by the next one, read without the lock.
    struct Setup {
        OtgConfig cfg;
        std::vector<Engine> engines;
        MergePlan plan;
        uint32_t nonce = 0;
        std::map<std::string, double> port_speed_bps;  // by port name, as the engines reported them
    };
    struct StartReport {
        uint64_t at_ns = 0;
        std::vector<int64_t> opened_at_ns, late_ns;  // per engine
        int64_t skew_ns = 0;                         // the latest opening minus the earliest
    };
    std::shared_ptr<const Setup> setup() const;
    std::shared_ptr<const Setup> need_setup() const;  // refuses when there is no configuration
    static nlohmann::json engines_json(const Setup& s);
    std::vector<EngineView> poll_views(const Setup& s) const;
    MergedView merged(const Setup& s) const;
    void start_synchronised(const Setup& s, const nlohmann::json& names);
    void stop_flows(const Setup& s, const nlohmann::json& names);
    void supervise(std::shared_ptr<const Setup> s);
    void end_supervision();
    // No flow transmits on any engine (polled when a run is supervised): the run is over, its
    // supervision ended. Throws OtgError when an engine does not answer.
    bool traffic_over();
    // An engine failed during the run: remembered (every answer names it), the others stopped.
    void fail(const Setup& s, const std::string& why) const;
    void throw_if_failed() const;

    ControllerOptions o_;
    std::mutex command_m_;  // one configuration or control command at a time
    mutable std::mutex m_;  // what follows
    std::shared_ptr<const Setup> setup_;
    std::optional<StartReport> start_;
    mutable std::string failure_;  // an engine's failure during the run (empty: none)
    std::atomic<bool> running_{false};   // a run is being supervised
    std::atomic<bool> end_{false};       // the supervisor is asked to end
    std::thread supervisor_;
    mutable std::mutex wait_m_;
    std::condition_variable wake_;
};

}  // namespace lr::otg
