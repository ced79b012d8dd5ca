#include "otg/controller_procedures.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <fmt/format.h>
#include <map>
#include <set>
#include <stdexcept>

#include "engine/interrupt.h"
#include "otg/otg_error.h"
#include "procedures/procedures.h"
#include "report/procedure_report.h"
#include "spec/profile.h"
#include "spec/rate.h"
#include "util/error.h"

namespace lr::otg {
namespace {

using nlohmann::json;

struct PortPair {
    std::string tx, rx;  // port names of the trials' configuration
};

// As fast as possible on a port whose link speed nobody knows: the fastest standard Ethernet
// (what an engine takes as such a port's ceiling), a schedule no sender keeps, so each sends
// what it can (its offered rate is what it sent over the time it sent).
constexpr uint64_t kFastestEthernetBps = 800'000'000'000;
// The least OTG bit rate an engine takes (a 64-byte frame a second), and the most frames a flow
// of fixed_packets sends (a uint32).
constexpr uint64_t kLeastBps = 672;
constexpr uint64_t kMostPackets = 0xffffffffull;

// L1 bits of a frame of `size` bytes (FCS included): preamble, start delimiter and gap added.
double l1_bits(unsigned size) { return (size + 20.0) * 8; }

// The trials of a procedure on ports of several engines, through a controller.
class AcrossTrialRunner final : public procedures::TrialRunner {
public:
    AcrossTrialRunner(ControllerService& c, spec::RunSpec s, std::vector<PortPair> pairs,
                      std::map<std::string, std::string> locations)
        : TrialRunner(nullptr), c_(c), spec_(std::move(s)), pairs_(std::move(pairs)), locations_(std::move(locations)) {}

    // A first configuration, no traffic: the engines open the ports and say their link speeds.
    void open_ports() {
        spec::TrialSpec t;
        t.frame_size = spec_.procedure.sizes.empty() ? spec_.frame.frame_size : spec_.procedure.sizes.front();
        c_.set_config(config(t, 0, true));
        speeds_ = c_.port_speeds_bps();
    }
    bool interrupted() const override { return engine::interrupt_requested(); }
    const spec::RunSpec& spec() const override { return spec_; }
    double line_rate_bps() const override {
        if (spec_.line_rate_bps > 0) return spec_.line_rate_bps;
        double bps = 0;
        for (const auto& p : pairs_) {
            const auto it = speeds_.find(p.tx);
            if (it == speeds_.end() || it->second <= 0) return 0;
            bps += it->second;
        }
        return bps;
    }
    // What the trials' one-way latency rested on, when a receiver was on another host than its
    // sender (empty: one clock throughout).
    std::string latency_note() const {
        if (clock_.basis == LatencyBasis::synchronised)
            return fmt::format("one-way latency between hosts read through their system clocks, synchronised within "
                               "±{:.0f} ns (the sum of chrony's or ptp4l's bounds, the worst pair)",
                               clock_.bound_ns);
        if (clock_.basis == LatencyBasis::indicative)
            return "one-way latency between hosts whose system clocks are not known synchronised: indicative only";
        return "";
    }
    double rate_pps(const spec::TrialSpec& t) const override { return spec::to_pps(t.rate, t.frame_size, line_rate_bps()); }
    double mean_frame_size(unsigned frame_size) const override { return frame_size; }
    std::string size_label(unsigned frame_size) const override { return fmt::format("{} B", frame_size); }

protected:
    result::TrialResult trial(const spec::TrialSpec& t, const std::string& why) override;

private:
    json config(const spec::TrialSpec& t, double load_pps, bool held = false) const;
    json flow_packet() const;

    ControllerService& c_;
    spec::RunSpec spec_;
    std::vector<PortPair> pairs_;
    std::map<std::string, std::string> locations_;
    std::map<std::string, double> speeds_;
    unsigned index_ = 0;
    LatencyClock clock_;  // the worst of every trial's flows
};

json AcrossTrialRunner::flow_packet() const {
    const auto value = [](const auto& v) { return json{{"choice", "value"}, {"value", v}}; };
    const auto& f = spec_.frame;
    json packet = json::array();
    packet.push_back({{"choice", "ethernet"}, {"ethernet", {{"src", value(f.src_mac.str())}}}});
    if (f.vlan)
        packet.push_back({{"choice", "vlan"}, {"vlan", {{"id", value(*f.vlan)}, {"priority", value(f.vlan_pcp)}}}});
    const char* ip = f.src_ip.v6 ? "ipv6" : "ipv4";
    packet.push_back({{"choice", ip}, {ip, {{"src", value(f.src_ip.str())}, {"dst", value(f.dst_ip.str())}}}});
    packet.push_back({{"choice", "udp"}, {"udp", {{"src_port", value(f.src_port)}, {"dst_port", value(f.dst_port)}}}});
    return packet;
}

// One flow per port pair, the load and the count shared out evenly. A load is given in L1
// bits/s, exact to 1 bit/s whatever the ports' speeds; 0 is as fast as the sender can (100 % of
// the speed its engine rates the port at, else the fastest Ethernet), stopped after the duration.
json AcrossTrialRunner::config(const spec::TrialSpec& t, double load_pps, bool held) const {
    json ports = json::array();
    std::set<std::string> named;
    for (const auto& p : pairs_)
        for (const auto& n : {p.tx, p.rx})
            if (named.insert(n).second) ports.push_back({{"name", n}, {"location", locations_.at(n)}});
    json flows = json::array();
    const size_t n = pairs_.size();
    for (size_t i = 0; i < n; ++i) {
        const auto& p = pairs_[i];
        json rate;
        const auto speed = speeds_.find(p.tx);
        const double bps = load_pps / static_cast<double>(n) * l1_bits(t.frame_size);
        if (held) {
            rate = {{"choice", "pps"}, {"pps", 1000}};
        } else if (load_pps > 0) {  // L1 bits/s, a whole number: the load to 1 bit/s, whatever the speeds
            if (bps < kLeastBps)
                throw OtgError("", fmt::format("a load of {:g} frames/s per port pair is below the least OTG rate ({} "
                                               "L1 bits/s): raise --min-rate",
                                               load_pps / static_cast<double>(n), kLeastBps));
            rate = {{"choice", "bps"}, {"bps", static_cast<uint64_t>(std::llround(bps))}};
        } else if (speed != speeds_.end() && speed->second > 0) {
            rate = {{"choice", "percentage"}, {"percentage", 100.0}};
        } else {
            rate = {{"choice", "bps"}, {"bps", kFastestEthernetBps}};
        }
        json duration = {{"choice", "continuous"}, {"continuous", json::object()}};
        if (t.count && !held) {
            const uint64_t mine = *t.count / n + (i < *t.count % n ? 1 : 0);
            if (mine > kMostPackets)
                throw OtgError("", fmt::format("a trial of {} frames per port pair is more than OTG's fixed_packets "
                                               "holds ({}): shorten --trial-duration or add port pairs",
                                               mine, kMostPackets));
            duration = {{"choice", "fixed_packets"}, {"fixed_packets", {{"packets", std::max<uint64_t>(1, mine)}}}};
        }
        flows.push_back({{"name", fmt::format("{}-{}", p.tx, p.rx)},
                         {"tx_rx", {{"choice", "port"}, {"port", {{"tx_name", p.tx}, {"rx_names", {p.rx}}}}}},
                         {"packet", flow_packet()},
                         {"size", {{"choice", "fixed"}, {"fixed", t.frame_size}}},
                         {"rate", rate},
                         {"duration", duration},
                         {"metrics", {{"enable", true}, {"latency", {{"enable", true}}}}}});
    }
    return {{"ports", ports}, {"flows", flows}};
}

result::TrialResult AcrossTrialRunner::trial(const spec::TrialSpec& t, const std::string&) {
    const double load = t.rate.limited() ? spec::to_pps(t.rate, t.frame_size, line_rate_bps()) : 0;
    if (load <= 0 && t.count)  // check_and_pair refused it: the end of an unpaced count is not timed
        throw OtgError("count", "an unpaced trial of a count of frames across engines");
    const double planned_s = t.count && load > 0 ? static_cast<double>(*t.count) / load : t.duration_s;
    const auto x = c_.run_trial_across(config(t, load), 3 * planned_s + 30,
                                       load > 0 ? std::nullopt : std::optional<double>(t.duration_s));
    result::TrialResult r;
    r.index = index_++;
    r.trial = t;
    stats::LatencyHistogram::Totals lat;
    std::map<size_t, uint64_t> sent_by;  // per sending engine
    const auto& flows = x.merged.view.flows;
    for (size_t i = 0; i < flows.size(); ++i) {
        const auto& n = flows[i].n;
        r.tx.packets += n.frames_tx;
        r.tx.bytes += n.bytes_tx;
        r.rx.unique += n.frames_rx;
        r.rx.bytes += n.bytes_rx;
        r.rx.reordered += n.reordered;
        r.rx.dup += n.duplicates;
        r.rx.late += n.late;
        sent_by[x.flow_tx_engine[i]] += n.frames_tx;
        result::FlowResult fr;
        fr.stream = static_cast<uint32_t>(i);
        fr.tx_known = true;
        fr.sent = n.frames_tx;
        fr.received = n.frames_rx;
        fr.lost = n.frames_tx - std::min(n.frames_rx, n.frames_tx);
        fr.reordered = n.reordered, fr.duplicates = n.duplicates, fr.late = n.late;
        fr.jitter_ns = n.jitter_ns;
        fr.rx.bytes = n.bytes_rx;
        fr.rx.lat_n = n.lat_n, fr.rx.lat_sum = n.lat_sum_ns;
        if (n.lat_n) fr.rx.lat_min = n.lat_min_ns, fr.rx.lat_max = n.lat_max_ns;
        r.flows.push_back(fr);
        for (const auto& b : x.merged.buckets[i])
            r.latency.add_bucket(b.upper_ns - b.lower_ns <= 1 ? b.lower_ns : b.lower_ns + (b.upper_ns - b.lower_ns) / 2,
                                 b.count);
        if (n.lat_n) {
            lat.count += n.lat_n;
            lat.sum += n.lat_sum_ns;
            lat.min = std::min(lat.min, n.lat_min_ns);
            lat.max = std::max(lat.max, n.lat_max_ns);
        }
        if (n.lat_n) clock_.worsen(x.merged.latency_clock[i]);
        if (x.merged.rx_over_tx[i])
            r.violations.push_back(fmt::format("flow {}: received {} distinct frames, more than the {} sent",
                                               flows[i].name, n.frames_rx, n.frames_tx));
    }
    r.latency.add(lat);
    r.lost = r.tx.packets - std::min(r.rx.unique, r.tx.packets);
    double offered = 0;
    for (size_t e = 0; e < x.engines.size(); ++e) {
        const auto& et = x.engines[e];
        const std::string who = fmt::format("engine {}: ", x.engine_names[e]);
        r.interrupted = r.interrupted || et.interrupted;
        for (const auto& v : et.violations) r.violations.push_back(who + v);
        for (auto o : et.outages) {
            o.port = x.engine_names[e] + " " + o.port;
            r.outages.push_back(o);
        }
        r.tx.skipped += et.tx_skipped;
        r.tx.stalls += et.stalls;
        r.tx.longest_stall_ns = std::max<uint64_t>(r.tx.longest_stall_ns, std::llround(et.longest_stall_s * 1e9));
        r.tx_cpu_wait.longest_s = std::max(r.tx_cpu_wait.longest_s, et.tx_cpu_wait_longest_s);
        r.loss.egress_dropped += et.egress_dropped;
        r.loss.host_rx_dropped += et.host_rx_dropped;
        // Paced: each engine offered its flows' share times the part of its departure slots it
        // filled (engine/aggregate.cpp's rule for queues, here per engine).
        const uint64_t sent = sent_by.count(e) ? sent_by[e] : 0;
        size_t its_flows = 0;
        for (size_t f : x.flow_tx_engine) its_flows += f == e;
        if (load > 0 && sent + et.tx_skipped > 0)
            offered += load * static_cast<double>(its_flows) / static_cast<double>(flows.size()) *
                       static_cast<double>(sent) / static_cast<double>(sent + et.tx_skipped);
    }
    if (load <= 0) offered = x.sent_for_s > 0 ? static_cast<double>(r.tx.packets) / x.sent_for_s : 0;
    r.rate.requested_pps = load;
    r.rate.offered_pps = offered;
    r.rate.skipped = r.tx.skipped;
    r.rate.stalls = r.tx.stalls;
    r.rate.longest_stall_s = r.tx.longest_stall_ns * 1e-9;
    r.rate.line_rate_bps = line_rate_bps();
    r.tx_seconds = load > 0 ? (offered > 0 ? static_cast<double>(r.tx.packets) / offered : 0) : x.sent_for_s;
    return r;
}

// The profile's ports: a name of the configuration in place, else of the location map.
std::map<std::string, std::string> locate(const ControllerService& c, const spec::RunSpec& s) {
    auto known = c.port_locations();
    std::map<std::string, std::string> out;
    const auto find = [&](const std::string& name, const char* option) {
        if (const auto it = known.find(name); it != known.end()) return out[name] = it->second;
        try {
            const auto ep = c.location_map().resolve(name);
            if (c.location_map().size() && ep.engine().size()) return out[name] = name;
        } catch (const std::invalid_argument&) {
        }
        throw OtgError(option, fmt::format("\"{}\": neither a port of the configuration in place (POST /config) nor a "
                                           "name in the location map",
                                           name));
    };
    for (const auto& p : s.tx) find(p.port, "tx");
    for (const auto& p : s.rx) find(p.port, "rx");
    return out;
}

// What a controller runs: fixed frame sizes, one UDP flow per port pair.
std::vector<PortPair> check_and_pair(const spec::RunSpec& s) {
    if (s.procedure.kind == spec::Procedure::run)
        throw OtgError("procedure", "name a procedure: sweep, throughput, latency, frame-loss or back-to-back");
    if (s.tx.empty() || s.rx.empty()) throw OtgError("tx", "a procedure across engines needs tx and rx ports");
    if (s.rx.size() != 1 && s.rx.size() != s.tx.size())
        throw OtgError("rx", fmt::format("{} rx ports for {} tx ports: give one (every tx port sends to it) or one per "
                                         "tx port (in order)",
                                         s.rx.size(), s.tx.size()));
    if (!s.streams.empty()) throw OtgError("stream", "a procedure across engines sends one flow per port pair, no streams");
    if (s.size.varies() || std::count(s.procedure.sizes.begin(), s.procedure.sizes.end(), 0u))
        throw OtgError("size", "a procedure across engines runs fixed frame sizes (--sizes)");
    if (s.flows > 1) throw OtgError("flows", "a procedure across engines sends one flow per port pair");
    if (s.frame.l4 != packet::L4::udp) throw OtgError("l4", "a procedure across engines sends UDP");
    if (s.reflect) throw OtgError("reflect", "a procedure across engines counts frames where they arrive");
    if (s.count && !s.rate.limited())
        throw OtgError("count", "a procedure across engines sends a count of frames at a rate: give --rate with --count "
                                "(as fast as possible, a trial is timed by its duration)");
    std::vector<PortPair> pairs;
    for (size_t i = 0; i < s.tx.size(); ++i) pairs.push_back({s.tx[i].port, s.rx[s.rx.size() == 1 ? 0 : i].port});
    for (const auto& p : pairs)
        if (p.tx == p.rx) throw OtgError("rx", fmt::format("{} both sends and receives: give another rx port", p.tx));
    return pairs;
}

}  // namespace

json run_controller_procedure(ControllerService& controller, const std::string& body) {
    spec::RunSpec s;
    try {
        s = spec::build_profile_spec(spec::parse_profile(body, "request.json"), {});
    } catch (const UsageError& e) {
        throw OtgError("", e.what());
    }
    s.quiet = true;
    auto pairs = check_and_pair(s);
    auto locations = locate(controller, s);
    AcrossTrialRunner run(controller, s, std::move(pairs), std::move(locations));
    try {
        run.open_ports();
        auto r = procedures::run_procedure(run);
        if (const auto note = run.latency_note(); !note.empty()) r.notes.push_back(note);
        const json engines = controller.engines_json();
        json environment = {{"controller", true}, {"engines", engines}};
        auto report = report::procedure_report(s, environment, r);
        // The backend is each engine's own, not the profile's default.
        std::set<std::string> backends;
        for (const auto& e : engines) backends.insert(e.value("backend", ""));
        report["spec"]["backend"] = backends.size() == 1 ? *backends.begin() : std::string("several (see environment.engines)");
        return report;
    } catch (const UsageError& e) {
        throw OtgError("", e.what(), 400);
    } catch (const Error& e) {
        throw OtgError("", e.what(), 500);
    }
}

}  // namespace lr::otg
