// Strict parsers for CLI/profile values. Each throws lr::UsageError naming the option.
#pragma once
#include <cstdint>
#include <string>
#include <string_view>

namespace lr::spec {

// Throws UsageError: invalid WHAT "S": WHY (the whole value typed, quoted).
[[noreturn]] void invalid_value(std::string_view what, std::string_view s, std::string_view why);

// "10s", "500ms", "2m", "1.5" (seconds). Must be > 0 and <= 1 year.
double parse_duration(std::string_view s, std::string_view what);
// --catch-up: "none" (0) or a duration up to 10 s.
double parse_catch_up(std::string_view s, std::string_view what);
// "1000000", "10k", "1M", "2G" (decimal multipliers). Must be > 0.
uint64_t parse_count(std::string_view s, std::string_view what);
// Unsigned integer in [lo, hi].
uint64_t parse_uint(std::string_view s, std::string_view what, uint64_t lo, uint64_t hi);

// A port and how many queues to use on it: "NAME" or "NAME,queues=N".
// NAME is a DPDK device name (net_ring0, 0000:01:00.0) or a numeric port id.
struct PortQueues {
    std::string port;
    uint16_t queues = 1;
    bool operator==(const PortQueues&) const = default;
};
inline constexpr uint16_t kMaxQueues = 128;
PortQueues parse_port_queues(std::string_view s, std::string_view what);

}  // namespace lr::spec
