// Strict parsers for CLI/profile values. Each throws lr::UsageError naming the option.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace lr::spec {

// "10s", "500ms", "2m", "1.5" (seconds). Must be > 0 (or 0, when zero_allowed) and <= 1 year.
double parse_duration(std::string_view s, std::string_view what, bool zero_allowed = false);
// --catch-up: "none" (0) or a duration up to 10 s.
double parse_catch_up(std::string_view s, std::string_view what);
// --sender-nice: "keep" (nullopt) or a nice value in -20..19.
std::optional<int> parse_nice(std::string_view s, std::string_view what);
// --settle: "0" or "none" (no rest between trials) or a duration up to 10 minutes.
double parse_settle(std::string_view s, std::string_view what);
// A duration as parse_duration reads it back: "100ms", "1s", "60s", "250us".
std::string format_duration(double s);
// "1000000", "10k", "1M", "2G" (decimal multipliers). Must be > 0.
uint64_t parse_count(std::string_view s, std::string_view what);
// Unsigned integer in [lo, hi].
uint64_t parse_uint(std::string_view s, std::string_view what, uint64_t lo, uint64_t hi);

// A part of a longer value (the queue count of "veth0,queues=0", the step of "64:128:+0"):
// errors quote the whole value as typed, then name the part ("invalid --tx \"veth0,queues=0\":
// queues \"0\": must be between 1 and 128").
struct ValuePart {
    std::string_view whole;  // the value as typed
    std::string_view label;  // what the part is: "queues", "the step", "CPU"
};
uint64_t parse_uint(std::string_view s, std::string_view what, uint64_t lo, uint64_t hi, const ValuePart& in);
// A UsageError for the value `s` of option `what`: `invalid WHAT "S": WHY`.
[[noreturn]] void throw_invalid(std::string_view what, std::string_view s, std::string_view why);

// Where to listen: "PORT" (on 127.0.0.1) or "ADDR:PORT". Errors quote the whole value.
struct ListenAddr {
    std::string host;
    uint16_t port = 0;
};
ListenAddr parse_listen(std::string_view s, std::string_view what);

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
