#include "spec/rate.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <fmt/format.h>

#include "spec/parse.h"
#include "util/error.h"

namespace lr::spec {
namespace {

// A positive finite number at the start of `s`; `rest` is what follows it.
double leading_number(std::string_view s, std::string_view what, std::string_view& rest, std::string_view expect) {
    double v = 0;
    const auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
    if (ec != std::errc() || p == s.data()) throw_invalid(what, s, expect);
    if (!std::isfinite(v) || v <= 0) throw_invalid(what, s, "must be greater than zero");
    rest = std::string_view(p, static_cast<size_t>(s.data() + s.size() - p));
    return v;
}

// A decimal multiplier prefix (k, M, G, T) at the start of `u`, removed from it.
double prefix(std::string_view& u) {
    if (u.empty()) return 1;
    double m = 0;
    switch (u[0]) {
        case 'k':
        case 'K': m = 1e3; break;
        case 'M': m = 1e6; break;
        case 'G': m = 1e9; break;
        case 'T': m = 1e12; break;
        default: return 1;
    }
    u.remove_prefix(1);
    return m;
}

std::string trim_number(double v) {
    auto s = fmt::format("{:.3f}", v);
    while (s.back() == '0') s.pop_back();
    if (s.back() == '.') s.pop_back();
    return s;
}

// A share in percent: "200", "33.333", "1.25e+20" for the absurd.
std::string percent_number(double v) { return v < 1e6 ? trim_number(v) : fmt::format("{:.3g}", v); }

std::string scaled(double v, const char* unit) {
    if (v >= 1e15) return fmt::format("{:.3g} {}", v, unit);
    if (v >= 1e12) return fmt::format("{} T{}", trim_number(v / 1e12), unit);
    if (v >= 1e9) return fmt::format("{} G{}", trim_number(v / 1e9), unit);
    if (v >= 1e6) return fmt::format("{} M{}", trim_number(v / 1e6), unit);
    if (v >= 1e3) return fmt::format("{} k{}", trim_number(v / 1e3), unit);
    return fmt::format("{} {}", trim_number(v), unit);
}

}  // namespace

std::string RateSpec::str() const {
    switch (unit) {
        case Unit::max: return "max";
        case Unit::pps: return format_pps(value);
        case Unit::l1_bps: return format_bps(value) + " L1";
        case Unit::l2_bps: return format_bps(value) + " L2";
        case Unit::percent: return fmt::format("{} % of line rate", trim_number(value));
    }
    return "?";
}

RateSpec parse_rate(std::string_view s, std::string_view what) {
    constexpr std::string_view expect =
        "expected packets/s (10Mpps, 250kpps, 1000), bits/s at L1 (9.5Gbps) or L2 (9.5Gbps-l2), a percentage "
        "of the line rate (100%), or max";
    RateSpec r;
    r.typed = std::string(s);
    if (s == "max") return r;
    std::string_view u;
    const double v = leading_number(s, what, u, expect);
    if (u == "%") {
        if (v > 100) throw_invalid(what, s, "a percentage of the line rate must be at most 100");
        r.unit = RateSpec::Unit::percent;
        r.value = v;
        return r;
    }
    const double m = prefix(u);
    if (u.empty() || u == "pps") r.unit = RateSpec::Unit::pps;
    else if (u == "bps" || u == "bps-l1") r.unit = RateSpec::Unit::l1_bps;
    else if (u == "bps-l2") r.unit = RateSpec::Unit::l2_bps;
    else throw_invalid(what, s, expect);
    r.value = v * m;
    if (!std::isfinite(r.value)) throw_invalid(what, s, "too large");
    return r;
}

double parse_bits_per_second(std::string_view s, std::string_view what) {
    std::string_view u;
    const double v = leading_number(s, what, u, "expected a bit rate such as 10G, 25Gbps or 100M");
    const double m = prefix(u);
    if (!u.empty() && u != "bps" && u != "bit/s")
        throw_invalid(what, s, "expected a bit rate such as 10G, 25Gbps or 100M");
    return v * m;
}

RateCeiling spec_ceiling(double line_rate_bps, size_t tx_ports) {
    if (line_rate_bps > 0)
        return {line_rate_bps, fmt::format("the {} line rate given with --line-rate", format_bps(line_rate_bps)), true};
    const double n = static_cast<double>(std::max<size_t>(tx_ports, 1));
    const auto fastest = "the fastest standard Ethernet, IEEE 802.3df";
    return {kFastestEthernetBps * n,
            n > 1 ? fmt::format("{}, the most {:g} ports can carry ({} each: {})", format_bps(kFastestEthernetBps * n),
                                n, format_bps(kFastestEthernetBps), fastest)
                  : fmt::format("{}, the most a port can carry ({})", format_bps(kFastestEthernetBps), fastest),
            false};
}

double to_pps(const RateSpec& r, std::string_view what, double frame_size, const RateCeiling& c) {
    double pps = 0;
    switch (r.unit) {
        case RateSpec::Unit::max: return 0;
        case RateSpec::Unit::pps: pps = r.value; break;
        case RateSpec::Unit::l1_bps: pps = r.value / ((frame_size + 20.0) * 8.0); break;
        case RateSpec::Unit::l2_bps: pps = r.value / (frame_size * 8.0); break;
        case RateSpec::Unit::percent:
            if (!c.line_rate)
                throw UsageError(fmt::format("{} {}: the ports report no link speed (virtual devices, veth); give "
                                             "the line rate with --line-rate, e.g. --line-rate 10G",
                                             what, r.quoted()));
            pps = r.value / 100.0 * line_rate_pps(c.bps, frame_size);
            break;
    }
    if (c.bps > 0 && pps > line_rate_pps(c.bps, frame_size) * (1 + 1e-9))
        throw UsageError(fmt::format("{} {} asks {} of {:.6g}-byte frames: {} % of {}", what, r.quoted(), format_pps(pps),
                                     frame_size, percent_number(100.0 * pps / line_rate_pps(c.bps, frame_size)),
                                     c.source));
    return pps;
}

double to_pps(const RateSpec& r, double frame_size, double line_bps) {
    RateCeiling c;
    if (line_bps > 0) c = {line_bps, fmt::format("the {} line rate", format_bps(line_bps)), true};
    return to_pps(r, "--rate", frame_size, c);
}

std::string format_bps(double bps) { return scaled(bps, "bit/s"); }
std::string format_pps(double pps) { return scaled(pps, "pps"); }

std::string describe_rate(double pps, double frame_size, double line_bps) {
    auto s = fmt::format("{} = {} L1 = {} L2", format_pps(pps), format_bps(l1_bps(pps, frame_size)),
                         format_bps(l2_bps(pps, frame_size)));
    if (line_bps > 0)
        s += fmt::format(" = {} % of {}", trim_number(100.0 * l1_bps(pps, frame_size) / line_bps), format_bps(line_bps));
    return s;
}

std::string format_seconds(double s) {
    if (s < 1e-3) return fmt::format("{:.3f} us", s * 1e6);
    if (s < 1) return fmt::format("{:.3f} ms", s * 1e3);
    return fmt::format("{:.3f} s", s);
}

}  // namespace lr::spec
