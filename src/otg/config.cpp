#include "otg/config.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <fmt/format.h>
#include <map>
#include <set>

#include "otg/flow_packet.h"
#include "otg/flow_traffic.h"
#include "otg/json_fields.h"
#include "packet/signature.h"
#include "spec/rate.h"
#include "util/error.h"

namespace lr::otg {
namespace {

using Names = std::set<std::string, std::less<>>;

// Layer1.speed: the model's names and their bits per second (half duplex is refused).
struct Speed {
    std::string_view name;
    double bps;
    bool half_duplex;
};
constexpr Speed kSpeeds[] = {
    {"speed_10_fd_mbps", 10e6, false}, {"speed_10_hd_mbps", 10e6, true},   {"speed_100_fd_mbps", 100e6, false},
    {"speed_100_hd_mbps", 100e6, true}, {"speed_1_gbps", 1e9, false},      {"speed_10_gbps", 10e9, false},
    {"speed_25_gbps", 25e9, false},     {"speed_40_gbps", 40e9, false},    {"speed_50_gbps", 50e9, false},
    {"speed_100_gbps", 100e9, false},   {"speed_200_gbps", 200e9, false},  {"speed_400_gbps", 400e9, false},
    {"speed_800_gbps", 800e9, false},
};

void refuse_if_listed(Reader& r, const Field& f, std::string_view why) {
    if (r.array(f) > 0) r.refuse(f, std::string(why));
}

// A name the model requires, unique among `seen` (which it joins).
std::string unique_name(Reader& r, const Field& f, Names& seen, std::string_view kind) {
    if (!r.required(f)) return {};
    const auto name = r.string(f).value_or("");
    if (name.empty() && f.json().is_string()) r.refuse(f, "an empty name");
    else if (!name.empty() && !seen.insert(name).second) r.refuse(f, fmt::format("a second {} named \"{}\"", kind, name));
    return name;
}

// A port name: one of the configured ports.
std::optional<std::string> port_name(Reader& r, const Field& f, const Names& ports) {
    const auto name = r.string(f);
    if (name && !ports.count(*name)) {
        r.refuse(f, fmt::format("no port is named \"{}\"", *name));
        return std::nullopt;
    }
    return name;
}

// A list of port names, each configured and (when `owner` is given) in no other object of
// its kind ("layer1[0]", "captures[1]").
std::vector<std::string> port_list(Reader& r, const Field& f, const Names& ports,
                                   std::map<std::string, std::string>* owner, const std::string& owner_path) {
    std::vector<std::string> out;
    if (!r.required(f)) return out;
    const size_t n = r.array(f);
    for (size_t k = 0; k < n; ++k) {
        const auto name = port_name(r, f.at(k), ports);
        if (!name) continue;
        if (owner) {
            const auto [it, fresh] = owner->emplace(*name, owner_path);
            if (!fresh) {
                r.refuse(f.at(k), fmt::format("port {} is in {} already: a port may be in one", *name, it->second));
                continue;
            }
        }
        out.push_back(*name);
    }
    return out;
}

std::vector<OtgPort> read_ports(Reader& r, const Field& list, Names& names) {
    std::vector<OtgPort> out;
    const size_t n = r.array(list);
    for (size_t i = 0; i < n; ++i) {
        const auto p = list.at(i);
        r.object(p, {"name", "location"});
        OtgPort port;
        port.name = unique_name(r, p["name"], names, "port");
        port.location = r.string(p["location"]).value_or("");
        if (port.location.empty())
            r.refuse(p["location"], "linerate needs the interface (or DPDK port) to send and receive by: give a location");
        out.push_back(std::move(port));
    }
    return out;
}

std::vector<OtgLayer1> read_layer1(Reader& r, const Field& list, const Names& ports) {
    std::vector<OtgLayer1> out;
    Names names;
    std::map<std::string, std::string> owner;
    const size_t n = r.array(list);
    for (size_t i = 0; i < n; ++i) {
        const auto l = list.at(i);
        r.object(l, {"port_names", "speed", "media", "promiscuous", "mtu", "ieee_media_defaults", "auto_negotiate",
                     "auto_negotiation", "flow_control", "name"});
        OtgLayer1 l1;
        l1.path = l.path();
        l1.name = unique_name(r, l["name"], names, "layer1 entry");
        l1.ports = port_list(r, l["port_names"], ports, &owner, l1.path);
        std::vector<std::string_view> speeds;
        for (const auto& s : kSpeeds) speeds.push_back(s.name);
        if (const auto s = r.one_of(l["speed"], speeds)) {
            if (kSpeeds[*s].half_duplex) r.refuse(l["speed"], "half duplex: linerate's links are full duplex");
            else l1.speed_bps = kSpeeds[*s].bps;
        }
        l1.mtu = r.uint32(l["mtu"], 64, 14000).value_or(0);
        l1.promiscuous = r.boolean(l["promiscuous"]);
        constexpr std::string_view kLink = "linerate leaves the link's media and negotiation to the interface";
        for (const auto key : {"media", "ieee_media_defaults", "auto_negotiate"})
            if (l[key].present()) r.refuse(l[key], fmt::format("{}: leave {} out", kLink, key));
        const auto an = l["auto_negotiation"];
        const std::pair<std::string_view, bool> an_defaults[] = {
            {"advertise_1000_mbps", true}, {"advertise_100_fd_mbps", true}, {"advertise_100_hd_mbps", true},
            {"advertise_10_fd_mbps", true}, {"advertise_10_hd_mbps", true}, {"link_training", false},
            {"rs_fec", false}};
        if (r.object(an, {"advertise_1000_mbps", "advertise_100_fd_mbps", "advertise_100_hd_mbps",
                          "advertise_10_fd_mbps", "advertise_10_hd_mbps", "link_training", "rs_fec"}))
            for (const auto& [key, def] : an_defaults)
                if (r.boolean(an[key]).value_or(def) != def)
                    r.refuse(an[key], fmt::format("{} (its default) only: {}", def ? "true" : "false", kLink));
        const auto fc = l["flow_control"];
        if (r.object(fc, {"directed_address", "choice", "ieee_802_1qbb", "ieee_802_3x"})) {
            auto dir = r.string(fc["directed_address"]).value_or("01:80:c2:00:00:01");
            std::transform(dir.begin(), dir.end(), dir.begin(), [](unsigned char c) { return std::tolower(c); });
            const auto choice = r.one_of(fc["choice"], {"ieee_802_1qbb", "ieee_802_3x"}).value_or(0);
            if (dir != "01:80:c2:00:00:01" || choice != 0 || fc["ieee_802_1qbb"].present() ||
                fc["ieee_802_3x"].present())
                r.refuse(fc, "linerate sends no pause or PFC frames: leave flow_control out");
        }
        out.push_back(std::move(l1));
    }
    return out;
}

std::vector<OtgCapture> read_captures(Reader& r, const Field& list, const Names& ports) {
    std::vector<OtgCapture> out;
    Names names;
    std::map<std::string, std::string> owner;
    const size_t n = r.array(list);
    for (size_t i = 0; i < n; ++i) {
        const auto c = list.at(i);
        r.object(c, {"port_names", "filters", "overwrite", "packet_size", "format", "name"});
        OtgCapture cap;
        cap.path = c.path();
        cap.name = unique_name(r, c["name"], names, "capture");
        cap.ports = port_list(r, c["port_names"], ports, &owner, cap.path);
        refuse_if_listed(r, c["filters"], "linerate captures every frame: leave filters empty (filter the pcap file)");
        r.boolean(c["overwrite"]);
        if (c["packet_size"].present())
            r.refuse(c["packet_size"], "linerate captures whole frames: leave packet_size out");
        if (r.one_of(c["format"], {"pcap", "pcapng"}).value_or(0) == 1)
            r.refuse(c["format"], "pcap only: linerate writes classic pcap files");
        out.push_back(std::move(cap));
    }
    return out;
}

void read_options(Reader& r, const Field& o) {
    if (!r.object(o, {"port_options", "protocol_options", "per_port_options", "flow_options"})) return;
    const auto po = o["port_options"];
    if (r.object(po, {"location_preemption", "data_integrity", "frame_ordering_mode"})) {
        r.boolean(po["location_preemption"]);  // linerate's ports are its own: nothing to preempt
        if (r.boolean(po["data_integrity"]).value_or(false))
            r.refuse(po["data_integrity"], "false only: linerate keeps no data integrity counters");
        if (po["frame_ordering_mode"].present())
            r.refuse(po["frame_ordering_mode"], "linerate sends each flow's frames in order: leave it out");
    }
    const auto pr = o["protocol_options"];
    if (r.object(pr, {"auto_start_all"})) r.boolean(pr["auto_start_all"]);  // no protocols: nothing to start
    refuse_if_listed(r, o["per_port_options"], "linerate runs no protocols: leave per_port_options empty");
    const auto fo = o["flow_options"];
    if (r.object(fo, {"packet_loss_duration"}) && r.boolean(fo["packet_loss_duration"]).value_or(false))
        r.refuse(fo["packet_loss_duration"], "false only: linerate does not measure how long loss lasts");
}

void read_events(Reader& r, const Field& e) {
    if (!r.object(e, {"cp_events", "dp_events"})) return;
    const auto cp = e["cp_events"];
    if (r.object(cp, {"enable"}) && r.boolean(cp["enable"]).value_or(false))
        r.refuse(cp["enable"], "false only: linerate reports no control plane events");
    const auto dp = e["dp_events"];
    if (r.object(dp, {"enable", "rx_rate_threshold"})) {
        r.number(dp["rx_rate_threshold"], 0, 100);
        if (r.boolean(dp["enable"]).value_or(false))
            r.refuse(dp["enable"], "false only: linerate reports no data plane events");
    }
}

// flows[i].tx_rx: port to port only.
void read_tx_rx(Reader& r, const Field& tx_rx, const Names& ports, OtgFlow& flow) {
    if (!r.required(tx_rx) || !r.object(tx_rx, {"choice", "port", "device"})) return;
    if (r.one_of(tx_rx["choice"], {"port", "device"}).value_or(0) == 1) {
        r.refuse(tx_rx, "device is not supported: linerate's flows go port to port (choice port), with no emulated "
                        "devices");
        return;
    }
    const auto p = tx_rx["port"];
    if (!r.required(p) || !r.object(p, {"tx_name", "rx_name", "rx_names"})) return;
    if (r.required(p["tx_name"])) flow.tx_port = port_name(r, p["tx_name"], ports).value_or("");
    const size_t n = r.array(p["rx_names"]);
    for (size_t k = 0; k < n; ++k)
        if (const auto name = port_name(r, p["rx_names"].at(k), ports)) flow.rx_ports.push_back(*name);
    if (const auto one = port_name(r, p["rx_name"], ports))  // deprecated, taken as one more
        if (std::find(flow.rx_ports.begin(), flow.rx_ports.end(), *one) == flow.rx_ports.end())
            flow.rx_ports.push_back(*one);
}

// One flow; `bit_rate` is set when its rate is in bits per second.
OtgFlow read_flow(Reader& r, const Field& f, size_t index, const Names& ports, Names& names,
                  std::vector<std::string>& warnings, bool& bit_rate) {
    OtgFlow flow;
    flow.path = f.path();
    r.object(f, {"name", "tx_rx", "packet", "egress_packet", "size", "rate", "duration", "metrics", "payload"});
    flow.name = unique_name(r, f["name"], names, "flow");
    if (const auto why = spec::stream_name_problem(flow.name); !flow.name.empty() && !why.empty())
        r.refuse(f["name"], why);
    read_tx_rx(r, f["tx_rx"], ports, flow);
    const size_t before = r.refusal_count();
    const auto pkt = read_packet(r, f["packet"], kMaxFlowFrames);
    refuse_if_listed(r, f["egress_packet"], "linerate does not describe egress packets: leave egress_packet out");
    const packet::FrameSpec kind = pkt.frames.empty() ? packet::FrameSpec{} : pkt.frames.front();
    read_size(r, f["size"], kind, flow, warnings);
    bit_rate |= read_rate(r, f["rate"], flow);
    read_duration(r, f["duration"], flow);
    read_metrics(r, f["metrics"], flow);
    read_payload(r, f["payload"]);
    auto& st = flow.stream;
    st.name = flow.name;
    st.typed = fmt::format("{} \"{}\"", flow.path, flow.name);
    st.seed = index + 1;  // random sizes: a seed of each flow's own
    flow.dst_mac_auto = pkt.dst_mac_auto;
    if (r.refusal_count() > before) return flow;
    const unsigned smallest = st.size.smallest();
    st.flow_frames = pkt.frames;
    for (auto& fr : st.flow_frames) fr.frame_size = smallest;
    st.frame = st.flow_frames.front();
    try {  // what build_frame checks beyond the fields (sizes against the frame kind)
        auto big = st.frame;
        big.frame_size = st.size.largest();
        (void)packet::build_frame(st.frame);
        (void)packet::build_frame(big);
    } catch (const UsageError& e) {
        r.refuse(f["size"], e.what());
    }
    const bool zero_src = std::any_of(st.flow_frames.begin(), st.flow_frames.end(),
                                      [](const packet::FrameSpec& fr) { return fr.src_mac == packet::MacAddr{}; });
    if (zero_src)
        warnings.push_back(fmt::format("{}: ethernet.src is 00:00:00:00:00:00 (the model's default): a Linux bridge "
                                       "drops frames from a zero source MAC; give the sending port's MAC",
                                       st.typed));
    if (packet::sig_layout(st.frame).level == packet::SigLevel::none)
        warnings.push_back(fmt::format("{}: {}-byte frames have no room for linerate's signature: its frames are "
                                       "counted as sent, but no receiver can tell them apart",
                                       st.typed, smallest));
    return flow;
}

}  // namespace

OtgConfig parse_config(const nlohmann::json& body) {
    Reader r;
    OtgConfig c;
    c.as_set = body;
    const Field root(body);
    if (!body.is_object()) throw OtgError(std::vector<Refusal>{{"", "a Config is a JSON object"}});
    r.object(root, {"ports", "lags", "layer1", "captures", "devices", "flows", "events", "options", "lldp",
                    "stateful_flows", "egress_only_tracking"});
    refuse_if_listed(r, root["lags"], "linerate has no LAGs: leave lags empty");
    refuse_if_listed(r, root["devices"], "linerate's flows go port to port, with no emulated devices: leave devices empty");
    refuse_if_listed(r, root["lldp"], "linerate runs no LLDP: leave lldp empty");
    refuse_if_listed(r, root["egress_only_tracking"], "linerate does not track egress-only traffic: leave it empty");
    if (root["stateful_flows"].present())
        r.refuse(root["stateful_flows"], "linerate has no stateful (RoCEv2) flows: leave stateful_flows out");
    read_events(r, root["events"]);
    read_options(r, root["options"]);
    Names ports;
    c.ports = read_ports(r, root["ports"], ports);
    c.layer1 = read_layer1(r, root["layer1"], ports);
    c.captures = read_captures(r, root["captures"], ports);
    Names flow_names;
    bool bit_rate = false;
    std::vector<std::string> bit_rate_flows;
    const auto flows = root["flows"];
    const size_t n = r.array(flows);
    uint64_t frames = 0;
    for (size_t i = 0; i < n; ++i) {
        bool bits = false;
        c.flows.push_back(read_flow(r, flows.at(i), i, ports, flow_names, c.warnings, bits));
        if (bits) bit_rate_flows.push_back(c.flows.back().stream.typed);
        bit_rate |= bits;
        frames += c.flows.back().stream.flow_frames.size();
    }
    if (frames > packet::kMaxSignedFlows)
        r.refuse(flows, fmt::format("the flows have {} distinct packets in all: linerate builds a frame for each, and "
                                    "its signature tells at most {} apart",
                                    frames, packet::kMaxSignedFlows));
    if (bit_rate)
        c.warnings.push_back(fmt::format("linerate reads OTG bit rates (rate.bps, kbps, mbps, gbps) at layer 1: "
                                         "preamble, SFD and inter-frame gap included (20 bytes per frame); {}",
                                         fmt::join(bit_rate_flows, ", ")));
    r.throw_if_refused();
    return c;
}

void resolve_counts_and_rates(OtgConfig& config, const PortSpeed& port_speed_l1_bps) {
    std::vector<Refusal> refused;
    for (auto& f : config.flows) {
        auto& st = f.stream;
        std::optional<double> speed;
        if (f.rate_percent || f.delay_bytes || f.inter_burst_gap_bytes) speed = port_speed_l1_bps(f.tx_port);
        if (speed && !(*speed > 0)) speed.reset();
        const auto unknown = [&](const std::string& path, std::string_view what) {
            refused.push_back({path, fmt::format("{} needs the speed of port {}, which is unknown: give it a layer1 "
                                                 "speed, or start linerate serve with --line-rate",
                                                 what, f.tx_port)});
        };
        if (f.rate_percent) {
            if (speed) st.rate = spec::RateSpec(spec::RateSpec::Unit::l1_bps, *f.rate_percent / 100 * *speed);
            else unknown(f.path + ".rate.percentage", "a percentage");
        }
        if (f.delay_bytes) {
            if (speed) st.delay_s = f.delay_bytes->bytes * 8 / *speed;
            else unknown(f.delay_bytes->path, "a delay in bytes");
        }
        if (f.inter_burst_gap_bytes) {
            // Up to the standard 12 bytes the gap is the inter-frame gap: bursts back to back.
            if (speed) st.burst_gap_s = f.inter_burst_gap_bytes->bytes * 8 / *speed;
            else if (f.inter_burst_gap_bytes->bytes <= 12) st.burst_gap_s = 0;
            else unknown(f.inter_burst_gap_bytes->path, "a gap in bytes");
        }
        if (f.fixed_seconds && st.rate) {
            const double pps = spec::to_pps(*st.rate, st.size.mean(), 0);
            st.count = std::max<uint64_t>(1, static_cast<uint64_t>(std::llround(pps * *f.fixed_seconds)));
        }
    }
    if (!refused.empty()) throw OtgError(std::move(refused));
}

}  // namespace lr::otg
