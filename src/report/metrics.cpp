#include "report/metrics.h"

#include <fmt/format.h>
#include <prometheus/counter.h>
#include <prometheus/exposer.h>
#include <prometheus/gauge.h>
#include <prometheus/histogram.h>
#include <prometheus/registry.h>
#include <prometheus/text_serializer.h>

#include "report/metric_values.h"
#include "spec/parse.h"
#include "util/error.h"

namespace lr::report {
namespace {

std::string key_of(const prometheus::Family<prometheus::Counter>& f, const std::map<std::string, std::string>& l) {
    std::string k = f.GetName();
    for (const auto& [a, b] : l) k += "|" + a + "=" + b;
    return k;
}

}  // namespace

MetricsSink::MetricsSink(const std::string& listen) {
    const auto where = spec::parse_listen(listen, "--metrics");
    address_ = fmt::format("{}:{}", where.host, where.port);
    try {
        exposer_ = std::make_unique<prometheus::Exposer>(address_);
    } catch (const std::exception& e) {
        throw EnvError(fmt::format("couldn't serve metrics on {}: {}", address_, e.what()));
    }
    build_families();
    exposer_->RegisterCollectable(registry_);
}

MetricsSink::MetricsSink(std::map<std::string, std::string> constant_labels, bool flow_label)
    : constant_labels_(std::move(constant_labels)), flow_label_(flow_label) {
    build_families();
}

std::string MetricsSink::exposition() const { return prometheus::TextSerializer().Serialize(registry_->Collect()); }

void MetricsSink::build_families() {
    registry_ = std::make_shared<prometheus::Registry>();
    using namespace prometheus;
    packets_ = &BuildCounter().Name("linerate_packets_total").Labels(constant_labels_).Help("Packets per port, queue and direction: TX as the "
                                                                   "device accepted them, RX as received").Register(*registry_);
    bytes_ = &BuildCounter().Name("linerate_bytes_total").Labels(constant_labels_).Help("L2 bytes (FCS included) per port, queue and direction")
                  .Register(*registry_);
    drops_ = &BuildCounter().Name("linerate_port_drops_total").Labels(constant_labels_).Help("Frames a port's host path or device dropped, by "
                                                                    "cause").Register(*registry_);
    rx_class_ = &BuildCounter().Name("linerate_rx_frames_total").Labels(constant_labels_).Help("Received frames by class (ours, distinct, "
                                                                      "foreign, malformed, duplicate, reordered, late)")
                     .Register(*registry_);
    rate_pps_ = &BuildGauge().Name("linerate_rate_packets_per_second").Labels(constant_labels_).Help("The last interval's rate, by direction")
                     .Register(*registry_);
    rate_bps_ = &BuildGauge().Name("linerate_rate_bits_per_second").Labels(constant_labels_).Help("The last interval's rate in bits/s, by "
                                                                         "direction and layer (l1, l2)").Register(*registry_);
    lost_ = &BuildGauge().Name("linerate_sequence_gaps").Labels(constant_labels_).Help("Frames missing from the receivers' sequences now "
                                                              "(running loss)").Register(*registry_);
    latency_ = &BuildGauge().Name("linerate_latency_seconds").Labels(constant_labels_).Help("The last interval's latency by quantile (1 = max)")
                    .Register(*registry_);
    trials_ = &BuildGauge().Name("linerate_trial").Labels(constant_labels_).Help("The running trial's index (0-based) and frame size")
                   .Register(*registry_);
    info_ = &BuildGauge().Name("linerate_generator_limited").Labels(constant_labels_).Help("1 when the senders fell short of the asked rate "
                                                                  "over the last interval").Register(*registry_);
    latency_hist_ = &BuildHistogram().Name("linerate_frame_latency_seconds").Labels(constant_labels_).Help("Latency of every timed frame, "
                                                                                  "added when each trial ends")
                         .Register(*registry_);
    stream_packets_ = &BuildCounter().Name("linerate_stream_packets_total").Labels(constant_labels_).Help(
        "A stream's frames, sent (tx) and received (rx, distinct), at most 100 streams by name and the rest as "
        "stream=\"other\"").Register(*registry_);
    stream_gaps_ = &BuildGauge().Name("linerate_stream_sequence_gaps").Labels(constant_labels_).Help(
        "A stream's frames missing from its receivers' sequences now (running loss)").Register(*registry_);
    stream_frames_ = &BuildCounter().Name("linerate_stream_frames_total").Labels(constant_labels_).Help(
        "A stream's received frames by class: reordered, duplicate, late (the same 100 streams by name)").Register(*registry_);
    impair_ = &BuildCounter().Name("linerate_impair_frames_total").Labels(constant_labels_).Help(
        "linerate impair: frames per direction by what happened to them (received, forwarded, dropped, overflowed, "
        "duplicated, reordered, early, corrupted, shaped, oversize)").Register(*registry_);
    impair_held_ = &BuildGauge().Name("linerate_impair_frames_held").Labels(constant_labels_).Help(
        "linerate impair: frames a direction holds now (delayed, or queued for the link)").Register(*registry_);
    connect_ = &BuildCounter().Name("linerate_connect_handshakes_total").Labels(constant_labels_).Help(
        "linerate connect: handshakes per queue by how they ended (syn: attempted; answered, refused, timeout, "
        "late, duplicate; closed, reset, unclosed with --close fin)").Register(*registry_);
    connect_waiting_ = &BuildGauge().Name("linerate_connect_waiting").Labels(constant_labels_).Help(
        "linerate connect: handshakes waiting for their SYN-ACK (state syn_sent) and connections waiting for the "
        "listener's FIN (state established), per queue").Register(*registry_);
    for (auto* g : {rate_pps_, rate_bps_, lost_, latency_, info_}) gauges_[g->GetName()] = g;
}

namespace {
// Bucket bounds in seconds: 1 us to 1 s, 1-2-5.
const prometheus::Histogram::BucketBoundaries& latency_bounds() {
    static const prometheus::Histogram::BucketBoundaries b = {1e-6, 2e-6, 5e-6, 1e-5, 2e-5, 5e-5, 1e-4, 2e-4, 5e-4,
                                                               1e-3, 2e-3, 5e-3, 1e-2, 2e-2, 5e-2, 0.1,  0.2,  0.5, 1};
    return b;
}
}  // namespace

MetricsSink::~MetricsSink() = default;

void MetricsSink::add(prometheus::Family<prometheus::Counter>& f, const std::map<std::string, std::string>& labels,
                      uint64_t cur, uint64_t& last) {
    auto& c = f.Add(labels);  // the series exists from the first interval, at 0 if nothing happened
    if (cur > last) c.Increment(static_cast<double>(cur - last));
    last = cur;
}

void MetricsSink::trial_started(const result::TrialStart& t) {
    for (auto& [k, v] : last_) v = 0;  // the trial's counters start at zero; the exported ones keep growing
    named_streams_ = t.spec && !t.spec->streams.empty();
    trials_->Add({{"what", "index"}}).Set(t.index);
    if (t.spec) trials_->Add({{"what", "frame_size_bytes"}}).Set(t.spec->frame.frame_size);
}

void MetricsSink::snapshot(const std::vector<stats::QueueId>& ids, const stats::Snapshot& s) {
    for (size_t i = 0; i < ids.size() && i < s.queues.size(); ++i) {
        const auto& q = s.queues[i];
        const std::map<std::string, std::string> l = {{"port", ids[i].port},
                                                      {"queue", std::to_string(ids[i].queue)},
                                                      {"direction", ids[i].dir == stats::Dir::tx ? "tx" : "rx"}};
        add(*packets_, l, q.packets, last_[key_of(*packets_, l)]);
        add(*bytes_, l, q.bytes, last_[key_of(*bytes_, l)]);
        if (ids[i].dir == stats::Dir::rx) {
            for (const auto& [cls, v] : rx_class_counts(q)) {
                auto lc = l;
                lc.erase("direction");
                lc["class"] = cls;
                add(*rx_class_, lc, v, last_[key_of(*rx_class_, lc)]);
            }
        }
    }
    for (size_t p = 0; p < s.ports.size(); ++p) {
        const auto& ps = s.ports[p];
        std::string name = std::to_string(p);
        for (const auto& id : ids)
            if (id.port_index == p) name = id.port;
        const std::pair<const char*, uint64_t> causes[] = {
            {"nic_missed", ps.imissed},          {"no_buffer", ps.rx_nombuf},
            {"no_socket", ps.xdp_redirect_failed}, {"socket_ring_full", ps.xsk_rx_ring_full},
            {"socket_dropped", ps.xsk_rx_dropped}, {"egress_device", ps.odropped}};
        for (const auto& [cause, v] : causes) {
            const std::map<std::string, std::string> l = {{"port", name}, {"cause", cause}};
            add(*drops_, l, v, last_[key_of(*drops_, l)]);
        }
    }
}

void MetricsSink::interval(const stats::IntervalRow& row) {
    for (const auto& g : interval_gauges(row)) gauges_.at(g.name)->Add(g.labels).Set(g.value);
}

void MetricsSink::streams_live(const std::vector<result::StreamLive>& v) {
    for (auto g : stream_values(v)) {
        if (flow_label_) g.labels["flow"] = g.labels["stream"];  // an OTG flow: summed across hosts by flow
        if (g.name == "linerate_stream_packets")
            add(*stream_packets_, g.labels, static_cast<uint64_t>(g.value), last_[key_of(*stream_packets_, g.labels)]);
        else if (g.name == "linerate_stream_frames")
            add(*stream_frames_, g.labels, static_cast<uint64_t>(g.value), last_[key_of(*stream_frames_, g.labels)]);
        else
            stream_gaps_->Add(g.labels).Set(g.value);
    }
}

void MetricsSink::impair_live(const std::vector<result::ImpairLive>& v) {
    for (const auto& d : v) {
        const auto& c = d.counts;
        const std::pair<const char*, uint64_t> decisions[] = {
            {"received", c.received},     {"forwarded", c.forwarded}, {"dropped", c.dropped},
            {"overflowed", c.overflowed}, {"duplicated", c.duplicated}, {"reordered", c.reordered},
            {"early", c.early},           {"corrupted", c.corrupted}, {"shaped", c.shaped},
            {"oversize", c.oversize}};
        for (const auto& [what, n] : decisions) {
            const std::map<std::string, std::string> l = {
                {"from", d.from}, {"to", d.to}, {"queue", std::to_string(d.queue)}, {"decision", what}};
            add(*impair_, l, n, last_[key_of(*impair_, l)]);
        }
        impair_held_->Add({{"from", d.from}, {"to", d.to}, {"queue", std::to_string(d.queue)}})
            .Set(static_cast<double>(c.held));
    }
}

void MetricsSink::connect_live(const std::vector<result::ConnectLive>& v) {
    for (const auto& q : v) {
        const auto& c = q.counts;
        const std::pair<const char*, uint64_t> outcomes[] = {
            {"syn", c.syns},         {"answered", c.answered},   {"refused", c.refused}, {"timeout", c.timeouts},
            {"late", c.late},        {"duplicate", c.duplicate}, {"closed", c.closed},   {"reset", c.resets},
            {"unclosed", c.unclosed}};
        for (const auto& [what, n] : outcomes) {
            const std::map<std::string, std::string> l = {
                {"port", q.port}, {"queue", std::to_string(q.queue)}, {"outcome", what}};
            add(*connect_, l, n, last_[key_of(*connect_, l)]);
        }
        const std::pair<const char*, uint64_t> waiting[] = {{"syn_sent", c.in_flight}, {"established", c.open}};
        for (const auto& [state, n] : waiting)
            connect_waiting_->Add({{"port", q.port}, {"queue", std::to_string(q.queue)}, {"state", state}})
                .Set(static_cast<double>(n));
    }
}

void MetricsSink::trial_finished(const result::TrialResult& r) {
    // The streams' final counts (the live ones are up to an interval old).
    std::vector<result::StreamLive> fin;
    for (const auto& s : r.streams) {
        result::StreamLive l;
        l.index = s.index;
        l.name = s.name;
        l.sent = s.sent;
        l.received = s.received;
        l.gaps = s.lost;
        l.reordered = s.reordered;
        l.duplicates = s.duplicates;
        l.late = s.late;
        fin.push_back(std::move(l));
    }
    if (fin.size() > 1 || (fin.size() == 1 && (fin[0].index > 0 || named_streams_))) streams_live(fin);
    // The emulator's and the connections' final counts, likewise.
    std::vector<result::ImpairLive> impair;
    for (const auto& d : r.impair) impair.push_back({d.from, d.to, d.queue, d.counts});
    if (!impair.empty()) impair_live(impair);
    std::vector<result::ConnectLive> conns;
    for (const auto& q : r.connect) conns.push_back({q.port, q.queue, q.counts});
    if (!conns.empty()) connect_live(conns);
    const auto& h = r.latency;
    if (!h.count()) return;
    const auto& bounds = latency_bounds();
    std::vector<double> increments;
    uint64_t below = 0;
    for (double b : bounds) {
        const uint64_t upto = h.count_at_most(static_cast<uint64_t>(b * 1e9));
        increments.push_back(static_cast<double>(upto - below));
        below = upto;
    }
    increments.push_back(static_cast<double>(h.count() - below));  // +Inf
    latency_hist_->Add({{"kind", r.round_trip ? "round-trip" : "one-way"}}, bounds)
        .ObserveMultiple(increments, h.mean() * 1e-9 * static_cast<double>(h.count()));
}

}  // namespace lr::report
