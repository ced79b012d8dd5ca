#include "otg/view_json.h"

#include <stdexcept>

namespace lr::otg {
namespace {

using nlohmann::json;

json numbers_json(const FlowNumbers& n) {
    json b = json::array();
    for (const auto& x : n.lat_buckets) b.push_back({x.lower_ns, x.upper_ns, x.count});
    return {{"frames_tx", n.frames_tx},     {"bytes_tx", n.bytes_tx},       {"frames_rx", n.frames_rx},
            {"bytes_rx", n.bytes_rx},       {"reordered", n.reordered},     {"duplicates", n.duplicates},
            {"late", n.late},               {"lat_n", n.lat_n},             {"lat_sum_ns", n.lat_sum_ns},
            {"lat_min_ns", n.lat_min_ns},   {"lat_max_ns", n.lat_max_ns},   {"first_rx_ns", n.first_rx_ns},
            {"last_rx_ns", n.last_rx_ns},   {"jitter_ns", n.jitter_ns},     {"lat_buckets", b}};
}

FlowNumbers numbers_from(const json& j) {
    FlowNumbers n;
    n.frames_tx = j.at("frames_tx").get<uint64_t>();
    n.bytes_tx = j.at("bytes_tx").get<uint64_t>();
    n.frames_rx = j.at("frames_rx").get<uint64_t>();
    n.bytes_rx = j.at("bytes_rx").get<uint64_t>();
    n.reordered = j.at("reordered").get<uint64_t>();
    n.duplicates = j.at("duplicates").get<uint64_t>();
    n.late = j.at("late").get<uint64_t>();
    n.lat_n = j.at("lat_n").get<uint64_t>();
    n.lat_sum_ns = j.at("lat_sum_ns").get<uint64_t>();
    n.lat_min_ns = j.at("lat_min_ns").get<uint64_t>();
    n.lat_max_ns = j.at("lat_max_ns").get<uint64_t>();
    n.first_rx_ns = j.at("first_rx_ns").get<uint64_t>();
    n.last_rx_ns = j.at("last_rx_ns").get<uint64_t>();
    n.jitter_ns = j.at("jitter_ns").get<double>();
    for (const auto& b : j.at("lat_buckets"))
        n.lat_buckets.push_back({b.at(0).get<uint64_t>(), b.at(1).get<uint64_t>(), b.at(2).get<uint64_t>()});
    return n;
}

json port_numbers_json(const PortNumbers& n) {
    return {{"frames_tx", n.frames_tx}, {"bytes_tx", n.bytes_tx}, {"frames_rx", n.frames_rx}, {"bytes_rx", n.bytes_rx}};
}

PortNumbers port_numbers_from(const json& j) {
    PortNumbers n;
    n.frames_tx = j.at("frames_tx").get<uint64_t>();
    n.bytes_tx = j.at("bytes_tx").get<uint64_t>();
    n.frames_rx = j.at("frames_rx").get<uint64_t>();
    n.bytes_rx = j.at("bytes_rx").get<uint64_t>();
    return n;
}

}  // namespace

Transmit transmit_from(const std::string& s) {
    if (s == "started") return Transmit::started;
    if (s == "paused") return Transmit::paused;
    if (s == "stopped") return Transmit::stopped;
    throw std::runtime_error("transmit \"" + s + "\": not started, paused or stopped");
}

json extended_flow_json(const FlowView& f) {
    const auto& n = f.n;
    json j = {{"name", f.name},
              {"transmit", transmit_str(f.transmit)},
              {"frames_tx", n.frames_tx},
              {"frames_rx", n.frames_rx},
              {"lost", n.frames_tx > n.frames_rx ? n.frames_tx - n.frames_rx : 0},
              {"reordered", n.reordered},
              {"duplicates", n.duplicates},
              {"late", n.late},
              {"latency_frames", n.lat_n}};
    if (n.lat_n) {
        j["latency_min_ns"] = n.lat_min_ns;
        j["latency_max_ns"] = n.lat_max_ns;
        j["latency_mean_ns"] = static_cast<double>(n.lat_sum_ns) / static_cast<double>(n.lat_n);
    }
    if (n.jitter_ns > 0) j["jitter_ns"] = n.jitter_ns;
    return j;
}

json view_to_json(const View& v) {
    json flows = json::array(), ports = json::array();
    for (const auto& f : v.flows)
        flows.push_back({{"name", f.name},
                         {"tx_port", f.tx_port},
                         {"rx_port", f.rx_port},
                         {"transmit", transmit_str(f.transmit)},
                         {"n", numbers_json(f.n)},
                         {"tx_pps", f.tx_pps},
                         {"rx_pps", f.rx_pps},
                         {"tx_l2_bps", f.tx_l2_bps},
                         {"rx_l2_bps", f.rx_l2_bps},
                         {"tx_l1_bps", f.tx_l1_bps},
                         {"rx_l1_bps", f.rx_l1_bps},
                         {"latency", f.latency},
                         {"timestamps", f.timestamps}});
    for (const auto& p : v.ports)
        ports.push_back({{"name", p.name},
                         {"location", p.location},
                         {"link_up", p.link_up},
                         {"capturing", p.capturing},
                         {"transmit", transmit_str(p.transmit)},
                         {"n", port_numbers_json(p.n)},
                         {"tx_pps", p.tx_pps},
                         {"rx_pps", p.rx_pps},
                         {"tx_bytes_per_s", p.tx_bytes_per_s},
                         {"rx_bytes_per_s", p.rx_bytes_per_s},
                         {"speed_bps", p.speed_bps}});
    return {{"flows", flows}, {"ports", ports}, {"realtime_minus_monotonic_ns", v.realtime_minus_monotonic_ns}};
}

View view_from_json(const json& j) {
    try {
        View v;
        v.realtime_minus_monotonic_ns = j.at("realtime_minus_monotonic_ns").get<int64_t>();
        for (const auto& f : j.at("flows")) {
            FlowView fv;
            fv.name = f.at("name").get<std::string>();
            fv.tx_port = f.at("tx_port").get<std::string>();
            fv.rx_port = f.at("rx_port").get<std::string>();
            fv.transmit = transmit_from(f.at("transmit").get<std::string>());
            fv.n = numbers_from(f.at("n"));
            fv.tx_pps = f.at("tx_pps").get<double>();
            fv.rx_pps = f.at("rx_pps").get<double>();
            fv.tx_l2_bps = f.at("tx_l2_bps").get<double>();
            fv.rx_l2_bps = f.at("rx_l2_bps").get<double>();
            fv.tx_l1_bps = f.at("tx_l1_bps").get<double>();
            fv.rx_l1_bps = f.at("rx_l1_bps").get<double>();
            fv.latency = f.at("latency").get<bool>();
            fv.timestamps = f.at("timestamps").get<bool>();
            v.flows.push_back(std::move(fv));
        }
        for (const auto& p : j.at("ports")) {
            PortView pv;
            pv.name = p.at("name").get<std::string>();
            pv.location = p.at("location").get<std::string>();
            pv.link_up = p.at("link_up").get<bool>();
            pv.capturing = p.at("capturing").get<bool>();
            pv.transmit = transmit_from(p.at("transmit").get<std::string>());
            pv.n = port_numbers_from(p.at("n"));
            pv.tx_pps = p.at("tx_pps").get<double>();
            pv.rx_pps = p.at("rx_pps").get<double>();
            pv.tx_bytes_per_s = p.at("tx_bytes_per_s").get<double>();
            pv.rx_bytes_per_s = p.at("rx_bytes_per_s").get<double>();
            pv.speed_bps = p.at("speed_bps").get<double>();
            v.ports.push_back(std::move(pv));
        }
        return v;
    } catch (const nlohmann::json::exception& e) {
        throw std::runtime_error(std::string("not an engine view: ") + e.what());
    }
}

nlohmann::json engine_trial_json(const result::TrialResult& r) {
    nlohmann::json outages = nlohmann::json::array();
    for (const auto& o : r.outages)
        outages.push_back({{"port", o.port}, {"from", o.from}, {"to", o.to}, {"seconds", o.seconds},
                           {"handed", o.handed}, {"egress_dropped", o.egress_dropped}, {"received", o.received}});
    return {{"interrupted", r.interrupted},
            {"violations", r.violations},
            {"outages", outages},
            {"tx_packets", r.tx.packets},
            {"tx_skipped", r.tx.skipped},
            {"stalls", r.tx.stalls},
            {"longest_stall_s", r.tx.longest_stall_ns * 1e-9},
            {"tx_cpu_wait_longest_s", r.tx_cpu_wait.longest_s},
            {"tx_seconds", r.tx_seconds},
            {"rx_unique", r.rx.unique},
            {"egress_dropped", r.loss.egress_dropped},
            {"host_rx_dropped", r.loss.host_rx_dropped}};
}

EngineTrial engine_trial_from_json(const nlohmann::json& j) {
    EngineTrial t;
    if (!j.is_object()) throw std::runtime_error("trial: not an object");
    t.finished = j.value("finished", uint64_t{0});
    if (!t.finished) return t;
    t.interrupted = j.at("interrupted").get<bool>();
    t.violations = j.at("violations").get<std::vector<std::string>>();
    for (const auto& o : j.at("outages"))
        t.outages.push_back({o.at("port").get<std::string>(), o.at("from").get<double>(), o.at("to").get<double>(),
                             o.at("seconds").get<double>(), o.at("handed").get<uint64_t>(),
                             o.at("egress_dropped").get<uint64_t>(), o.at("received").get<uint64_t>()});
    t.tx_packets = j.at("tx_packets").get<uint64_t>();
    t.tx_skipped = j.at("tx_skipped").get<uint64_t>();
    t.stalls = j.at("stalls").get<uint64_t>();
    t.longest_stall_s = j.at("longest_stall_s").get<double>();
    t.tx_cpu_wait_longest_s = j.at("tx_cpu_wait_longest_s").get<double>();
    t.tx_seconds = j.at("tx_seconds").get<double>();
    t.rx_unique = j.at("rx_unique").get<uint64_t>();
    t.egress_dropped = j.at("egress_dropped").get<uint64_t>();
    t.host_rx_dropped = j.at("host_rx_dropped").get<uint64_t>();
    return t;
}

}  // namespace lr::otg
