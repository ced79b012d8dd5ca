#include "otg/controller_service.h"

#include <algorithm>
#include <chrono>
#include <ctime>
#include <fmt/format.h>
#include <future>
#include <map>
#include <random>
#include <set>

#include "otg/prom_merge.h"
#include "otg/view_json.h"

namespace lr::otg {
namespace {

using nlohmann::json;

std::string joined(const std::vector<std::string>& v) {
    std::string out;
    for (const auto& s : v) out += (out.empty() ? "" : ", ") + s;
    return out;
}

// Runs f(i) for every i in `which` at once, each on its own thread. Every failure becomes one
// line of an OtgError: its status the engines' (a refusal of the request: 400), else 500.
template <class F>
auto fan_out(const std::vector<size_t>& which, F f) {
    using R = decltype(f(size_t{}));
    std::vector<std::future<R>> running;
    for (size_t i : which) running.push_back(std::async(std::launch::async, [&f, i] { return f(i); }));
    std::vector<R> out;
    std::vector<Refusal> failed;
    int status = 400;
    for (auto& r : running) {
        try {
            out.push_back(r.get());
        } catch (const EngineError& e) {
            failed.push_back({"", e.what()});
            if (e.status() < 400 || e.status() >= 500) status = 500;
        } catch (const OtgError& e) {
            for (const auto& x : e.refusals()) failed.push_back(x);
            status = std::max(status, e.http_status());
        } catch (const std::exception& e) {
            failed.push_back({"", e.what()});
            status = 500;
        }
    }
    if (!failed.empty()) throw OtgError(failed, status);
    return out;
}

std::vector<size_t> indexes(size_t n) {
    std::vector<size_t> v(n);
    for (size_t i = 0; i < n; ++i) v[i] = i;
    return v;
}

// The flow names a request lists (none or empty: all), each checked against the configuration.
std::vector<std::string> flow_names(const OtgConfig& cfg, const json& names, const std::string& path) {
    std::vector<std::string> out;
    if (names.is_null() || (names.is_array() && names.empty())) {
        for (const auto& f : cfg.flows) out.push_back(f.name);
        return out;
    }
    if (!names.is_array()) throw OtgError(path, "a list of flow names");
    for (size_t k = 0; k < names.size(); ++k) {
        const auto& n = names[k];
        if (!n.is_string() || std::none_of(cfg.flows.begin(), cfg.flows.end(),
                                           [&](const OtgFlow& f) { return f.name == n.get<std::string>(); }))
            throw OtgError(fmt::format("{}[{}]", path, k), fmt::format("no flow named {}", n.dump()));
        out.push_back(n.get<std::string>());
    }
    return out;
}

json traffic_body(const std::vector<std::string>& flows, const std::string& state) {
    return {{"choice", "traffic"},
            {"traffic", {{"choice", "flow_transmit"}, {"flow_transmit", {{"flow_names", flows}, {"state", state}}}}}};
}

}  // namespace

ControllerService::ControllerService(ControllerOptions o) : o_(std::move(o)) {
    // One run identity for the controller's life: a configuration that keeps its ports keeps
    // every engine's session (a new nonce would open them again).
    if (!o_.nonce) o_.nonce = static_cast<uint32_t>(std::random_device{}());
}

ControllerService::~ControllerService() {
    end_supervision();
    if (const auto s = setup(); s && running_.load()) {
        try {
            fan_out(indexes(s->engines.size()), [&](size_t e) {
                return s->engines[e].client->post("/control/state", traffic_body({}, "stop"));
            });
        } catch (const std::exception&) {
        }
    }
}

std::shared_ptr<const ControllerService::Setup> ControllerService::setup() const {
    std::lock_guard lk(m_);
    return setup_;
}

std::shared_ptr<const ControllerService::Setup> ControllerService::need_setup() const {
    auto s = setup();
    if (!s) throw OtgError("", "no configuration: set one first (POST /config)");
    return s;
}

void ControllerService::throw_if_failed() const {
    std::lock_guard lk(m_);
    if (!failure_.empty()) throw OtgError("", failure_, 500);
}

void ControllerService::end_supervision() {
    end_ = true;
    wake_.notify_all();
    if (supervisor_.joinable()) supervisor_.join();
    end_ = false;
}

// ---- Configuration ----------------------------------------------------------------------------

bool ControllerService::traffic_over() {
    if (!running_) return true;
    const auto s = setup();
    if (s) {
        const auto views = poll_views(*s);
        for (const auto& v : views)
            for (const auto& f : v.view.flows)
                if (f.transmit != Transmit::stopped) return false;
    }
    end_supervision();  // every flow stopped everywhere: the supervisor would end at its next look
    running_ = false;
    return true;
}

std::vector<std::string> ControllerService::set_config(const json& body) {
    std::lock_guard command(command_m_);
    if (!traffic_over())
        throw OtgError("", "traffic is running: stop it first (control/state traffic.flow_transmit.state = stop)", 409);
    end_supervision();
    auto s = std::make_shared<Setup>();
    s->cfg = parse_config(body);
    auto& cfg = s->cfg;
    // Each port's engine, in the order the configuration first names them.
    std::vector<Refusal> bad;
    std::map<std::string, size_t> engine_of_name;
    std::set<std::pair<std::string, std::string>> taken;
    for (size_t p = 0; p < cfg.ports.size(); ++p) {
        Endpoint ep;
        try {
            ep = o_.locations.resolve(cfg.ports[p].location);
        } catch (const std::invalid_argument& e) {
            bad.push_back({fmt::format("ports[{}].location", p), e.what()});
            continue;
        }
        if (!taken.insert({ep.engine(), ep.local}).second)
            bad.push_back({fmt::format("ports[{}].location", p),
                           fmt::format("{} of engine {} is also another port's: a port is configured once", ep.local,
                                       ep.engine())});
        auto [it, added] = engine_of_name.emplace(ep.engine(), s->engines.size());
        if (added) {
            Engine e;
            e.endpoint = ep;
            s->engines.push_back(std::move(e));
        }
        s->engines[it->second].ports.push_back(cfg.ports[p].name);
        s->plan.port_engine.push_back(it->second);
        s->plan.port_location.push_back(cfg.ports[p].location);
    }
    if (!bad.empty()) throw OtgError(bad);
    for (auto& e : s->engines)  // messages name an engine by its address and the ports it holds
        e.client = std::make_unique<EngineClient>(fmt::format("{} (ports {})", e.endpoint.engine(), joined(e.ports)),
                                                  e.endpoint.host, e.endpoint.port, o_.control_timeout_s, o_.poll_timeout_s);
    if (s->engines.empty() && !cfg.flows.empty()) throw OtgError("ports", "no port: a flow needs an engine's port");
    const auto engine_of_port = [&](const std::string& name) {
        for (size_t p = 0; p < cfg.ports.size(); ++p)
            if (cfg.ports[p].name == name) return s->plan.port_engine[p];
        return size_t{0};  // parse_config refused flows naming unknown ports
    };
    for (const auto& f : cfg.flows) {
        s->plan.flow_tx_engine.push_back(engine_of_port(f.tx_port));
        std::vector<size_t> rx;
        for (const auto& r : f.rx_ports) rx.push_back(engine_of_port(r));
        s->plan.flow_rx_engines.push_back(rx);
    }
    s->nonce = *o_.nonce;

    // Each engine's clock first: a receiver reads another engine's stamps through both.
    const auto all = indexes(s->engines.size());
    const auto infos = fan_out(all, [&](size_t e) { return s->engines[e].client->get("/linerate/engine"); });
    for (size_t e = 0; e < infos.size(); ++e) {
        s->engines[e].clock = clock_from_json(infos[e].value("clock", json::object()));
        s->engines[e].backend = infos[e].value("backend", "");
    }

    // Every engine gets the whole configuration, its own ports' locations as it names them, and
    // the clock of every flow another engine sends.
    const auto engine_body = [&](size_t e, const json& remote_macs) {
        json c = body;
        for (size_t p = 0; p < cfg.ports.size(); ++p)
            if (s->plan.port_engine[p] == e) c["ports"][p]["location"] = o_.locations.resolve(cfg.ports[p].location).local;
        json b = {{"config", c}, {"local_ports", s->engines[e].ports}, {"nonce", s->nonce}};
        if (!remote_macs.empty()) b["remote_macs"] = remote_macs;
        json clocks = json::object();
        for (size_t i = 0; i < cfg.flows.size(); ++i)
            if (const auto& tx = s->engines[s->plan.flow_tx_engine[i]]; s->plan.flow_tx_engine[i] != e)
                clocks[cfg.flows[i].name] = {{"boot_id", tx.clock.boot_id},
                                             {"realtime_minus_monotonic_ns", tx.clock.realtime_minus_monotonic_ns}};
        if (!clocks.empty()) b["tx_clocks"] = clocks;
        return b;
    };
    // Engines of the last configuration that this one does not use let their ports go.
    if (const auto old = setup()) {
        std::vector<size_t> gone;
        for (size_t e = 0; e < old->engines.size(); ++e)
            if (!engine_of_name.count(old->engines[e].endpoint.engine())) gone.push_back(e);
        try {
            fan_out(gone, [&](size_t e) { return old->engines[e].client->post("/config", json::object()); });
        } catch (const OtgError&) {  // an engine gone away keeps nothing of ours
        }
    }
    auto replies = fan_out(all, [&](size_t e) { return s->engines[e].client->post("/linerate/engine/config", engine_body(e, json::object())); });
    // A flow to another engine's port with its destination address left automatic: that
    // port's address, from its engine.
    json macs = json::object();
    for (const auto& r : replies) {
        const json ports = r.value("ports", json::object());
        for (const auto& [port, info] : ports.items())
            if (info.contains("mac")) macs[port] = info["mac"];
    }
    for (const auto& r : replies) {
        const json ports = r.value("ports", json::object());
        for (const auto& [port, info] : ports.items())
            if (info.contains("speed_bps") && info["speed_bps"].is_number()) s->port_speed_bps[port] = info["speed_bps"].get<double>();
    }
    std::vector<size_t> again;
    for (size_t i = 0; i < cfg.flows.size(); ++i) {
        const auto& rx = s->plan.flow_rx_engines[i];
        const size_t tx = s->plan.flow_tx_engine[i];
        if (cfg.flows[i].dst_mac_auto && !rx.empty() && rx.front() != tx &&
            std::find(again.begin(), again.end(), tx) == again.end())
            again.push_back(tx);
    }
    if (!again.empty())
        fan_out(again, [&](size_t e) { return s->engines[e].client->post("/linerate/engine/config", engine_body(e, macs)); });

    std::set<std::string> seen;
    std::vector<std::string> warnings;
    for (const auto& r : replies)
        for (const auto& w : r.value("warnings", json::array()))
            if (w.is_string() && seen.insert(w.get<std::string>()).second) warnings.push_back(w.get<std::string>());
    std::lock_guard lk(m_);
    setup_ = std::move(s);
    start_.reset();
    failure_.clear();
    return warnings;
}

json ControllerService::config() const {
    const auto s = setup();
    return s ? s->cfg.as_set : json::object();
}

// ---- Traffic -------------------------------------------------------------------------------------

void ControllerService::start_synchronised(const Setup& s, const json& names) {
    const auto all = indexes(s.engines.size());
    const auto flows = flow_names(s.cfg, names, "traffic.flow_transmit.flow_names");
    try {
        fan_out(all, [&](size_t e) { return s.engines[e].client->post("/linerate/engine/arm", {{"flow_names", flows}}); });
    } catch (const OtgError&) {
        try {  // the engines that did arm let go
            fan_out(all, [&](size_t e) { return s.engines[e].client->post("/control/state", traffic_body(flows, "stop")); });
        } catch (const OtgError&) {
        }
        throw;
    }
    // One set time for all: after the slowest engine's round trip, three times over, so every
    // engine has it before it comes.
    const auto rtts = fan_out(all, [&](size_t e) {
        const auto t0 = std::chrono::steady_clock::now();
        s.engines[e].client->get("/capabilities/version");
        return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    });
    const double slowest = rtts.empty() ? 0 : *std::max_element(rtts.begin(), rtts.end());
    StartReport r;
    r.at_ns = realtime_now_ns() + static_cast<uint64_t>((0.02 + 3 * slowest) * 1e9);
    const auto opened = fan_out(all, [&](size_t e) { return s.engines[e].client->post("/linerate/engine/go", {{"at_ns", r.at_ns}}); });
    for (const auto& o : opened) {
        r.opened_at_ns.push_back(o.value("opened_at_ns", int64_t{0}));
        r.late_ns.push_back(o.value("late_ns", int64_t{0}));
    }
    if (!r.opened_at_ns.empty())
        r.skew_ns = *std::max_element(r.opened_at_ns.begin(), r.opened_at_ns.end()) -
                    *std::min_element(r.opened_at_ns.begin(), r.opened_at_ns.end());
    std::lock_guard lk(m_);
    start_ = r;
    failure_.clear();
}

void ControllerService::stop_flows(const Setup& s, const json& names) {
    const auto flows = flow_names(s.cfg, names, "traffic.flow_transmit.flow_names");
    // The senders first (each stop returns once its frames had time to arrive), then the
    // engines that only receive them.
    std::vector<size_t> senders, others;
    for (size_t e = 0; e < s.engines.size(); ++e) {
        bool sends = false;
        for (size_t i = 0; i < s.cfg.flows.size(); ++i)
            sends = sends || (s.plan.flow_tx_engine[i] == e &&
                              std::find(flows.begin(), flows.end(), s.cfg.flows[i].name) != flows.end());
        (sends ? senders : others).push_back(e);
    }
    const auto stop = [&](size_t e) { return s.engines[e].client->post("/control/state", traffic_body(flows, "stop")); };
    fan_out(senders, stop);
    fan_out(others, stop);
}

std::vector<std::string> ControllerService::set_state(const json& body) {
    std::lock_guard command(command_m_);
    const auto s = need_setup();
    const std::string choice = body.is_object() ? body.value("choice", "") : "";
    const auto all = indexes(s->engines.size());
    std::vector<std::string> warnings;
    const auto collect = [&](const std::vector<json>& replies) {
        std::set<std::string> seen(warnings.begin(), warnings.end());
        for (const auto& r : replies)
            for (const auto& w : r.value("warnings", json::array()))
                if (w.is_string() && seen.insert(w.get<std::string>()).second) warnings.push_back(w.get<std::string>());
    };
    if (choice == "traffic") {
        const auto& t = body.contains("traffic") ? body["traffic"] : json::object();
        if (t.value("choice", "flow_transmit") != "flow_transmit")
            throw OtgError("traffic.choice", "only flow_transmit");
        if (!t.contains("flow_transmit") || !t["flow_transmit"].is_object())
            throw OtgError("traffic.flow_transmit", "missing: {flow_names, state}");
        const auto& ft = t["flow_transmit"];
        const json names = ft.contains("flow_names") ? ft["flow_names"] : json();
        const std::string state = ft.value("state", "");
        if (state == "start" && traffic_over()) {
            end_supervision();
            start_synchronised(*s, names);
            running_ = true;
            supervisor_ = std::thread([this, s] { supervise(s); });
        } else if (state == "stop") {
            stop_flows(*s, names);
            traffic_over();  // all stopped: the run is over now, not at the supervisor's next look
        } else if (state == "start" || state == "pause" || state == "resume") {
            throw_if_failed();
            const auto flows = flow_names(s->cfg, names, "traffic.flow_transmit.flow_names");
            collect(fan_out(all, [&](size_t e) { return s->engines[e].client->post("/control/state", traffic_body(flows, state)); }));
            if (state != "pause" && !running_) {
                end_supervision();
                running_ = true;
                supervisor_ = std::thread([this, s] { supervise(s); });
            }
        } else {
            throw OtgError("traffic.flow_transmit.state", fmt::format("\"{}\": one of start, stop, pause, resume", state));
        }
        return warnings;
    }
    if (choice == "port") {
        // Each engine is asked about its own ports only.
        const auto& p = body.contains("port") ? body["port"] : json::object();
        const std::string what = p.value("choice", "");
        if (what != "link" && what != "capture") throw OtgError("port.choice", fmt::format("\"{}\": link or capture", what));
        const json& inner = p.contains(what) ? p[what] : json::object();
        std::vector<std::string> named;
        if (inner.contains("port_names") && inner["port_names"].is_array() && !inner["port_names"].empty()) {
            for (size_t k = 0; k < inner["port_names"].size(); ++k) {
                const auto& n = inner["port_names"][k];
                if (!n.is_string() || std::none_of(s->cfg.ports.begin(), s->cfg.ports.end(),
                                                   [&](const OtgPort& x) { return x.name == n.get<std::string>(); }))
                    throw OtgError(fmt::format("port.{}.port_names[{}]", what, k), fmt::format("no port named {}", n.dump()));
                named.push_back(n.get<std::string>());
            }
        } else {
            for (const auto& x : s->cfg.ports) named.push_back(x.name);
        }
        std::vector<size_t> which;
        std::vector<json> bodies(s->engines.size());
        for (size_t e = 0; e < s->engines.size(); ++e) {
            std::vector<std::string> mine;
            for (const auto& n : named)
                if (std::find(s->engines[e].ports.begin(), s->engines[e].ports.end(), n) != s->engines[e].ports.end())
                    mine.push_back(n);
            if (mine.empty()) continue;
            bodies[e] = body;
            bodies[e]["port"][what]["port_names"] = mine;
            which.push_back(e);
        }
        collect(fan_out(which, [&](size_t e) { return s->engines[e].client->post("/control/state", bodies[e]); }));
        return warnings;
    }
    if (choice == "protocol") throw OtgError("choice", "\"protocol\": linerate runs no protocols (ports only)");
    throw OtgError("choice", fmt::format("\"{}\": one of port, traffic", choice));
}

// ---- Watching a run ------------------------------------------------------------------------------

void ControllerService::fail(const Setup& s, const std::string& why) const {
    {
        std::lock_guard lk(m_);
        if (!failure_.empty()) return;
        failure_ = why + "; the other engines were stopped";
    }
    for (const auto& e : s.engines) {  // best effort: the failed one does not answer
        try {
            e.client->post("/control/state", traffic_body({}, "stop"));
        } catch (const std::exception&) {
        }
    }
}

std::vector<EngineView> ControllerService::poll_views(const Setup& s) const {
    const auto all = indexes(s.engines.size());
    std::vector<EngineView> out;
    try {
        const auto replies = fan_out(all, [&](size_t e) {
            const auto j = s.engines[e].client->get("/linerate/engine/view");  // EngineError names the engine
            try {
                return EngineView{view_from_json(j), s.engines[e].clock,
                                  engine_trial_from_json(j.value("trial", json::object()))};
            } catch (const std::runtime_error& x) {
                throw EngineError(fmt::format("engine {} (ports {}) answered a view the controller cannot read: {}",
                                              s.engines[e].endpoint.engine(), joined(s.engines[e].ports), x.what()),
                                  500, {});
            }
        });
        return replies;
    } catch (const OtgError& e) {
        if (!running_) throw OtgError("", e.what(), 500);
        fail(s, e.what());
        std::lock_guard lk(m_);
        throw OtgError("", failure_, 500);
    }
}

MergedView ControllerService::merged(const Setup& s) const {
    throw_if_failed();
    const auto views = poll_views(s);
    try {
        return merge_views(s.plan, views);
    } catch (const std::runtime_error& e) {
        throw OtgError("", std::string("the engines' views do not match the configuration: ") + e.what(), 500);
    }
}

void ControllerService::supervise(std::shared_ptr<const Setup> s) {
    while (!end_) {
        {
            std::unique_lock lk(wait_m_);
            wake_.wait_for(lk, std::chrono::duration<double>(o_.poll_period_s), [&] { return end_.load(); });
        }
        if (end_) break;
        std::vector<EngineView> views;
        try {
            views = poll_views(*s);
        } catch (const OtgError&) {
            break;  // failed: remembered and the others stopped (poll_views)
        }
        // A flow whose sender has finished (sent all, its drain window passed) is stopped on the
        // engines that receive it, which then finish counting.
        bool any = false;
        std::map<size_t, std::vector<std::string>> to_stop;
        for (size_t i = 0; i < s->cfg.flows.size(); ++i) {
            const size_t tx = s->plan.flow_tx_engine[i];
            const bool sent_all = views[tx].view.flows[i].transmit == Transmit::stopped;
            for (size_t e = 0; e < views.size(); ++e) {
                if (views[e].view.flows[i].transmit == Transmit::stopped) continue;
                any = true;
                if (e != tx && sent_all) to_stop[e].push_back(s->cfg.flows[i].name);
            }
        }
        for (const auto& [e, flows] : to_stop) {
            try {
                s->engines[e].client->post("/control/state", traffic_body(flows, "stop"));
            } catch (const EngineError& x) {
                fail(*s, x.what());
                break;
            }
        }
        if (!any) break;  // every flow has stopped everywhere
    }
    running_ = false;
}

// ---- Answers ------------------------------------------------------------------------------------

View ControllerService::view() const {
    const auto s = setup();
    if (!s) return {};
    return merged(*s).view;
}

std::string ControllerService::capture(const std::string& port_name) {
    const auto s = need_setup();
    for (size_t p = 0; p < s->cfg.ports.size(); ++p)
        if (s->cfg.ports[p].name == port_name) {
            const auto& e = s->engines[s->plan.port_engine[p]];
            try {
                return e.client->post_bytes("/monitor/capture", {{"port_name", port_name}});
            } catch (const EngineError& x) {
                std::vector<Refusal> r;
                for (const auto& l : x.lines()) r.push_back({"", fmt::format("engine {}: {}", e.endpoint.engine(), l)});
                if (r.empty()) r.push_back({"", x.what()});
                throw OtgError(r, x.status() >= 400 && x.status() < 500 ? x.status() : 500);
            }
        }
    throw OtgError("port_name", fmt::format("no port named \"{}\"", port_name));
}

json ControllerService::extended_flows() const {
    const auto s = need_setup();
    const json engines = engines_json(*s);
    json out = {{"engines", engines}, {"nonce", s->nonce}};
    {
        std::lock_guard lk(m_);
        if (start_) {
            json per = json::array();
            for (size_t e = 0; e < start_->opened_at_ns.size() && e < s->engines.size(); ++e)
                per.push_back({{"engine", s->engines[e].endpoint.engine()},
                               {"opened_at_ns", start_->opened_at_ns[e]},
                               {"late_ns", start_->late_ns[e]}});
            out["start"] = {{"at_ns", start_->at_ns}, {"skew_ns", start_->skew_ns}, {"engines", per}};
        }
        if (!failure_.empty()) {
            out["failure"] = failure_;
            return out;
        }
    }
    const auto m = merged(*s);
    json flows = json::array();
    for (size_t i = 0; i < m.view.flows.size(); ++i) {
        const auto& f = m.view.flows[i];
        const auto& tx = s->engines[s->plan.flow_tx_engine[i]];
        json j = extended_flow_json(f);
        j["tx_engine"] = tx.endpoint.engine();
        if (!m.buckets[i].empty()) {
            j["latency_p50_ns"] = bucket_quantile(m.buckets[i], 0.5);
            j["latency_p90_ns"] = bucket_quantile(m.buckets[i], 0.9);
            j["latency_p99_ns"] = bucket_quantile(m.buckets[i], 0.99);
            j["latency_p999_ns"] = bucket_quantile(m.buckets[i], 0.999);
        }
        if (f.n.lat_n) {
            const auto& lc = m.latency_clock[i];
            j["latency_basis"] = basis_name(lc.basis);
            if (lc.basis == LatencyBasis::synchronised) j["latency_bound_ns"] = lc.bound_ns;
            if (lc.basis == LatencyBasis::indicative)
                j["latency_note"] = "one-way latency between hosts whose system clocks are not known synchronised: "
                                    "indicative only (docs/multihost.md, Time)";
        }
        if (m.rx_over_tx[i] && f.transmit == Transmit::stopped)
            j["alarm"] = "more frames received than sent: the run is invalid";
        flows.push_back(std::move(j));
    }
    out["flows"] = flows;
    return out;
}

std::string ControllerService::metrics() const {
    const auto s = setup();
    std::vector<std::pair<std::string, std::string>> texts;
    std::string own = "# HELP linerate_controller_engine_up 1 when the engine answered this scrape\n"
                      "# TYPE linerate_controller_engine_up gauge\n";
    if (s) {
        std::vector<std::future<std::optional<std::string>>> asks;
        for (const auto& e : s->engines)
            asks.push_back(std::async(std::launch::async, [&e]() -> std::optional<std::string> {
                try {
                    return e.client->get_text("/metrics");
                } catch (const std::exception&) {
                    return std::nullopt;
                }
            }));
        for (size_t e = 0; e < asks.size(); ++e) {
            const auto text = asks[e].get();
            const auto name = s->engines[e].endpoint.engine();
            own += fmt::format("linerate_controller_engine_up{{host=\"{}\"}} {}\n", name, text ? 1 : 0);
            if (text) texts.emplace_back(name, *text);
        }
    }
    std::lock_guard lk(m_);
    if (start_)
        own += fmt::format("# HELP linerate_controller_start_skew_seconds How far apart the engines opened their flows at "
                           "the last synchronised start\n# TYPE linerate_controller_start_skew_seconds gauge\n"
                           "linerate_controller_start_skew_seconds {:.9f}\n",
                           static_cast<double>(start_->skew_ns) * 1e-9);
    return merge_expositions(texts) + own;
}

// ---- A procedure's trials -------------------------------------------------------------------------

std::map<std::string, std::string> ControllerService::port_locations() const {
    std::map<std::string, std::string> out;
    if (const auto s = setup())
        for (const auto& p : s->cfg.ports) out[p.name] = p.location;
    return out;
}

std::map<std::string, double> ControllerService::port_speeds_bps() const {
    const auto s = setup();
    return s ? s->port_speed_bps : std::map<std::string, double>{};
}

json ControllerService::engines_json() const {
    const auto s = setup();
    return s ? engines_json(*s) : json::array();
}

json ControllerService::engines_json(const Setup& s) {
    json engines = json::array();
    for (const auto& e : s.engines)
        engines.push_back(
            {{"engine", e.endpoint.engine()}, {"ports", e.ports}, {"backend", e.backend}, {"clock", clock_json(e.clock)}});
    return engines;
}

ControllerService::TrialAcross ControllerService::run_trial_across(const json& config, double timeout_s,
                                                                   std::optional<double> stop_after_s) {
    set_config(config);
    const auto s = need_setup();
    std::vector<uint64_t> finished;
    for (const auto& v : poll_views(*s)) finished.push_back(v.trial.finished);
    const auto traffic = [](const char* state) {
        return json{{"choice", "traffic"}, {"traffic", {{"choice", "flow_transmit"}, {"flow_transmit", {{"state", state}}}}}};
    };
    set_state(traffic("start"));
    double sent_for_s = 0;
    if (stop_after_s) {
        const auto t0 = std::chrono::steady_clock::now();
        std::this_thread::sleep_for(std::chrono::duration<double>(*stop_after_s));
        sent_for_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
        set_state(traffic("stop"));
    }
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(timeout_s);
    for (;;) {
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
        throw_if_failed();
        const auto views = poll_views(*s);
        bool done = true;
        for (size_t e = 0; e < views.size(); ++e) done = done && views[e].trial.finished > finished[e];
        if (done) {
            TrialAcross t;
            t.merged = merged(*s);
            for (size_t e = 0; e < views.size(); ++e) {
                t.engines.push_back(views[e].trial);
                t.engine_names.push_back(s->engines[e].endpoint.engine());
            }
            t.flow_tx_engine = s->plan.flow_tx_engine;
            t.sent_for_s = sent_for_s;
            return t;
        }
        if (std::chrono::steady_clock::now() > deadline) {
            std::vector<std::string> waiting;
            for (size_t e = 0; e < views.size(); ++e)
                if (views[e].trial.finished <= finished[e])
                    waiting.push_back(fmt::format("{} (ports {})", s->engines[e].endpoint.engine(), joined(s->engines[e].ports)));
            try {
                stop_flows(*s, json());
            } catch (const OtgError&) {
            }
            throw OtgError("", fmt::format("a procedure's trial did not end within {:.0f} s on engine {}", timeout_s,
                                           joined(waiting)),
                           500);
        }
    }
}

}  // namespace lr::otg
