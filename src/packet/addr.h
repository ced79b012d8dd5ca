// MAC and IP address value types with strict parsing (throws lr::UsageError).
#pragma once
#include <array>
#include <cstdint>
#include <string>
#include <string_view>

namespace lr::packet {

struct MacAddr {
    std::array<uint8_t, 6> b{};
    bool operator==(const MacAddr&) const = default;
    std::string str() const;
    bool is_multicast() const { return b[0] & 0x01; }
    bool is_locally_administered() const { return b[0] & 0x02; }
};

// An IPv4 or IPv6 address. IPv4 occupies bytes [0,4) of `b`.
struct IpAddr {
    bool v6 = false;
    std::array<uint8_t, 16> b{};
    bool operator==(const IpAddr&) const = default;
    std::string str() const;
    // Adds `n` to the address as a big-endian integer (wrapping within the family width).
    IpAddr plus(uint64_t n) const;
};

// "02:00:00:00:00:01" (also accepts '-' separators). Throws UsageError naming `what`.
MacAddr parse_mac(std::string_view s, std::string_view what);
// Dotted quad or RFC 4291 text form. Throws UsageError naming `what`.
IpAddr parse_ip(std::string_view s, std::string_view what);

// True when the address lies in the benchmarking ranges 198.18.0.0/15 or 2001:2::/48.
bool in_benchmark_range(const IpAddr& a);

}  // namespace lr::packet
