#include "otg/flow_traffic.h"

#include <algorithm>
#include <cmath>
#include <fmt/format.h>

#include "packet/frame.h"
#include "spec/size_spec.h"
#include "util/error.h"

namespace lr::otg {
namespace {

constexpr uint32_t kStandardGap = 12;           // bytes: the Ethernet inter-frame gap
constexpr double kLongestDelayS = 366 * 86400;  // as linerate's own durations: at most a year

// "flows[0] "f1"": how warnings name a flow.
std::string who(const OtgFlow& f) { return fmt::format("{} \"{}\"", f.path, f.name); }

std::string frame_kind(const packet::FrameSpec& f) {
    return fmt::format("Ethernet{} {} {}", f.vlan ? " VLAN" : "", f.src_ip.v6 ? "IPv6" : "IPv4",
                       f.l4 == packet::L4::udp ? "UDP" : "TCP");
}

// A duration's `gap`: the standard inter-frame gap only.
void standard_gap(Reader& r, const Field& gap) {
    if (r.uint32(gap).value_or(kStandardGap) != kStandardGap)
        r.refuse(gap, "12 only: linerate keeps the standard 12-byte inter-frame gap (the rate spaces a flow's frames)");
}

// A time given in bytes, nanoseconds or microseconds (Flow.Delay, Flow.Duration.InterBurstGap):
// seconds, or the bytes (with their path) for resolve_counts_and_rates.
struct Span {
    double seconds = 0;
    std::optional<ByteTime> bytes;
};
Span time_span(Reader& r, const Field& f, double default_bytes, double default_ns, double default_us) {
    Span out;
    out.bytes = ByteTime{default_bytes, member_path(f.path(), "bytes")};
    if (!r.object(f, {"choice", "bytes", "nanoseconds", "microseconds"})) return out;
    const std::vector<std::string_view> units = {"bytes", "nanoseconds", "microseconds"};
    const size_t unit = r.one_of(f["choice"], units).value_or(0);
    const double defaults[] = {default_bytes, default_ns, default_us};
    const double scale[] = {0, 1e-9, 1e-6};
    const auto v = r.number(f[units[unit]], 0, unit == 0 ? 1e18 : kLongestDelayS / scale[unit]).value_or(defaults[unit]);
    if (unit == 0) {
        out.bytes = ByteTime{v, member_path(f.path(), "bytes")};
    } else {
        out.bytes.reset();
        out.seconds = v * scale[unit];
    }
    return out;
}

void start_delay(Reader& r, const Field& delay, OtgFlow& flow) {
    const auto d = time_span(r, delay, 0, 0, 0);
    flow.stream.delay_s = d.seconds;
    if (d.bytes && d.bytes->bytes > 0) flow.delay_bytes = d.bytes;
}

}  // namespace

void read_size(Reader& r, const Field& size, const packet::FrameSpec& frame, OtgFlow& flow,
               std::vector<std::string>& warnings) {
    const size_t before = r.refusal_count();
    std::string text = "64", path = size.path();
    bool predefined = false;
    if (r.object(size, {"choice", "fixed", "increment", "random", "weight_pairs"})) {
        const auto choice = r.one_of(size["choice"], {"fixed", "increment", "random", "weight_pairs"}).value_or(0);
        if (choice == 0) {
            text = fmt::format("{}", r.uint32(size["fixed"]).value_or(64));
            path = size["fixed"].path();
        } else if (choice == 1) {
            const auto inc = size["increment"];
            r.object(inc, {"start", "end", "step"});
            const auto start = r.uint32(inc["start"], 1).value_or(64), end = r.uint32(inc["end"], 64).value_or(1518);
            const auto step = r.uint32(inc["step"]).value_or(1);
            text = start == end ? fmt::format("{}", start) : fmt::format("{}:{}:{}", start, end, step);
            path = inc.path();
        } else if (choice == 2) {
            const auto rnd = size["random"];
            r.object(rnd, {"min", "max"});
            const auto lo = r.uint32(rnd["min"]).value_or(64), hi = r.uint32(rnd["max"]).value_or(1518);
            text = lo == hi ? fmt::format("{}", lo) : fmt::format("{}..{}", lo, hi);
            path = rnd.path();
        } else {
            const auto wp = size["weight_pairs"];
            r.object(wp, {"choice", "predefined", "custom"});
            if (r.one_of(wp["choice"], {"predefined", "custom"}).value_or(0) == 0) {
                const std::vector<std::string_view> names = {"imix", "ipsec_imix", "ipv6_imix", "standard_imix",
                                                             "tcp_imix"};
                text = names[r.one_of(wp["predefined"], names).value_or(0)];
                std::replace(text.begin(), text.end(), '_', '-');  // linerate's names
                predefined = true;
                path = wp["predefined"].path();
            } else {
                const auto custom = wp["custom"];
                const size_t n = r.array(custom);
                if (n == 0) r.refuse(custom, "an empty list: give at least one size and weight");
                text.clear();
                for (size_t i = 0; i < n; ++i) {
                    const auto pair = custom.at(i);
                    r.object(pair, {"size", "weight"});
                    const auto s = r.uint32(pair["size"], 12, 65535).value_or(64);
                    const auto w = r.number(pair["weight"], 0, 1e6).value_or(1);
                    text += fmt::format("{}{}:{}", i ? "/" : "", s, w);
                }
                path = custom.path();
            }
        }
    }
    if (r.refusal_count() > before) return;
    auto& st = flow.stream;
    try {
        st.size = spec::parse_size_spec(text, "size");
    } catch (const UsageError& e) {
        r.refuse(path, e.what());
        return;
    }
    const unsigned min = packet::min_frame_size(frame);
    if (st.size.smallest() >= min) return;
    if (predefined) {
        std::string note;
        st.size = st.size.at_least(min, "size", note);
        warnings.push_back(fmt::format("{}: {}", who(flow), note));
    } else if (!size.present()) {
        st.size = spec::SizeSpec::fixed_size(min);
        warnings.push_back(fmt::format("{}: size left out: the model's 64 bytes are too few for {}, so its frames are "
                                       "{} bytes",
                                       who(flow), frame_kind(frame), min));
    } else {
        r.refuse(path, fmt::format("{} bytes is below the smallest {} frame ({} bytes, FCS included)",
                                   st.size.smallest(), frame_kind(frame), min));
    }
}

bool read_rate(Reader& r, const Field& rate, OtgFlow& flow) {
    using Unit = spec::RateSpec::Unit;
    auto& st = flow.stream;
    st.rate = spec::RateSpec(Unit::pps, 1000);  // the model's default
    if (!r.object(rate, {"choice", "pps", "bps", "kbps", "mbps", "gbps", "percentage"})) return false;
    const auto choice = r.one_of(rate["choice"], {"pps", "bps", "kbps", "mbps", "gbps", "percentage"}).value_or(0);
    // bps, kbps and mbps are uint64 on the wire, gbps uint32; all are L1 rates to linerate.
    const auto bits = [&](const char* key, uint64_t min, uint64_t def, double scale) {
        st.rate = spec::RateSpec(Unit::l1_bps, scale * static_cast<double>(r.uint64(rate[key], min).value_or(def)));
        return true;
    };
    switch (choice) {
        case 0:
            st.rate = spec::RateSpec(Unit::pps, static_cast<double>(r.uint64(rate["pps"], 1).value_or(1000)));
            return false;
        case 1: return bits("bps", 672, 1000000000, 1);
        case 2: return bits("kbps", 1, 1000000, 1e3);
        case 3: return bits("mbps", 1, 1000, 1e6);
        case 4: st.rate = spec::RateSpec(Unit::l1_bps, 1e9 * r.uint32(rate["gbps"], 1).value_or(1)); return true;
        default: break;
    }
    const auto pct = r.number(rate["percentage"], 0, 100).value_or(100);
    if (pct == 0) r.refuse(rate["percentage"], "0 % sends nothing: give a percentage above 0 (up to 100)");
    flow.rate_percent = pct;
    st.rate.reset();  // a rate once the port's speed is known
    return false;
}

void read_duration(Reader& r, const Field& duration, OtgFlow& flow) {
    auto& st = flow.stream;
    if (!r.object(duration, {"choice", "fixed_packets", "fixed_seconds", "burst", "continuous"})) return;
    const std::vector<std::string_view> choices = {"fixed_packets", "fixed_seconds", "burst", "continuous"};
    const auto choice = r.one_of(duration["choice"], choices).value_or(3);
    const auto d = duration[choices[choice]];
    if (choice == 0) {
        r.object(d, {"packets", "gap", "delay"});
        st.count = r.uint32(d["packets"], 1).value_or(1);
        standard_gap(r, d["gap"]);
        start_delay(r, d["delay"], flow);
    } else if (choice == 1) {
        r.object(d, {"seconds", "gap", "delay"});
        flow.fixed_seconds = r.number(d["seconds"], 0, kLongestDelayS).value_or(1);
        standard_gap(r, d["gap"]);
        start_delay(r, d["delay"], flow);
    } else if (choice == 2) {
        r.object(d, {"bursts", "packets", "gap", "inter_burst_gap"});
        const uint32_t bursts = r.uint32(d["bursts"]).value_or(0);
        st.burst_frames = r.uint32(d["packets"], 1).value_or(1);
        if (bursts) {
            st.bursts = bursts;
            st.count = uint64_t{bursts} * st.burst_frames;
        } else {
            st.endless_bursts = true;  // the model's 0: bursts until the flow is stopped
        }
        standard_gap(r, d["gap"]);
        const auto gap = time_span(r, d["inter_burst_gap"], kStandardGap, 96, 0.096);
        st.burst_gap_s = gap.seconds;
        flow.inter_burst_gap_bytes = gap.bytes;
    } else {
        r.object(d, {"gap", "delay"});
        standard_gap(r, d["gap"]);
        start_delay(r, d["delay"], flow);
    }
}

void read_metrics(Reader& r, const Field& metrics, OtgFlow& flow) {
    if (!r.object(metrics, {"enable", "loss", "rx_tx_ratio", "timestamps", "latency", "predefined_metric_tags"}))
        return;
    flow.metrics = r.boolean(metrics["enable"]).value_or(false);
    flow.loss = r.boolean(metrics["loss"]).value_or(false);
    flow.timestamps = r.boolean(metrics["timestamps"]).value_or(false);
    const auto ratio = metrics["rx_tx_ratio"];
    if (r.object(ratio, {"choice", "rx_count", "value"})) {
        if (r.one_of(ratio["choice"], {"rx_count", "value"}).value_or(1) == 0)
            r.refuse(ratio, "rx_count is not supported: linerate expects each frame sent once at each receiving port "
                            "(value 1.0)");
        else if (r.number(ratio["value"], 0, 1e9).value_or(1.0) != 1.0)
            r.refuse(ratio["value"], "1.0 only: linerate expects each frame sent once at each receiving port");
    }
    const auto latency = metrics["latency"];
    if (r.object(latency, {"enable", "mode"})) {
        flow.latency = r.boolean(latency["enable"]).value_or(false);
        r.one_of(latency["mode"], {"store_forward", "cut_through"});  // both: linerate stamps the whole frame
    }
    const auto tags = metrics["predefined_metric_tags"];
    if (r.object(tags, {"rx_name"}) && r.boolean(tags["rx_name"]).value_or(false))
        r.refuse(tags["rx_name"], "false only: linerate keeps no tagged metrics");
}

void read_payload(Reader& r, const Field& payload) {
    if (!r.object(payload, {"choice", "fixed"})) return;
    const size_t before = r.refusal_count();
    const auto choice = r.one_of(payload["choice"], {"fixed", "increment_byte", "decrement_byte", "increment_word",
                                                     "decrement_word"})
                            .value_or(0);
    const auto fixed = payload["fixed"];
    r.object(fixed, {"pattern", "repeat"});
    auto pattern = r.string(fixed["pattern"]).value_or("00");
    const bool repeat = r.boolean(fixed["repeat"]).value_or(true);
    if (pattern.rfind("0x", 0) == 0 || pattern.rfind("0X", 0) == 0) pattern.erase(0, 2);
    if (r.refusal_count() == before && (choice != 0 || pattern != "00" || !repeat))
        r.refuse(payload, "the model's default (fixed \"00\", repeated) only: linerate writes its signature (magic, "
                          "sequence, timestamp, run and flow identity) into the payload and zeros after it");
}

}  // namespace lr::otg
