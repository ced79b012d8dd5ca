#include "otg/patterns.h"

#include <fmt/format.h>
#include <numeric>

#include "util/error.h"

namespace lr::otg {
namespace {

FieldValue all_ones(unsigned bits) { return bits >= 128 ? ~FieldValue{0} : (FieldValue{1} << bits) - 1; }

unsigned width_of(FieldModel::Kind k, unsigned bits) {
    switch (k) {
        case FieldModel::Kind::mac: return 48;
        case FieldModel::Kind::ipv4: return 32;
        case FieldModel::Kind::ipv6: return 128;
        case FieldModel::Kind::integer: break;
    }
    return bits;
}

// One value of the field's kind: a number, a MAC address or an IP address of its family.
std::optional<FieldValue> read_value(Reader& r, const Field& f, const FieldModel& m) {
    if (!f.present()) return std::nullopt;
    if (m.kind == FieldModel::Kind::integer) {
        const auto v = r.uint32(f, 0, static_cast<uint32_t>(all_ones(std::min(m.bits, 32u))));
        return v ? std::optional<FieldValue>(*v) : std::nullopt;
    }
    const auto s = r.string(f);
    if (!s) return std::nullopt;
    try {
        if (m.kind == FieldModel::Kind::mac) {
            FieldValue v = 0;
            for (const auto b : packet::parse_mac(*s, f.path()).b) v = v << 8 | b;
            return v;
        }
        const bool v6 = m.kind == FieldModel::Kind::ipv6;
        const auto a = packet::parse_ip(*s, f.path());
        if (a.v6 != v6) {
            r.refuse(f, fmt::format("expected an {} address, got \"{}\"", v6 ? "IPv6" : "IPv4", *s));
            return std::nullopt;
        }
        FieldValue v = 0;
        for (size_t i = 0; i < (v6 ? 16u : 4u); ++i) v = v << 8 | a.b[i];
        return v;
    } catch (const UsageError&) {
        r.refuse(f, fmt::format("expected {}, got \"{}\"",
                                m.kind == FieldModel::Kind::mac ? "a MAC address like 00:11:22:33:44:55"
                                : m.kind == FieldModel::Kind::ipv4 ? "an IPv4 address like 192.0.2.1"
                                                                   : "an IPv6 address like 2001:db8::1",
                                *s));
        return std::nullopt;
    }
}

// The model's counter counts: at most 2^bits for a field under 32 bits, any uint32 else.
uint32_t largest_count(const FieldModel& m) {
    const unsigned w = width_of(m.kind, m.bits);
    return w < 32 ? (1u << w) : UINT32_MAX;
}

void refuse_period(Reader& r, const Field& f, uint64_t n, uint64_t max_period) {
    r.refuse(f, fmt::format("{} values: linerate builds a frame for each distinct packet of a flow, at most {}", n,
                            max_period));
}

std::vector<FieldValue> counter(Reader& r, const Field& f, const FieldModel& m, bool up, uint64_t max_period) {
    if (!r.object(f, {"start", "step", "count"})) return {m.default_value};
    const auto start = read_value(r, f["start"], m).value_or(m.default_value);
    const auto step = read_value(r, f["step"], m).value_or(1);
    const uint32_t count = r.uint32(f["count"], 1, largest_count(m)).value_or(1);
    if (count > max_period) {
        refuse_period(r, f["count"], count, max_period);
        return {start};
    }
    const FieldValue mask = all_ones(width_of(m.kind, m.bits));
    std::vector<FieldValue> v;
    v.reserve(count);
    for (uint32_t j = 0; j < count; ++j) v.push_back((up ? start + step * j : start - step * j) & mask);
    return v;
}

std::vector<FieldValue> listed(Reader& r, const Field& f, const FieldModel& m, uint64_t max_period) {
    const size_t n = r.array(f);
    if (!f.present() || !f.json().is_array()) return {m.default_value};
    if (n == 0) {
        r.refuse(f, "an empty list: give at least one value");
        return {m.default_value};
    }
    if (n > max_period) {
        refuse_period(r, f, n, max_period);
        return {m.default_value};
    }
    std::vector<FieldValue> v;
    for (size_t i = 0; i < n; ++i) v.push_back(read_value(r, f.at(i), m).value_or(m.default_value));
    return v;
}

std::vector<FieldValue> drawn(Reader& r, const Field& f, const FieldModel& m, uint64_t max_period) {
    if (!r.object(f, {"min", "max", "seed", "count"})) return {m.default_value};
    const FieldValue lo = read_value(r, f["min"], m).value_or(0);
    const FieldValue hi = read_value(r, f["max"], m).value_or(all_ones(width_of(m.kind, m.bits)));
    const uint32_t seed = r.uint32(f["seed"]).value_or(1);
    const uint32_t count = r.uint32(f["count"], 1).value_or(1);
    if (lo > hi) {
        r.refuse(f, fmt::format("min {} is above max {}", value_text(lo, m.kind), value_text(hi, m.kind)));
        return {m.default_value};
    }
    if (count > max_period) {
        refuse_period(r, f["count"], count, max_period);
        return {lo};
    }
    return random_values(lo, hi, seed, count);
}

}  // namespace

FieldModel integer_field(unsigned bits, uint32_t default_value) {
    FieldModel m;
    m.bits = bits;
    m.default_value = default_value;
    return m;
}

FieldModel auto_integer_field(unsigned bits, uint32_t default_value) {
    FieldModel m = integer_field(bits, default_value);
    m.has_auto = m.auto_by_default = true;
    return m;
}

FieldModel mac_field(bool auto_by_default) {
    FieldModel m;
    m.kind = FieldModel::Kind::mac;
    m.bits = 48;
    m.has_auto = m.auto_by_default = auto_by_default;
    return m;
}

FieldModel ip_field(bool v6) {
    FieldModel m;
    m.kind = v6 ? FieldModel::Kind::ipv6 : FieldModel::Kind::ipv4;
    m.bits = v6 ? 128 : 32;
    m.has_auto = m.auto_is_dhcp = true;
    return m;
}

FieldValues read_pattern(Reader& r, const Field& f, const FieldModel& m, uint64_t max_period) {
    FieldValues out;
    out.path = f.path();
    out.given = f.present();
    const auto as_default = [&] {
        out.automatic = m.auto_by_default;
        out.values = out.automatic ? std::vector<FieldValue>{} : std::vector<FieldValue>{m.default_value};
        return out;
    };
    std::vector<std::string_view> keys = {"choice", "value", "values", "increment", "decrement", "metric_tags"};
    std::vector<std::string_view> choices = {"value", "values", "increment", "decrement"};
    if (m.has_auto) {
        keys.push_back("auto");
        choices.push_back("auto");
    }
    if (m.has_random) {
        keys.push_back("random");
        choices.push_back("random");
    }
    const size_t before = r.refusal_count();
    if (!r.object(f, keys)) return as_default();
    if (r.array(f["metric_tags"]) > 0)
        r.refuse(f["metric_tags"], "linerate keeps no tagged metrics: leave metric_tags out");
    const auto index = r.one_of(f["choice"], choices);
    const std::string_view choice = index ? choices[*index] : m.auto_by_default ? "auto" : "value";
    if (choice == "value") {
        out.values = {read_value(r, f["value"], m).value_or(m.default_value)};
    } else if (choice == "values") {
        out.values = listed(r, f["values"], m, max_period);
    } else if (choice == "increment" || choice == "decrement") {
        out.values = counter(r, f[choice], m, choice == "increment", max_period);
    } else if (choice == "random") {
        out.values = drawn(r, f["random"], m, max_period);
    } else if (m.auto_is_dhcp) {
        r.refuse(f, "auto (DHCP) needs an OTG device, and linerate's flows go port to port: give the address");
    } else {
        out.automatic = true;  // the placeholder value sent with it means nothing
    }
    if (r.refusal_count() > before) return as_default();
    return out;
}

bool require_value(Reader& r, const FieldValues& v, FieldValue allowed, const std::string& why) {
    for (const auto x : v.values)
        if (x != allowed) {
            r.refuse(v.path, why);
            return false;
        }
    return true;
}

std::vector<FieldValue> random_values(FieldValue lo, FieldValue hi, uint32_t seed, uint32_t count) {
    // splitmix64 (the same seed, the same values); a draw's 64 bits, reduced to the range
    // (fields with random choices are at most 32 bits wide).
    uint64_t x = seed ? seed : 0x6c696e6572617465ull;
    const auto span = static_cast<uint64_t>(hi - lo) + 1;
    std::vector<FieldValue> v;
    v.reserve(count);
    for (uint32_t i = 0; i < count; ++i) {
        uint64_t z = (x += 0x9e3779b97f4a7c15ull);
        z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
        z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
        z ^= z >> 31;
        v.push_back(lo + (span ? z % span : z));
    }
    return v;
}

packet::MacAddr to_mac(FieldValue v) {
    packet::MacAddr m;
    for (size_t i = 6; i-- > 0; v >>= 8) m.b[i] = static_cast<uint8_t>(v);
    return m;
}

packet::IpAddr to_ip(FieldValue v, bool v6) {
    packet::IpAddr a;
    a.v6 = v6;
    for (size_t i = v6 ? 16 : 4; i-- > 0; v >>= 8) a.b[i] = static_cast<uint8_t>(v);
    return a;
}

std::string value_text(FieldValue v, FieldModel::Kind kind) {
    switch (kind) {
        case FieldModel::Kind::mac: return to_mac(v).str();
        case FieldModel::Kind::ipv4: return to_ip(v, false).str();
        case FieldModel::Kind::ipv6: return to_ip(v, true).str();
        case FieldModel::Kind::integer: break;
    }
    return fmt::format("{}", static_cast<uint64_t>(v));
}

uint64_t lcm_capped(uint64_t a, uint64_t b, uint64_t cap) {
    if (a > cap || b > cap) return cap + 1;
    const uint64_t l = a / std::gcd(a, b) * b;  // a, b <= cap < 2^32: no overflow
    return std::min(l, cap + 1);
}

}  // namespace lr::otg
