#include "report/metric_values.h"

#include <fmt/format.h>

#include "report/result_fields.h"

namespace lr::report {

std::vector<GaugeValue> interval_gauges(const stats::IntervalRow& row) {
    const auto j = interval_json(row);
    std::vector<GaugeValue> g;
    for (const char* dir : {"tx", "rx"}) {
        const auto& r = j.at(dir);
        g.push_back({"linerate_rate_packets_per_second", {{"direction", dir}}, r.at("pps").get<double>()});
        for (const char* layer : {"l1", "l2"})
            g.push_back({"linerate_rate_bits_per_second", {{"direction", dir}, {"layer", layer}},
                         r.at(std::string(layer) + "_bps").get<double>()});
    }
    g.push_back({"linerate_sequence_gaps", {}, j.at("seq_gaps").get<double>()});
    g.push_back({"linerate_generator_limited", {}, j.at("generator_limited").get<bool>() ? 1.0 : 0.0});
    const auto& lat = j.at("latency");
    if (lat.is_object() && lat.at("count").get<uint64_t>() > 0)
        for (const auto& [key, q] : latency_quantiles())
            if (lat.contains(key))
                g.push_back({"linerate_latency_seconds", {{"quantile", fmt::format("{:g}", q)}},
                             lat.at(key).get<double>() * 1e-9});
    return g;
}

std::vector<std::pair<std::string, uint64_t>> rx_class_counts(const stats::QueueSample& q) {
    std::vector<std::pair<std::string, uint64_t>> out;
    const auto classes = rx_class_fields().json(rx_classes(q));
    for (const auto& [cls, v] : classes.items()) out.emplace_back(cls, v.get<uint64_t>());
    return out;
}

std::vector<GaugeValue> stream_values(const std::vector<result::StreamLive>& streams) {
    std::vector<GaugeValue> out;
    result::StreamLive other;
    other.name = "other";
    bool others = false;
    auto add = [&](const result::StreamLive& s) {
        out.push_back({"linerate_stream_packets", {{"stream", s.name}, {"direction", "tx"}}, static_cast<double>(s.sent)});
        out.push_back({"linerate_stream_packets", {{"stream", s.name}, {"direction", "rx"}}, static_cast<double>(s.received)});
        out.push_back({"linerate_stream_sequence_gaps", {{"stream", s.name}}, static_cast<double>(s.gaps)});
        const std::pair<const char*, uint64_t> classes[] = {
            {"reordered", s.reordered}, {"duplicate", s.duplicates}, {"late", s.late}};
        for (const auto& [cls, n] : classes)
            out.push_back({"linerate_stream_frames", {{"stream", s.name}, {"class", cls}}, static_cast<double>(n)});
    };
    for (const auto& s : streams) {
        if (s.index < kMaxStreamSeries) {
            add(s);
            continue;
        }
        others = true;
        other.sent += s.sent;
        other.received += s.received;
        other.gaps += s.gaps;
        other.reordered += s.reordered;
        other.duplicates += s.duplicates;
        other.late += s.late;
    }
    if (others) add(other);
    return out;
}

}  // namespace lr::report
