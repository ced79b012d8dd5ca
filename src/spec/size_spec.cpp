#include "spec/size_spec.h"

#include <algorithm>
#include <cmath>
#include <fmt/format.h>
#include <numeric>

#include "packet/frame.h"
#include "spec/parse.h"
#include "util/error.h"

namespace lr::spec {
namespace {

struct Predefined {
    std::string_view name;
    std::vector<std::pair<unsigned, double>> weights;
};

// OTG's predefined distributions (open-traffic-generator/models, flow size weight_pairs),
// sizes with FCS.
const std::vector<Predefined>& predefined() {
    static const std::vector<Predefined> p = {
        {"imix", {{64, 7}, {570, 4}, {1518, 1}}},
        {"ipsec-imix", {{90, 58.67}, {92, 2}, {594, 23.66}, {1418, 15.67}}},
        {"ipv6-imix", {{60, 58.67}, {496, 2}, {594, 23.66}, {1518, 15.67}}},
        {"standard-imix", {{58, 58.67}, {62, 2}, {594, 23.66}, {1518, 15.67}}},
        {"tcp-imix", {{90, 58.67}, {92, 2}, {594, 23.66}, {1518, 15.67}}},
    };
    return p;
}

unsigned parse_size(std::string_view part, std::string_view what, std::string_view whole) {
    return static_cast<unsigned>(
        parse_uint(part, what, packet::kMinFrame, packet::kMaxFrame, {whole, "the size"}));
}

// A weight with at most two decimals, at least 0.01 (a whole number of hundredths: the period
// is built from them).
double parse_weight(std::string_view part, std::string_view what, std::string_view whole) {
    double v = 0;
    size_t pos = 0;
    const std::string t(part);
    try {
        v = std::stod(t, &pos);
    } catch (const std::exception&) {
        pos = 0;
    }
    if (t.empty() || pos != t.size() || !(v > 0) || v > 1e6)
        throw_invalid(what, whole, fmt::format("the weight \"{}\": expected a number above 0 (at most 1000000)", part));
    const double hundredths = std::round(v * 100);
    if (hundredths < 1 || std::abs(v * 100 - hundredths) > 1e-6)
        throw_invalid(what, whole, fmt::format("the weight \"{}\": at most two decimals, at least 0.01", part));
    return v;
}

std::vector<std::string_view> split(std::string_view s, char sep) {
    std::vector<std::string_view> out;
    size_t pos = 0;
    while (true) {
        const size_t e = s.find(sep, pos);
        out.push_back(s.substr(pos, e == std::string_view::npos ? std::string_view::npos : e - pos));
        if (e == std::string_view::npos) return out;
        pos = e + 1;
    }
}

}  // namespace

SizeSpec SizeSpec::fixed_size(unsigned size) {
    SizeSpec s;
    s.weights = {{size, 1}};
    s.lo = s.hi = size;
    s.typed = fmt::format("{}", size);
    return s;
}

unsigned SizeSpec::smallest() const {
    if (kind == Kind::increment || kind == Kind::random) return lo;
    unsigned m = weights.front().first;
    for (const auto& [s, w] : weights) m = std::min(m, s);
    return m;
}

unsigned SizeSpec::largest() const {
    if (kind == Kind::random) return hi;
    if (kind == Kind::increment) return lo + (hi - lo) / step * step;
    unsigned m = 0;
    for (const auto& [s, w] : weights) m = std::max(m, s);
    return m;
}

std::vector<unsigned> SizeSpec::sizes() const {
    std::vector<unsigned> v;
    if (kind == Kind::increment || kind == Kind::random) {
        const unsigned st = kind == Kind::random ? 1 : step;
        for (unsigned s = lo; s <= hi; s += st) v.push_back(s);
        return v;
    }
    for (const auto& [s, w] : weights) v.push_back(s);
    std::sort(v.begin(), v.end());
    return v;
}

double SizeSpec::mean() const {
    if (kind == Kind::random) return (lo + hi) / 2.0;
    if (kind == Kind::increment) return (lo + largest()) / 2.0;
    double sum = 0, total = 0;
    for (const auto& [s, w] : weights) {
        sum += s * w;
        total += w;
    }
    return sum / total;
}

std::vector<uint64_t> SizeSpec::period_counts() const {
    if (kind == Kind::random) return {};
    if (kind == Kind::increment) return std::vector<uint64_t>(sizes().size(), 1);
    std::vector<uint64_t> c;
    uint64_t g = 0;
    for (const auto& [s, w] : weights) {
        c.push_back(static_cast<uint64_t>(std::llround(w * 100)));
        g = std::gcd(g, c.back());
    }
    for (auto& v : c) v /= g;
    return c;
}

std::vector<uint16_t> SizeSpec::period(uint64_t seed) const {
    std::vector<uint16_t> v;
    if (kind == Kind::fixed || kind == Kind::random) return v;
    const auto asc = sizes();
    const auto counts = period_counts();
    if (kind == Kind::increment) {
        for (size_t i = 0; i < asc.size(); ++i) v.push_back(static_cast<uint16_t>(i));
        return v;
    }
    for (size_t w = 0; w < weights.size(); ++w) {
        const auto idx = static_cast<uint16_t>(std::find(asc.begin(), asc.end(), weights[w].first) - asc.begin());
        v.insert(v.end(), counts[w], idx);
    }
    // Fisher-Yates over xorshift64*: the same seed, the same order.
    uint64_t x = seed * 0x9E3779B97F4A7C15ull + 0x2545F4914F6CDD1Dull;
    for (size_t i = v.size(); i > 1; --i) {
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        const uint64_t r = (x * 0x2545F4914F6CDD1Dull) % i;
        std::swap(v[i - 1], v[r]);
    }
    return v;
}

std::string SizeSpec::str() const {
    if (!name.empty()) return name;
    switch (kind) {
        case Kind::fixed: return fmt::format("{}", lo);
        case Kind::increment: return fmt::format("{}:{}:+{}", lo, hi, step);
        case Kind::random: return fmt::format("{}..{}", lo, hi);
        case Kind::weighted: break;
    }
    std::string out;
    for (const auto& [s, w] : weights) out += fmt::format("{}{}:{}", out.empty() ? "" : "/", s, w);
    return out;
}

SizeSpec SizeSpec::at_least(unsigned min, std::string_view what, std::string& note) const {
    (void)what;
    // Only a predefined distribution's sizes are raised; any other size below the kind's
    // smallest is refused when its frame is built.
    if (smallest() >= min || name.empty()) return *this;
    SizeSpec r = *this;
    r.weights.clear();
    std::vector<unsigned> raised;
    for (const auto& [s, w] : weights) {
        const unsigned t = std::max(s, min);
        if (t != s) raised.push_back(s);
        const auto it = std::find_if(r.weights.begin(), r.weights.end(), [&](const auto& p) { return p.first == t; });
        if (it != r.weights.end()) it->second += w;
        else r.weights.emplace_back(t, w);
    }
    r.name.clear();  // no longer the predefined one: str() shows the sizes sent
    note = fmt::format("{} {}: its {} byte frames are sent as {} bytes, the smallest frame of this kind", what, name,
                       fmt::join(raised, " and "), min);
    return r;
}

SizeSpec parse_size_spec(std::string_view s, std::string_view what) {
    SizeSpec r;
    r.typed = std::string(s);
    for (const auto& p : predefined())
        if (s == p.name) {
            r.kind = SizeSpec::Kind::weighted;
            r.name = std::string(p.name);
            r.weights = p.weights;
            return r;
        }
    if (const auto dots = s.find(".."); dots != std::string_view::npos) {
        r.kind = SizeSpec::Kind::random;
        r.lo = parse_size(s.substr(0, dots), what, s);
        r.hi = parse_size(s.substr(dots + 2), what, s);
        if (r.hi <= r.lo) throw_invalid(what, s, "a random range needs LO below HI");
        return r;
    }
    if (s.find('/') != std::string_view::npos || std::count(s.begin(), s.end(), ':') == 1) {
        r.kind = SizeSpec::Kind::weighted;
        r.weights.clear();
        for (const auto pair : split(s, '/')) {
            const auto colon = pair.find(':');
            if (colon == std::string_view::npos)
                throw_invalid(what, s, fmt::format("\"{}\": expected SIZE:WEIGHT", pair));
            const unsigned size = parse_size(pair.substr(0, colon), what, s);
            if (std::any_of(r.weights.begin(), r.weights.end(), [&](const auto& w) { return w.first == size; }))
                throw_invalid(what, s, fmt::format("the size {} is given twice", size));
            r.weights.emplace_back(size, parse_weight(pair.substr(colon + 1), what, s));
        }
        uint64_t period = 0;
        for (auto c : r.period_counts()) period += c;
        if (period > kMaxSizePeriod)
            throw_invalid(what, s, fmt::format("the weights need a period of {} frames to be exact (at most {}): "
                                               "use smaller whole numbers",
                                               period, kMaxSizePeriod));
        return r;
    }
    if (std::count(s.begin(), s.end(), ':') == 2) {
        const auto parts = split(s, ':');
        r.kind = SizeSpec::Kind::increment;
        r.lo = parse_size(parts[0], what, s);
        r.hi = parse_size(parts[1], what, s);
        if (r.hi <= r.lo) throw_invalid(what, s, "an increment needs LO below HI");
        auto st = parts[2];
        if (!st.empty() && st.front() == '+') st.remove_prefix(1);
        r.step = static_cast<unsigned>(parse_uint(st, what, 1, packet::kMaxFrame, {s, "the step"}));
        return r;
    }
    const auto size = static_cast<unsigned>(parse_uint(s, what, packet::kMinFrame, packet::kMaxFrame));
    r = SizeSpec::fixed_size(size);
    r.typed = std::string(s);
    return r;
}

std::string predefined_size_names() {
    std::string out;
    for (const auto& p : predefined()) out += fmt::format("{}{}", out.empty() ? "" : ", ", p.name);
    return out;
}

}  // namespace lr::spec
