#include "packet/addr.h"

#include <arpa/inet.h>

#include "util/error.h"

namespace lr::packet {
namespace {

constexpr char kHex[] = "0123456789abcdef";

int hex_value(char c) {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
}

std::string quoted(std::string_view what, std::string_view s) {
    std::string m = "invalid ";
    m.append(what);
    m.append(" \"");
    m.append(s);
    m.append("\": ");
    return m;
}

}  // namespace

std::string MacAddr::str() const {
    std::string s;
    s.reserve(17);
    for (size_t i = 0; i < b.size(); ++i) {
        if (i) s.push_back(':');
        s.push_back(kHex[b[i] >> 4]);
        s.push_back(kHex[b[i] & 0x0f]);
    }
    return s;
}

std::string IpAddr::str() const {
    char buf[INET6_ADDRSTRLEN] = {};
    if (!inet_ntop(v6 ? AF_INET6 : AF_INET, b.data(), buf, sizeof buf)) return "?";
    return buf;
}

IpAddr IpAddr::plus(uint64_t n) const {
    IpAddr r = *this;
    // Byte-wise big-endian addition; carries out of the top byte are dropped (wrap).
    uint64_t carry = n;
    for (size_t i = v6 ? 16 : 4; i-- > 0 && carry;) {
        const uint64_t s = r.b[i] + (carry & 0xff);
        r.b[i] = static_cast<uint8_t>(s);
        carry = (carry >> 8) + (s >> 8);
    }
    return r;
}

MacAddr parse_mac(std::string_view s, std::string_view what) {
    // Exactly six two-digit hex groups separated by one consistent separator (':' or '-').
    if (s.size() != 17 || (s[2] != ':' && s[2] != '-'))
        throw UsageError(quoted(what, s) + "expected a MAC address like 02:00:00:00:00:01");
    const char sep = s[2];
    MacAddr m;
    for (size_t i = 0; i < 6; ++i) {
        const int hi = hex_value(s[i * 3]), lo = hex_value(s[i * 3 + 1]);
        if (hi < 0 || lo < 0 || (i < 5 && s[i * 3 + 2] != sep))
            throw UsageError(quoted(what, s) + "expected a MAC address like 02:00:00:00:00:01");
        m.b[i] = static_cast<uint8_t>(hi << 4 | lo);
    }
    return m;
}

IpAddr parse_ip(std::string_view s, std::string_view what) {
    IpAddr a;
    // inet_pton parses the whole C string and rejects trailing junk, empty input, octets
    // above 255 and wrong group counts; embedded NULs would hide a tail, so refuse them.
    if (!s.empty() && s.find('\0') == std::string_view::npos && s.size() < 64) {
        const std::string z(s);
        if (inet_pton(AF_INET, z.c_str(), a.b.data()) == 1) return a;
        if (inet_pton(AF_INET6, z.c_str(), a.b.data()) == 1) {
            a.v6 = true;
            return a;
        }
    }
    throw UsageError(quoted(what, s) + "not an IPv4 or IPv6 address");
}

bool in_benchmark_range(const IpAddr& a) {
    if (!a.v6) return a.b[0] == 198 && (a.b[1] & 0xfe) == 18;  // 198.18.0.0/15 (RFC 2544)
    return a.b[0] == 0x20 && a.b[1] == 0x01 && a.b[2] == 0x00 && a.b[3] == 0x02 && a.b[4] == 0x00 &&
           a.b[5] == 0x00;  // 2001:2::/48 (RFC 5180)
}

}  // namespace lr::packet
