#include "otg/traffic_service.h"

#include <algorithm>
#include <chrono>
#include <ctime>
#include <fmt/format.h>
#include <map>
#include <set>

#include "backend/backend.h"
#include "engine/drain_rule.h"
#include "otg/clock_info.h"
#include "otg/view_json.h"
#include "report/pcap_sink.h"
#include "util/error.h"

namespace lr::otg {
namespace {

using nlohmann::json;
using worker::GateState;

uint64_t monotonic_ns() {
    timespec t{};
    clock_gettime(CLOCK_MONOTONIC, &t);
    return static_cast<uint64_t>(t.tv_sec) * 1'000'000'000ull + static_cast<uint64_t>(t.tv_nsec);
}

[[noreturn]] void refuse(const std::string& path, const std::string& message, int status = 400) {
    throw OtgError(path, message, status);
}

// A session's open failure as an OTG error: a bad setting is the request's (400), anything
// else the host's (500).
[[noreturn]] void refuse_opening(const Error& e) {
    throw OtgError("ports", e.what(), e.code() == ExitCode::usage ? 400 : 500);
}

}  // namespace

const char* transmit_str(Transmit t) {
    switch (t) {
        case Transmit::started: return "started";
        case Transmit::paused: return "paused";
        case Transmit::stopped: break;
    }
    return "stopped";
}

// The trial's sink: live views and the result go to the service; every call also to the
// extra sinks (the Prometheus exporter).
class TrafficService::TrialSink final : public result::Sink {
public:
    TrialSink(TrafficService& s, const std::vector<result::Sink*>& extra) : s_(s) {
        for (auto* x : extra) list_.add(*x);
    }
    void trial_started(const result::TrialStart& t) override {
        list_.trial_started(t);
        std::lock_guard lk(s_.m_);
        s_.started_ = true;
        s_.cv_.notify_all();
    }
    void snapshot(const std::vector<stats::QueueId>& ids, const stats::Snapshot& s) override { list_.snapshot(ids, s); }
    void interval(const stats::IntervalRow& r) override { list_.interval(r); }
    void streams_live(const std::vector<result::StreamLive>& v) override { list_.streams_live(v); }
    void live(const std::vector<stats::QueueId>& ids, const stats::Snapshot& s,
              const std::vector<result::StreamLive>& v) override {
        list_.live(ids, s, v);
        std::lock_guard lk(s_.m_);
        s_.on_live(ids, s, v);
    }
    void trial_finished(const result::TrialResult& r) override {
        list_.trial_finished(r);
        std::lock_guard lk(s_.m_);
        s_.on_finished(r);
    }

private:
    TrafficService& s_;
    result::SinkList list_;
};

TrafficService::TrafficService(spec::RunSpec base, BackendFactory backends, std::vector<result::Sink*> extra)
    : base_(std::move(base)), backends_(std::move(backends)), extra_(std::move(extra)) {}

TrafficService::~TrafficService() {
    std::unique_lock lk(m_);
    if (running_ && control_) {
        for (size_t i = 0; i < runs_.size(); ++i) control_->gates->set(i, runs_[i].start_no, GateState::stopped);
        control_->gates->publish();
        control_->end_tx = true;
    }
    lk.unlock();
    if (trial_thread_.joinable()) trial_thread_.join();
}

void TrafficService::refuse_while_running() const {
    if (lent_) refuse("", "a procedure is running on the ports (POST /linerate/procedure)", 409);
    if (running_)
        refuse("", "traffic is running: stop it first (control/state traffic.flow_transmit.state = stop)", 409);
}

void TrafficService::finish_ended_run(std::unique_lock<std::mutex>& lk) {
    if (!running_ || (busy() && !control_->end_tx)) return;
    control_->end_tx = true;
    cv_.wait_for(lk, std::chrono::duration<double>(session_spec_.drain_s + 5), [&] { return !running_; });
}

void TrafficService::lend_ports() {
    std::unique_lock lk(m_);
    finish_ended_run(lk);
    refuse_while_running();
    session_.reset();
    lent_ = true;
}

void TrafficService::return_ports() {
    std::lock_guard lk(m_);
    lent_ = false;
}

// ---- Configuration ---------------------------------------------------------------------

bool TrafficService::EngineRole::local(const std::string& port) const {
    return std::find(local_ports.begin(), local_ports.end(), port) != local_ports.end();
}

std::vector<spec::StreamSpec> TrafficService::streams_for(OtgConfig cfg) const {
    std::map<std::string, std::string> location;
    for (const auto& p : cfg.ports) location[p.name] = p.location;
    std::vector<spec::StreamSpec> out;
    const std::string here = role_ && !role_->tx_clocks.empty() ? boot_id() : "";
    const int64_t here_offset = here.empty() ? 0 : realtime_minus_monotonic_ns();
    for (auto& f : cfg.flows) {
        auto st = f.stream;
        // A flow another engine sends leaves by no port here: its stream is only received.
        st.ports = {role_ && !role_->local(f.tx_port) ? std::string(kElsewhere) : location[f.tx_port]};
        // Stamped by another host's clock: read through both system clocks (docs/multihost.md, Time).
        if (role_ && !role_->local(f.tx_port))
            if (const auto c = role_->tx_clocks.find(f.name); c != role_->tx_clocks.end() && c->second.boot_id != here)
                st.tx_clock_shift_ns = c->second.realtime_minus_monotonic_ns - here_offset;
        const std::string rx = f.rx_ports.empty() ? "" : f.rx_ports.front();
        if (f.dst_mac_auto && role_ && !rx.empty() && !role_->local(rx)) {  // another engine's port's address
            const auto it = role_->remote_macs.find(rx);
            if (it != role_->remote_macs.end()) {
                const auto mac = packet::parse_mac(it->second, f.path + ".packet[0].ethernet.dst");
                st.frame.dst_mac = mac;
                for (auto& ff : st.flow_frames) ff.dst_mac = mac;
            }
        } else if (f.dst_mac_auto && session_ && !f.rx_ports.empty()) {  // the receiving port's own address
            for (const auto& p : session_->ports())
                if (p.name == location[f.rx_ports.front()] && !p.mac.empty()) {
                    const auto mac = packet::parse_mac(p.mac, f.path + ".packet[0].ethernet.dst");
                    st.frame.dst_mac = mac;
                    for (auto& ff : st.flow_frames) ff.dst_mac = mac;
                }
        }
        out.push_back(std::move(st));
    }
    return out;
}

std::optional<double> TrafficService::rate_speed_bps(const OtgConfig& cfg, const std::string& port) const {
    for (const auto& l1 : cfg.layer1)
        if (l1.speed_bps > 0 && std::find(l1.ports.begin(), l1.ports.end(), port) != l1.ports.end()) return l1.speed_bps;
    if (base_.line_rate_bps > 0) return base_.line_rate_bps;
    std::string location;
    for (const auto& p : cfg.ports)
        if (p.name == port) location = p.location;
    if (session_)
        for (const auto& p : session_->ports())
            if (p.name == location && p.link_speed_mbps) return p.link_speed_mbps * 1e6;
    return std::nullopt;
}

void TrafficService::open_session(const OtgConfig& cfg, spec::RunSpec s) {
    session_.reset();  // the ports may be the same: closed before they open again
    // Until the ports say their speed, every rate is resolved at a stand-in speed: the session
    // opens with frames of the right sizes; the real rates follow (set_streams).
    OtgConfig provisional = cfg;
    resolve_counts_and_rates(provisional, [](const std::string&) { return std::optional<double>(1e9); });
    s.streams = streams_for(provisional);
    try {
        session_ = std::make_unique<engine::Session>(backends_(s.backend), s);
    } catch (const Error& e) {
        refuse_opening(e);
    }
    session_spec_ = s;
}

std::vector<std::string> TrafficService::set_config(const json& body) { return apply_config(body, std::nullopt, std::nullopt); }

std::vector<std::string> TrafficService::apply_config(const json& body, std::optional<EngineRole> role,
                                                      std::optional<uint32_t> nonce) {
    std::unique_lock lk(m_);
    finish_ended_run(lk);  // every flow stopped: the run's drain is all that is left
    refuse_while_running();
    OtgConfig cfg = parse_config(body);
    std::vector<Refusal> bad;
    std::map<std::string, size_t> port_of;
    std::vector<std::string> locations;
    const auto here = [&](const std::string& port) { return !role || role->local(port); };
    for (size_t i = 0; i < cfg.ports.size(); ++i) {
        const auto& p = cfg.ports[i];
        port_of[p.name] = i;
        if (!here(p.name)) {  // another engine's: not opened here
            locations.push_back(fmt::format("{} {}", kElsewhere, p.name));
            continue;
        }
        const auto dup = std::find(locations.begin(), locations.end(), p.location);
        if (dup != locations.end())
            bad.push_back({fmt::format("ports[{}].location", i),
                           fmt::format("{} is also ports[{}]'s location: a port is configured once", p.location,
                                       dup - locations.begin())});
        locations.push_back(p.location);
    }
    if (!bad.empty()) throw OtgError(bad);
    // The ports' roles: senders, and receivers (a flow's rx_names, a capture's ports).
    std::vector<bool> sends(locations.size()), receives(locations.size());
    for (const auto& f : cfg.flows) {
        sends[port_of[f.tx_port]] = here(f.tx_port);
        for (const auto& r : f.rx_ports) receives[port_of[r]] = receives[port_of[r]] || here(r);
    }
    for (const auto& c : cfg.captures)
        for (const auto& p : c.ports) receives[port_of[p]] = receives[port_of[p]] || here(p);
    spec::RunSpec s = base_;
    if (nonce) {  // the whole test's: every engine recognises every engine's frames
        s.nonce = *nonce;
        s.nonce_given = true;
    }
    s.tx.clear();
    s.rx.clear();
    for (size_t i = 0; i < locations.size(); ++i) {
        if (sends[i]) s.tx.push_back({locations[i], 1});
        if (receives[i]) s.rx.push_back({locations[i], 1});
    }
    if (base_.line_rate_bps > 0) s.line_rate_bps = base_.line_rate_bps * static_cast<double>(std::max<size_t>(1, s.tx.size()));
    s.capture_path = cfg.captures.empty() ? "" : "(otg capture)";
    s.duration_s = 365 * 86400.0;  // a controlled trial ends when the traffic stops
    s.quiet = true;

    role_ = role;  // a copy: `here` above still reads `role`
    if (cfg.flows.empty() || (s.tx.empty() && s.rx.empty())) {  // ports alone: nothing to open until flows come
        session_.reset();
    } else {
        const bool same_ports = session_ && session_spec_.tx == s.tx && session_spec_.rx == s.rx &&
                                session_spec_.capture_path == s.capture_path && session_spec_.nonce == s.nonce;
        if (!same_ports) open_session(cfg, s);
        const auto speed = [&](const std::string& port) -> std::optional<double> {
            if (!here(port)) return 1e9;  // another engine sends it: its rate does not matter here
            return rate_speed_bps(cfg, port);
        };
        OtgConfig resolved = cfg;
        resolve_counts_and_rates(resolved, speed);
        auto streams = streams_for(resolved);
        try {
            session_->set_streams(streams);
        } catch (const UsageError& e) {
            if (!same_ports) refuse("flows", e.what());
            open_session(cfg, s);  // opened for smaller frames or other receive ports: open again
            try {
                session_->set_streams(streams_for(resolved));
            } catch (const UsageError& e2) {
                refuse("flows", e2.what());
            }
        }
        session_spec_ = session_->spec();
    }
    // Applied: the flows start from nothing.
    locations_ = locations;
    runs_.assign(cfg.flows.size(), {});
    for (size_t i = 0; i < cfg.flows.size(); ++i) {
        const auto& st = session_spec_.streams.empty() ? cfg.flows[i].stream : session_spec_.streams[i];
        runs_[i].counted = st.ends();
        const uint32_t queues = session_spec_.streams.empty() ? 1 : session_spec_.stream_queues(st);
        runs_[i].shares = st.count ? static_cast<uint32_t>(std::min<uint64_t>(queues, *st.count)) : queues;
        runs_[i].remote_tx = role_ && !role_->local(cfg.flows[i].tx_port);
    }
    ports_done_.assign(locations.size(), {});
    capturing_.assign(locations.size(), false);
    captured_.assign(locations.size(), {});
    capture_from_.assign(locations.size(), 0);
    capture_to_.assign(locations.size(), 0);
    live_.clear();
    history_.clear();
    last_problem_.clear();
    auto warnings = cfg.warnings;
    for (const auto& l1 : cfg.layer1)
        if (l1.mtu && session_)
            warnings.push_back(fmt::format("{}.mtu: linerate does not change a port's MTU; frames are checked against "
                                           "the MTU each port has",
                                           l1.path));
    cfg_ = std::move(cfg);
    return warnings;
}

json TrafficService::config() const {
    std::lock_guard lk(m_);
    return cfg_ ? cfg_->as_set : json::object();
}

// ---- Traffic -----------------------------------------------------------------------------

// The indexes of the items `names` lists (a JSON list of names; none or empty: all of them),
// refusing an unknown one at its place in the list.
template <class T>
std::vector<size_t> indexes_by_name(const std::vector<T>& items, const json& names, const std::string& path,
                                    const char* what) {
    std::vector<size_t> out;
    if (names.is_null() || (names.is_array() && names.empty())) {
        for (size_t i = 0; i < items.size(); ++i) out.push_back(i);
        return out;
    }
    if (!names.is_array()) refuse(path, fmt::format("a list of {} names", what));
    for (size_t k = 0; k < names.size(); ++k) {
        const auto& n = names[k];
        const auto it = std::find_if(items.begin(), items.end(),
                                     [&](const T& x) { return n.is_string() && x.name == n.get<std::string>(); });
        if (it == items.end()) refuse(fmt::format("{}[{}]", path, k), fmt::format("no {} named {}", what, n.dump()));
        out.push_back(static_cast<size_t>(it - items.begin()));
    }
    return out;
}

std::vector<size_t> TrafficService::flow_indexes(const json& names, const std::string& path) const {
    if (!cfg_) refuse("", "no configuration: set one first (POST /config)");
    return indexes_by_name(cfg_->flows, names, path, "flow");
}

std::vector<size_t> TrafficService::port_indexes(const json& names, const std::string& path) const {
    if (!cfg_) refuse("", "no configuration: set one first (POST /config)");
    return indexes_by_name(cfg_->ports, names, path, "port");
}

bool TrafficService::any_transmitting() const {
    return std::any_of(runs_.begin(), runs_.end(), [](const FlowRun& r) {
        return r.in_trial && (r.tx == Transmit::started || r.tx == Transmit::paused);
    });
}

void TrafficService::start_flows(const std::vector<size_t>& flows, std::vector<std::string>& warnings,
                                 std::unique_lock<std::mutex>& lk) {
    if (cfg_->flows.empty()) refuse("", "the configuration has no flows");
    finish_ended_run(lk);  // a run whose flows all stopped is ending: the start begins a new one
    if (running_) {  // started within the running trial: from its beginning, its counters from zero
        for (size_t i : flows) {
            auto& r = runs_[i];
            if (r.tx == Transmit::started) {
                warnings.push_back(fmt::format("flow {} is already transmitting: left as it is", cfg_->flows[i].name));
                continue;
            }
            r.base = i < live_.size() ? live_numbers(live_[i]) : FlowNumbers{};
            r.start_no += 1;
            r.tx = Transmit::started;
            r.in_trial = true;
            r.sent_all_t = r.stop_t = r.rx_change_t = -1;
            r.rx_seen = 0;
            r.last = {};
            control_->gates->set(i, r.start_no, GateState::open);
        }
        control_->gates->publish();
        return;
    }
    if (!session_) {  // closed while the ports were lent (a procedure): opened again
        try {
            session_ = std::make_unique<engine::Session>(backends_(session_spec_.backend), session_spec_);
        } catch (const Error& e) {
            refuse_opening(e);
        }
    }
    control_ = std::make_unique<engine::TrialControl>(cfg_->flows.size());
    for (auto& r : runs_) {
        r.in_trial = false;
        r.start_no = 0;
        r.base = {};
        r.sent_all_t = r.stop_t = r.rx_change_t = -1;
        r.rx_seen = 0;
    }
    for (size_t i : flows) {
        auto& r = runs_[i];
        r.tx = Transmit::started;
        r.start_no = 1;
        r.in_trial = true;
        r.last = {};
        control_->gates->set(i, 1, GateState::open);
    }
    control_->gates->publish();
    live_.clear();
    history_.clear();
    live_snap_ = {};
    running_ = true;
    started_ = false;
    trial_error_.clear();
    sink_ = std::make_unique<TrialSink>(*this, extra_);
    if (trial_thread_.joinable()) trial_thread_.join();  // the last trial's thread has ended (running_ was false)
    trial_thread_ = std::thread([this] {
        std::string error;
        std::string problem;
        try {
            const auto r = session_->run_controlled_trial(*control_, *sink_);
            if (r.verdict == result::Verdict::invalid) problem = r.verdict_reason;
        } catch (const std::exception& e) {
            error = e.what();
        }
        std::lock_guard g(m_);
        running_ = false;
        trial_error_ = error;
        if (!problem.empty()) last_problem_ = problem;
        for (auto& r : runs_)
            if (r.in_trial) {  // a trial that failed to start: nothing was sent
                r.in_trial = false;
                r.tx = Transmit::stopped;
            }
        cv_.notify_all();
    });
    cv_.wait_for(lk, std::chrono::seconds(30), [&] { return started_ || !running_; });
    if (!running_ && !trial_error_.empty()) refuse("", "couldn't start traffic: " + trial_error_, 500);
}

void TrafficService::stop_flows(const std::vector<size_t>& flows, std::unique_lock<std::mutex>& lk) {
    if (!running_) return;
    armed_ = false;  // a stop cancels a start waiting for its time
    const double now = history_.empty() ? 0 : history_.back().t;
    std::vector<size_t> stopping;
    for (size_t i : flows) {
        auto& r = runs_[i];
        if (!r.in_trial || (r.tx != Transmit::started && r.tx != Transmit::paused)) continue;
        r.tx = Transmit::stopped;
        r.stop_t = now;
        stopping.push_back(i);
        control_->gates->set(i, r.start_no, GateState::stopped);
    }
    control_->gates->publish();
    const auto limit = std::chrono::duration<double>(session_spec_.drain_s + 5);
    if (!any_transmitting()) {  // the trial ends: its drain, then every flow's final numbers
        control_->end_tx = true;
        cv_.wait_for(lk, limit, [&] { return !running_; });
        return;
    }
    cv_.wait_for(lk, limit, [&] {
        return !running_ || std::all_of(stopping.begin(), stopping.end(), [&](size_t i) { return runs_[i].stop_t < 0; });
    });
}

void TrafficService::pause_flows(const std::vector<size_t>& flows, bool pause, std::vector<std::string>& warnings) {
    for (size_t i : flows) {
        auto& r = runs_[i];
        const auto want = pause ? Transmit::started : Transmit::paused;
        if (!running_ || !r.in_trial || r.tx != want) {
            warnings.push_back(fmt::format("flow {} is {}: not {}", cfg_->flows[i].name, transmit_str(r.tx),
                                           pause ? "paused" : "resumed"));
            continue;
        }
        r.tx = pause ? Transmit::paused : Transmit::started;
        control_->gates->set(i, r.start_no, pause ? GateState::paused : GateState::open);
    }
    if (running_) control_->gates->publish();
}

void TrafficService::traffic_state(const json& body, std::vector<std::string>& warnings,
                                   std::unique_lock<std::mutex>& lk) {
    const auto& t = body.contains("traffic") ? body["traffic"] : json::object();
    const std::string choice = t.value("choice", "flow_transmit");
    if (choice != "flow_transmit") refuse("traffic.choice", fmt::format("\"{}\": only flow_transmit", choice));
    if (!t.contains("flow_transmit") || !t["flow_transmit"].is_object())
        refuse("traffic.flow_transmit", "missing: {flow_names, state}");
    const auto& ft = t["flow_transmit"];
    const auto flows = flow_indexes(ft.contains("flow_names") ? ft["flow_names"] : json(), "traffic.flow_transmit.flow_names");
    const std::string state = ft.contains("state") && ft["state"].is_string() ? ft["state"].get<std::string>() : "";
    if (state == "start") {
        start_flows(flows, warnings, lk);
    } else if (state == "stop") {
        stop_flows(flows, lk);
    } else if (state == "pause") {
        pause_flows(flows, true, warnings);
    } else if (state == "resume") {
        // A paused flow goes on; a stopped one starts from its beginning (the model's rule).
        std::vector<size_t> paused, stopped;
        for (size_t i : flows) (runs_[i].in_trial && runs_[i].tx == Transmit::paused ? paused : stopped).push_back(i);
        pause_flows(paused, false, warnings);
        if (!stopped.empty()) start_flows(stopped, warnings, lk);
    } else {
        refuse("traffic.flow_transmit.state", fmt::format("\"{}\": one of start, stop, pause, resume", state));
    }
    if (!last_problem_.empty()) {
        warnings.push_back("the last traffic run was invalid: " + last_problem_);
        last_problem_.clear();
    }
}

void TrafficService::port_state(const json& body, std::vector<std::string>& warnings) {
    const auto& p = body.contains("port") ? body["port"] : json::object();
    const std::string choice = p.value("choice", "");
    if (choice == "link") {
        const auto& l = p.contains("link") ? p["link"] : json::object();
        const std::string state = l.value("state", "");
        if (state != "up" && state != "down") refuse("port.link.state", fmt::format("\"{}\": up or down", state));
        for (size_t i : port_indexes(l.contains("port_names") ? l["port_names"] : json(), "port.link.port_names")) {
            if (!session_) refuse("port.link", "no port is open: set a configuration with flows first");
            const auto& ports = session_->ports();
            const auto it = std::find_if(ports.begin(), ports.end(),
                                         [&](const backend::PortInfo& x) { return x.name == locations_[i]; });
            if (it == ports.end()) {
                warnings.push_back(fmt::format("port {} carries no flow: its link is left as it is", cfg_->ports[i].name));
                continue;
            }
            try {
                session_->set_link(static_cast<unsigned>(it - ports.begin()), state == "up");
            } catch (const Error& e) {
                refuse(fmt::format("port.link.port_names ({})", cfg_->ports[i].name), e.what(),
                       e.code() == ExitCode::usage ? 400 : 500);
            }
        }
        return;
    }
    if (choice == "capture") {
        const auto& c = p.contains("capture") ? p["capture"] : json::object();
        const std::string state = c.value("state", "");
        if (state != "start" && state != "stop") refuse("port.capture.state", fmt::format("\"{}\": start or stop", state));
        for (size_t i : port_indexes(c.contains("port_names") ? c["port_names"] : json(), "port.capture.port_names")) {
            const bool configured = std::any_of(cfg_->captures.begin(), cfg_->captures.end(), [&](const OtgCapture& x) {
                return std::find(x.ports.begin(), x.ports.end(), cfg_->ports[i].name) != x.ports.end();
            });
            if (!configured)
                refuse("port.capture.port_names", fmt::format("port {} has no capture in the configuration (captures[])",
                                                              cfg_->ports[i].name));
            capturing_[i] = state == "start";
            (state == "start" ? capture_from_[i] : capture_to_[i]) = static_cast<double>(monotonic_ns());
            if (state == "start") capture_to_[i] = 0;
        }
        return;
    }
    refuse("port.choice", fmt::format("\"{}\": link or capture", choice));
}

std::vector<std::string> TrafficService::set_state(const json& body) {
    std::unique_lock lk(m_);
    if (lent_) refuse("", "a procedure is running on the ports (POST /linerate/procedure)", 409);
    std::vector<std::string> warnings;
    const std::string choice = body.is_object() ? body.value("choice", "") : "";
    if (choice == "traffic") traffic_state(body, warnings, lk);
    else if (choice == "port") port_state(body, warnings);
    else if (choice == "protocol") refuse("choice", "\"protocol\": linerate runs no protocols (ports only)", 400);
    else refuse("choice", fmt::format("\"{}\": one of port, traffic", choice));
    return warnings;
}

// ---- Live views and results (the trial's thread) ---------------------------------------------

void TrafficService::on_live(const std::vector<stats::QueueId>& ids, const stats::Snapshot& s,
                             const std::vector<result::StreamLive>& streams) {
    live_ids_ = ids;
    live_seen_ = true;
    live_snap_ = s;
    live_ = streams;
    LivePoint p;
    p.t = s.t;
    for (const auto& st : streams) p.flows.push_back(live_numbers(st));
    for (const auto& loc : locations_) p.ports.push_back(port_numbers(ids, s, loc));
    history_.push_back(std::move(p));
    while (history_.size() > 2 && history_.front().t < s.t - 1.5) history_.pop_front();
    const double drain = session_spec_.drain_s, period = control_->live_period_s;
    for (size_t i = 0; i < runs_.size() && i < streams.size(); ++i) {
        auto& r = runs_[i];
        if (!r.in_trial) continue;
        const auto n = live_numbers(streams[i]).since(r.base);
        if (n.frames_rx != r.rx_seen) r.rx_seen = n.frames_rx, r.rx_change_t = s.t;
        // A flow drains by a trial's rule, from the moment it stopped sending.
        const auto drained = [&](double since) {
            const engine::DrainRule rule(since, drain, static_cast<double>(n.lat_max_ns) * 1e-9);
            return n.frames_rx >= n.frames_tx || rule.quiet(s.t, r.rx_change_t) || rule.expired(s.t);
        };
        if (r.tx == Transmit::started && r.counted && !r.remote_tx) {
            const auto& st = session_spec_.streams[i];
            const uint64_t count = st.count.value_or(0);
            if (r.sent_all_t < 0 && control_->gates->shares_done(i, r.start_no) >= r.shares) r.sent_all_t = s.t;
            // Stopped by itself: once drained (as the same view counts it).
            if (r.sent_all_t >= 0 && (count == 0 || n.frames_tx >= count) && drained(r.sent_all_t))
                r.tx = Transmit::stopped;
        }
        // Stopped by a request: once the views show its last frames sent and in.
        if (r.stop_t >= 0 && s.t - r.stop_t >= 2 * period && drained(r.stop_t)) r.stop_t = -1;
    }
    if (!busy() && !control_->end_tx) control_->end_tx = true;  // nothing left to send: the trial ends
    cv_.notify_all();
}

void TrafficService::on_finished(const result::TrialResult& r) {
    last_trial_ = engine_trial_json(r);
    last_trial_["finished"] = ++trials_finished_;
    for (size_t i = 0; i < runs_.size(); ++i) {
        auto& run = runs_[i];
        if (!run.in_trial) continue;
        run.last = final_numbers(r, i).since(run.base);
        run.tx = Transmit::stopped;
        run.in_trial = false;
        run.stop_t = -1;
    }
    for (size_t p = 0; p < locations_.size(); ++p) ports_done_[p] += port_numbers(r, locations_[p]);
    for (auto& c : captured_) c.clear();
    if (session_)
        for (const auto& f : r.captured)
            for (size_t p = 0; p < locations_.size(); ++p)
                if (f.port_index < session_->ports().size() && session_->ports()[f.port_index].name == locations_[p])
                    captured_[p].push_back(f);
    live_.clear();
}

// ---- Metrics -------------------------------------------------------------------------------------

FlowNumbers TrafficService::numbers_of(size_t i) const {
    const auto& r = runs_[i];
    if (running_ && r.in_trial) return i < live_.size() ? live_numbers(live_[i]).since(r.base) : FlowNumbers{};
    return r.last;
}

View TrafficService::view() const {
    std::lock_guard lk(m_);
    View v;
    v.realtime_minus_monotonic_ns = realtime_minus_monotonic_ns();
    if (!cfg_) return v;
    // Rates over the last second of live views.
    const LivePoint* now = history_.empty() ? nullptr : &history_.back();
    const LivePoint* then = nullptr;
    for (const auto& p : history_)
        if (now && &p != now && p.t >= now->t - 1.0) {
            then = &p;
            break;
        }
    const double dt = now && then ? now->t - then->t : 0;
    const auto rate = [&](uint64_t a, uint64_t b) { return dt > 0 && a >= b ? static_cast<double>(a - b) / dt : 0.0; };
    for (size_t i = 0; i < cfg_->flows.size(); ++i) {
        const auto& f = cfg_->flows[i];
        const auto& r = runs_[i];
        FlowView fv;
        fv.name = f.name;
        fv.tx_port = f.tx_port;
        fv.rx_port = f.rx_ports.empty() ? "" : f.rx_ports.front();
        fv.transmit = r.tx;
        fv.n = numbers_of(i);
        fv.latency = f.latency;
        fv.timestamps = f.timestamps;
        if (running_ && r.in_trial && dt > 0 && i < now->flows.size() && i < then->flows.size()) {
            const auto &a = now->flows[i], &b = then->flows[i];
            fv.tx_pps = rate(a.frames_tx, b.frames_tx);
            fv.rx_pps = rate(a.frames_rx, b.frames_rx);
            fv.tx_l2_bps = 8 * rate(a.bytes_tx, b.bytes_tx);
            fv.rx_l2_bps = 8 * rate(a.bytes_rx, b.bytes_rx);
            fv.tx_l1_bps = fv.tx_l2_bps + 160 * fv.tx_pps;  // preamble, SFD and inter-frame gap: 20 bytes a frame
            fv.rx_l1_bps = fv.rx_l2_bps + 160 * fv.rx_pps;
        }
        v.flows.push_back(std::move(fv));
    }
    for (size_t p = 0; p < cfg_->ports.size(); ++p) {
        PortView pv;
        pv.name = cfg_->ports[p].name;
        pv.location = cfg_->ports[p].location;
        pv.capturing = p < capturing_.size() && capturing_[p];
        pv.n = p < ports_done_.size() ? ports_done_[p] : PortNumbers{};
        if (running_ && now && p < now->ports.size()) pv.n += now->ports[p];
        if (running_ && dt > 0 && p < now->ports.size() && p < then->ports.size()) {
            const auto &a = now->ports[p], &b = then->ports[p];
            pv.tx_pps = rate(a.frames_tx, b.frames_tx);
            pv.rx_pps = rate(a.frames_rx, b.frames_rx);
            pv.tx_bytes_per_s = rate(a.bytes_tx, b.bytes_tx);
            pv.rx_bytes_per_s = rate(a.bytes_rx, b.bytes_rx);
        }
        for (size_t i = 0; i < cfg_->flows.size(); ++i)
            if (cfg_->flows[i].tx_port == pv.name && runs_[i].tx != Transmit::stopped) pv.transmit = Transmit::started;
        if (session_) {
            const auto& ports = session_->ports();
            for (size_t k = 0; k < ports.size(); ++k)
                if (ports[k].name == pv.location) {
                    pv.speed_bps = ports[k].link_speed_mbps * 1e6;
                    // Running: as the control thread saw it last; idle: read now (set down
                    // through the API, or by anyone else).
                    const int link = running_ ? (k < live_snap_.ports.size() ? live_snap_.ports[k].link : -1)
                                              : session_->link_now(static_cast<unsigned>(k));
                    pv.link_up = link >= 0 ? link == 1 : ports[k].link_up;
                }
        }
        for (const auto& l1 : cfg_->layer1)
            if (l1.speed_bps > 0 && std::find(l1.ports.begin(), l1.ports.end(), pv.name) != l1.ports.end())
                pv.speed_bps = l1.speed_bps;
        v.ports.push_back(std::move(pv));
    }
    return v;
}

json TrafficService::extended_flows() const {
    const View v = view();
    json a = json::array();
    for (const auto& f : v.flows) a.push_back(extended_flow_json(f));
    return {{"flows", a}};
}

// ---- Captures --------------------------------------------------------------------------------------

std::string TrafficService::capture(const std::string& port_name) {
    std::unique_lock lk(m_);
    if (!cfg_) refuse("port_name", "no configuration: set one first (POST /config)");
    const auto it = std::find_if(cfg_->ports.begin(), cfg_->ports.end(), [&](const OtgPort& p) { return p.name == port_name; });
    if (it == cfg_->ports.end()) refuse("port_name", fmt::format("no port named \"{}\"", port_name));
    const auto p = static_cast<size_t>(it - cfg_->ports.begin());
    const bool configured = std::any_of(cfg_->captures.begin(), cfg_->captures.end(), [&](const OtgCapture& c) {
        return std::find(c.ports.begin(), c.ports.end(), port_name) != c.ports.end();
    });
    if (!configured) refuse("port_name", fmt::format("port {} has no capture in the configuration (captures[])", port_name));
    // The receive queues hand their frames over when the trial ends: one whose flows have all
    // finished is waited for (its drain); one still sending cannot give them yet.
    if (running_ && any_transmitting())
        refuse("port_name", "traffic is still running: a capture is handed over once the traffic stops", 409);
    cv_.wait_for(lk, std::chrono::duration<double>(session_spec_.drain_s + 5), [&] { return !running_; });
    if (capturing_[p]) {  // getting a capture stops it (the model's rule)
        capturing_[p] = false;
        capture_to_[p] = static_cast<double>(monotonic_ns());
    }
    std::vector<stats::CapturedFrame> frames;
    for (const auto& f : captured_[p]) {
        const double ts = static_cast<double>(f.ts_ns);
        if (capture_from_[p] > 0 && ts >= capture_from_[p] && (capture_to_[p] == 0 || ts <= capture_to_[p]))
            frames.push_back(f);
    }
    return report::pcap_file_bytes(frames);
}

}  // namespace lr::otg
