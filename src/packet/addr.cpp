#include "packet/addr.h"

#include <arpa/inet.h>
#include <cctype>
#include <fmt/format.h>

#include "util/error.h"

namespace lr::packet {

std::string MacAddr::str() const {
    return fmt::format("{:02x}:{:02x}:{:02x}:{:02x}:{:02x}:{:02x}", b[0], b[1], b[2], b[3], b[4], b[5]);
}

std::string IpAddr::str() const {
    char buf[INET6_ADDRSTRLEN] = {};
    inet_ntop(v6 ? AF_INET6 : AF_INET, b.data(), buf, sizeof buf);
    return buf;
}

IpAddr IpAddr::plus(uint64_t n) const {
    IpAddr r = *this;
    const int last = v6 ? 15 : 3;
    uint64_t carry = n;
    for (int i = last; i >= 0 && carry; --i) {
        const uint64_t s = r.b[static_cast<size_t>(i)] + (carry & 0xff);
        r.b[static_cast<size_t>(i)] = static_cast<uint8_t>(s);
        carry = (carry >> 8) + (s >> 8);
    }
    return r;
}

MacAddr parse_mac(std::string_view s, std::string_view what) {
    MacAddr m;
    auto fail = [&] {
        throw UsageError(fmt::format("invalid {} \"{}\": expected a MAC address like 02:00:00:00:00:01", what, s));
    };
    if (s.size() != 17) fail();
    for (size_t i = 0; i < 6; ++i) {
        const char hi = s[i * 3], lo = s[i * 3 + 1];
        if (!std::isxdigit(static_cast<unsigned char>(hi)) || !std::isxdigit(static_cast<unsigned char>(lo))) fail();
        if (i < 5 && s[i * 3 + 2] != ':' && s[i * 3 + 2] != '-') fail();
        auto nib = [](char c) { return static_cast<uint8_t>(std::isdigit(static_cast<unsigned char>(c)) ? c - '0' : (std::tolower(c) - 'a' + 10)); };
        m.b[i] = static_cast<uint8_t>(nib(hi) << 4 | nib(lo));
    }
    return m;
}

IpAddr parse_ip(std::string_view s, std::string_view what) {
    IpAddr a;
    const std::string str(s);
    if (inet_pton(AF_INET, str.c_str(), a.b.data()) == 1) return a;
    if (inet_pton(AF_INET6, str.c_str(), a.b.data()) == 1) {
        a.v6 = true;
        return a;
    }
    throw UsageError(fmt::format("invalid {} \"{}\": not an IPv4 or IPv6 address", what, s));
}

bool in_benchmark_range(const IpAddr& a) {
    if (!a.v6) return a.b[0] == 198 && (a.b[1] & 0xfe) == 18;  // 198.18.0.0/15
    return a.b[0] == 0x20 && a.b[1] == 0x01 && a.b[2] == 0x00 && a.b[3] == 0x02 && a.b[4] == 0 &&
           a.b[5] == 0;  // 2001:2::/48
}

}  // namespace lr::packet
