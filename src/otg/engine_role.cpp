// TrafficService as one engine of several: the configuration of the whole test with the ports
// opened here, a start armed then opened at a set time, and the view a controller merges.
#include <cerrno>
#include <chrono>
#include <ctime>
#include <fmt/format.h>

#include "otg/clock_info.h"
#include "otg/traffic_service.h"
#include "otg/view_json.h"

namespace lr::otg {
namespace {

using nlohmann::json;

uint64_t u64_of(const json& j, const std::string& path) {
    if (j.is_number_unsigned()) return j.get<uint64_t>();
    if (j.is_string()) {
        const auto s = j.get<std::string>();
        size_t used = 0;
        try {
            const auto v = std::stoull(s, &used);
            if (used == s.size()) return v;
        } catch (const std::exception&) {
        }
    }
    throw OtgError(path, fmt::format("{}: not an unsigned integer", j.dump()));
}

}  // namespace

json TrafficService::set_engine_config(const json& body) {
    if (!body.is_object() || !body.contains("config") || !body["config"].is_object())
        throw OtgError("config", "required: the whole test's OTG configuration");
    EngineRole role;
    if (!body.contains("local_ports") || !body["local_ports"].is_array())
        throw OtgError("local_ports", "required: the names of the ports this engine opens");
    for (const auto& p : body["local_ports"]) {
        if (!p.is_string()) throw OtgError("local_ports", fmt::format("{}: not a port name", p.dump()));
        role.local_ports.push_back(p.get<std::string>());
    }
    const uint64_t nonce = u64_of(body.value("nonce", json()), "nonce");
    if (nonce > 0xffffffffull) throw OtgError("nonce", fmt::format("{}: more than 4294967295", nonce));
    if (body.contains("remote_macs")) {
        if (!body["remote_macs"].is_object()) throw OtgError("remote_macs", "an object: port name to MAC address");
        for (const auto& [k, v] : body["remote_macs"].items())
            if (v.is_string()) role.remote_macs[k] = v.get<std::string>();
    }
    if (body.contains("tx_clocks")) {
        const auto& t = body["tx_clocks"];
        if (!t.is_object()) throw OtgError("tx_clocks", "an object: flow name to its sender's clock");
        for (const auto& [flow, c] : t.items()) {
            const std::string path = "tx_clocks." + flow;
            if (!c.is_object() || !c.contains("boot_id") || !c["boot_id"].is_string() ||
                !c.contains("realtime_minus_monotonic_ns") || !c["realtime_minus_monotonic_ns"].is_number_integer())
                throw OtgError(path, "required: boot_id (a string) and realtime_minus_monotonic_ns (an integer)");
            role.tx_clocks[flow] = {c["boot_id"].get<std::string>(), c["realtime_minus_monotonic_ns"].get<int64_t>()};
        }
    }
    const auto local = role.local_ports;
    const auto warnings = apply_config(body["config"], std::move(role), static_cast<uint32_t>(nonce));
    std::lock_guard lk(m_);
    json ports = json::object();
    for (size_t i = 0; cfg_ && i < cfg_->ports.size(); ++i) {
        const auto& p = cfg_->ports[i];
        if (std::find(local.begin(), local.end(), p.name) == local.end()) continue;
        json j = {{"location", p.location}};
        if (session_)
            for (const auto& info : session_->ports())
                if (info.name == p.location && !info.mac.empty()) j["mac"] = info.mac;
        if (const auto speed = rate_speed_bps(*cfg_, p.name)) j["speed_bps"] = *speed;
        ports[p.name] = std::move(j);
    }
    return {{"warnings", warnings}, {"ports", ports}};
}

std::vector<std::string> TrafficService::arm(const json& body) {
    std::unique_lock lk(m_);
    if (lent_) throw OtgError("", "a procedure is running on the ports (POST /linerate/procedure)", 409);
    finish_ended_run(lk);
    if (running_) throw OtgError("", "traffic is running: stop it first", 409);
    const auto flows = flow_indexes(body.is_object() && body.contains("flow_names") ? body["flow_names"] : json(),
                                    "flow_names");
    std::vector<std::string> warnings;
    armed_ = true;  // the run stays while its flows wait
    armed_flows_ = flows;
    try {
        start_flows({}, warnings, lk);
    } catch (...) {
        armed_ = false;
        throw;
    }
    // Armed once the trial's workers run: its receive queues were emptied of an earlier trial's
    // stragglers before, so none of the frames that come after the start is taken for one.
    live_seen_ = false;
    cv_.wait_for(lk, std::chrono::seconds(30), [&] { return live_seen_ || !running_; });
    if (!running_) throw OtgError("", "couldn't start traffic: " + trial_error_, 500);
    return warnings;
}

json TrafficService::go(const json& body) {
    const uint64_t at = u64_of(body.is_object() ? body.value("at_ns", json()) : json(), "at_ns");
    {
        std::lock_guard lk(m_);
        if (!armed_) throw OtgError("", "nothing is armed: arm the flows first (POST /linerate/engine/arm)", 409);
    }
    const timespec when{static_cast<time_t>(at / 1'000'000'000ull), static_cast<long>(at % 1'000'000'000ull)};
    while (clock_nanosleep(CLOCK_REALTIME, TIMER_ABSTIME, &when, nullptr) == EINTR) {
    }
    std::unique_lock lk(m_);
    if (!armed_ || !running_)
        throw OtgError("", "the armed run ended before its start" + (trial_error_.empty() ? "" : ": " + trial_error_), 409);
    std::vector<std::string> warnings;
    const uint64_t opened = realtime_now_ns();
    start_flows(armed_flows_, warnings, lk);  // within the running run: the gates open at once
    armed_ = false;
    return {{"opened_at_ns", opened},
            {"late_ns", opened >= at ? static_cast<int64_t>(opened - at) : -static_cast<int64_t>(at - opened)},
            {"warnings", warnings}};
}

json TrafficService::engine_view() const {
    json j = view_to_json(view());
    std::lock_guard lk(m_);
    j["armed"] = armed_;
    j["running"] = running_;
    j["problem"] = last_problem_;
    j["trial_error"] = trial_error_;
    j["trial"] = last_trial_;
    return j;
}

}  // namespace lr::otg
