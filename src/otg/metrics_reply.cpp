#include "otg/metrics_reply.h"

#include <algorithm>
#include <fmt/format.h>
#include <set>

#include "otg/otg_error.h"

namespace lr::otg {
namespace {

using nlohmann::json;

// Names asked for in `list` (a request's port_names, flow_names, column_names, metric_names),
// each checked against `known`; empty: all.
std::set<std::string> wanted(const json& parent, const char* key, const std::vector<std::string>& known,
                             const std::string& path) {
    std::set<std::string> out;
    if (!parent.is_object() || !parent.contains(key) || parent[key].is_null()) return out;
    const auto& list = parent[key];
    if (!list.is_array()) throw OtgError(path + "." + key, "a list of names");
    std::vector<Refusal> bad;
    for (size_t i = 0; i < list.size(); ++i) {
        const auto& v = list[i];
        if (!v.is_string() || std::find(known.begin(), known.end(), v.get<std::string>()) == known.end())
            bad.push_back({fmt::format("{}.{}[{}]", path, key, i), fmt::format("unknown: {}", v.dump())});
        else
            out.insert(v.get<std::string>());
    }
    if (!bad.empty()) throw OtgError(bad);
    return out;
}

bool shown(const std::set<std::string>& columns, const char* name) { return columns.empty() || columns.count(name); }

const std::vector<std::string> kFlowMetrics = {
    "transmit",     "frames_tx",     "frames_rx",     "bytes_tx",      "bytes_rx",     "frames_tx_rate",
    "frames_rx_rate", "tx_l1_rate_bps", "rx_l1_rate_bps", "tx_rate_bytes", "rx_rate_bytes", "tx_rate_bps",
    "rx_rate_bps",  "tx_rate_kbps",  "rx_rate_kbps",  "tx_rate_mbps",  "rx_rate_mbps"};
const std::vector<std::string> kPortColumns = {
    "transmit",       "location",       "link",          "capture",       "frames_tx", "frames_rx", "bytes_tx",
    "bytes_rx",       "frames_tx_rate", "frames_rx_rate", "bytes_tx_rate", "bytes_rx_rate", "last_change", "speed"};

json flow_metric(const FlowView& f, const std::set<std::string>& m, int64_t realtime_offset) {
    const auto& n = f.n;
    json j = {{"name", f.name}, {"port_tx", f.tx_port}};
    if (!f.rx_port.empty()) j["port_rx"] = f.rx_port;
    const auto put = [&](const char* key, const json& v) {
        if (shown(m, key)) j[key] = v;
    };
    put("transmit", transmit_str(f.transmit));
    put("frames_tx", n.frames_tx);
    put("frames_rx", n.frames_rx);
    put("bytes_tx", n.bytes_tx);
    put("bytes_rx", n.bytes_rx);
    put("frames_tx_rate", f.tx_pps);
    put("frames_rx_rate", f.rx_pps);
    put("tx_l1_rate_bps", f.tx_l1_bps);
    put("rx_l1_rate_bps", f.rx_l1_bps);
    put("tx_rate_bytes", f.tx_l2_bps / 8);
    put("rx_rate_bytes", f.rx_l2_bps / 8);
    put("tx_rate_bps", f.tx_l2_bps);
    put("rx_rate_bps", f.rx_l2_bps);
    put("tx_rate_kbps", f.tx_l2_bps / 1e3);
    put("rx_rate_kbps", f.rx_l2_bps / 1e3);
    put("tx_rate_mbps", f.tx_l2_bps / 1e6);
    put("rx_rate_mbps", f.rx_l2_bps / 1e6);
    j["loss"] = n.loss_pct();
    if (f.timestamps) {
        j["timestamps"] = json::object();
        if (n.first_rx_ns) {
            j["timestamps"]["first_timestamp_ns"] = static_cast<double>(static_cast<int64_t>(n.first_rx_ns) + realtime_offset);
            j["timestamps"]["last_timestamp_ns"] = static_cast<double>(static_cast<int64_t>(n.last_rx_ns) + realtime_offset);
        }
    }
    if (f.latency) {
        j["latency"] = json::object();
        if (n.lat_n) {
            j["latency"]["minimum_ns"] = static_cast<double>(n.lat_min_ns);
            j["latency"]["maximum_ns"] = static_cast<double>(n.lat_max_ns);
            j["latency"]["average_ns"] = static_cast<double>(n.lat_sum_ns) / static_cast<double>(n.lat_n);
        }
    }
    return j;
}

json port_metric(const PortView& p, const std::set<std::string>& c) {
    json j = {{"name", p.name}};
    const auto put = [&](const char* key, const json& v) {
        if (shown(c, key)) j[key] = v;
    };
    put("location", p.location);
    put("link", p.link_up ? "up" : "down");
    put("capture", p.capturing ? "started" : "stopped");
    put("transmit", transmit_str(p.transmit == Transmit::paused ? Transmit::started : p.transmit));
    put("frames_tx", p.n.frames_tx);
    put("frames_rx", p.n.frames_rx);
    put("bytes_tx", p.n.bytes_tx);
    put("bytes_rx", p.n.bytes_rx);
    put("frames_tx_rate", p.tx_pps);
    put("frames_rx_rate", p.rx_pps);
    put("bytes_tx_rate", p.tx_bytes_per_s);
    put("bytes_rx_rate", p.rx_bytes_per_s);
    if (p.speed_bps > 0) put("speed", static_cast<uint64_t>(p.speed_bps / 8 / 1000));  // the model's KBps
    return j;
}

}  // namespace

json metrics_reply(const json& request, const View& view) {
    if (!request.is_object()) throw OtgError("", "a Metrics.Request object");
    const std::string choice = request.value("choice", "port");
    if (choice == "flow") {
        const json& f = request.contains("flow") ? request["flow"] : json::object();
        std::vector<std::string> names;
        for (const auto& x : view.flows) names.push_back(x.name);
        const auto flows = wanted(f, "flow_names", names, "flow");
        const auto metrics = wanted(f, "metric_names", kFlowMetrics, "flow");
        if (f.is_object() && f.contains("tagged_metrics") && f["tagged_metrics"].is_object() &&
            f["tagged_metrics"].value("include", true) && f["tagged_metrics"].contains("filters") &&
            !f["tagged_metrics"]["filters"].empty())
            throw OtgError("flow.tagged_metrics.filters", "linerate has no metric tags");
        json a = json::array();
        for (const auto& x : view.flows)
            if (flows.empty() || flows.count(x.name)) a.push_back(flow_metric(x, metrics, view.realtime_minus_monotonic_ns));
        return {{"choice", "flow_metrics"}, {"flow_metrics", a}};
    }
    if (choice == "port") {
        const json& p = request.contains("port") ? request["port"] : json::object();
        std::vector<std::string> names;
        for (const auto& x : view.ports) names.push_back(x.name);
        const auto ports = wanted(p, "port_names", names, "port");
        const auto columns = wanted(p, "column_names", kPortColumns, "port");
        json a = json::array();
        for (const auto& x : view.ports)
            if (ports.empty() || ports.count(x.name)) a.push_back(port_metric(x, columns));
        return {{"choice", "port_metrics"}, {"port_metrics", a}};
    }
    throw OtgError("choice", fmt::format("\"{}\": linerate reports port and flow metrics", choice));
}

}  // namespace lr::otg
