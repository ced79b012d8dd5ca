#include "spec/parse.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <fmt/format.h>

#include "util/error.h"

namespace lr::spec {
namespace {

// Why `s` is not a whole number in [lo, hi] (empty: it is one, in `v`).
std::string uint_problem(std::string_view s, uint64_t lo, uint64_t hi, uint64_t& v) {
    auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
    if (s.empty() || ec != std::errc() || p != s.data() + s.size()) return "expected a whole number";
    if (v < lo || v > hi) return fmt::format("must be between {} and {}", lo, hi);
    return {};
}

}  // namespace

void throw_invalid(std::string_view what, std::string_view s, std::string_view why) {
    throw UsageError(fmt::format("invalid {} \"{}\": {}", what, s, why));
}

double parse_duration(std::string_view s, std::string_view what, bool zero_allowed) {
    if (s.empty()) throw_invalid(what, s, "empty duration");
    double v = 0;
    auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
    if (ec != std::errc() || p == s.data()) throw_invalid(what, s, "expected a number with unit s, ms, us, m or h");
    std::string_view unit(p, static_cast<size_t>(s.data() + s.size() - p));
    double mul = 0;
    if (unit.empty() || unit == "s") mul = 1;
    else if (unit == "ms") mul = 1e-3;
    else if (unit == "us") mul = 1e-6;
    else if (unit == "m") mul = 60;
    else if (unit == "h") mul = 3600;
    else throw_invalid(what, s, fmt::format("unknown unit \"{}\" (use s, ms, us, m or h)", unit));
    v *= mul;
    if (zero_allowed && v == 0) return 0;
    if (!std::isfinite(v) || v <= 0) throw_invalid(what, s, zero_allowed ? "must be 0 or more" : "must be greater than zero");
    if (v > 366.0 * 86400) throw_invalid(what, s, "must be at most one year");
    return v;
}

double parse_settle(std::string_view s, std::string_view what) {
    if (s == "none") return 0;
    const double v = parse_duration(s, what, true);
    if (v > 600) throw_invalid(what, s, "must be 0 or at most 10 minutes");
    return v;
}

double parse_catch_up(std::string_view s, std::string_view what) {
    if (s == "none") return 0;
    const double v = parse_duration(s, what);
    if (v > 10) throw_invalid(what, s, "must be none or at most 10 s");
    return v;
}

std::optional<int> parse_nice(std::string_view s, std::string_view what) {
    if (s == "keep") return std::nullopt;
    const bool negative = s.starts_with('-');
    const auto digits = negative ? s.substr(1) : s;
    uint64_t magnitude = 0;
    if (digits.empty() || !uint_problem(digits, 0, negative ? 20 : 19, magnitude).empty())
        throw_invalid(what, s, "must be keep or a nice value from -20 to 19");
    return negative ? -static_cast<int>(magnitude) : static_cast<int>(magnitude);
}

std::string format_duration(double s) {
    const auto whole = [](double v) { return std::abs(v - std::round(v)) < 1e-9 * std::max(1.0, v); };
    if (s >= 1 || whole(s)) return fmt::format("{:g}s", s);
    if (whole(s * 1e3)) return fmt::format("{:g}ms", std::round(s * 1e3));
    return fmt::format("{:g}us", s * 1e6);
}

uint64_t parse_count(std::string_view s, std::string_view what) {
    if (s.empty()) throw_invalid(what, s, "empty count");
    uint64_t v = 0;
    auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
    if (ec == std::errc::result_out_of_range) throw_invalid(what, s, "too large");
    if (ec != std::errc() || p == s.data())
        throw_invalid(what, s, "expected a whole number (suffix k, M or G allowed)");
    std::string_view suf(p, static_cast<size_t>(s.data() + s.size() - p));
    uint64_t mul = 1;
    if (suf.empty()) mul = 1;
    else if (suf == "k" || suf == "K") mul = 1000;
    else if (suf == "M") mul = 1000000;
    else if (suf == "G") mul = 1000000000;
    else throw_invalid(what, s, fmt::format("unknown suffix \"{}\" (use k, M or G)", suf));
    if (v > UINT64_MAX / mul) throw_invalid(what, s, "too large");
    v *= mul;
    if (v == 0) throw_invalid(what, s, "must be greater than zero");
    return v;
}

uint64_t parse_uint(std::string_view s, std::string_view what, uint64_t lo, uint64_t hi) {
    uint64_t v = 0;
    if (const auto why = uint_problem(s, lo, hi, v); !why.empty()) throw_invalid(what, s, why);
    return v;
}

uint64_t parse_uint(std::string_view s, std::string_view what, uint64_t lo, uint64_t hi, const ValuePart& in) {
    uint64_t v = 0;
    if (const auto why = uint_problem(s, lo, hi, v); !why.empty())
        throw_invalid(what, in.whole, fmt::format("{} \"{}\": {}", in.label, s, why));
    return v;
}

ListenAddr parse_listen(std::string_view s, std::string_view what) {
    const auto colon = s.rfind(':');
    ListenAddr a;
    a.host = colon == std::string_view::npos ? "127.0.0.1" : std::string(s.substr(0, colon));
    if (a.host.empty()) throw_invalid(what, s, "give ADDR:PORT or PORT");
    a.port = static_cast<uint16_t>(
        parse_uint(colon == std::string_view::npos ? s : s.substr(colon + 1), what, 1, 65535, {s, "port"}));
    return a;
}

PortQueues parse_port_queues(std::string_view s, std::string_view what) {
    PortQueues pq;
    size_t pos = 0;
    bool first = true;
    while (pos <= s.size()) {
        size_t comma = s.find(',', pos);
        if (comma == std::string_view::npos) comma = s.size();
        auto tok = s.substr(pos, comma - pos);
        pos = comma + 1;
        if (first) {
            first = false;
            if (tok.empty()) throw_invalid(what, s, "empty port name (expected NAME or NAME,queues=N)");
            pq.port = std::string(tok);
            continue;
        }
        auto eq = tok.find('=');
        if (eq == std::string_view::npos) throw_invalid(what, s, fmt::format("\"{}\" is not KEY=VALUE", tok));
        auto key = tok.substr(0, eq);
        auto val = tok.substr(eq + 1);
        if (key == "queues")
            pq.queues = static_cast<uint16_t>(parse_uint(val, what, 1, kMaxQueues, {s, "queues"}));
        else
            throw_invalid(what, s, fmt::format("unknown key \"{}\" (known: queues)", key));
    }
    return pq;
}

}  // namespace lr::spec
