#include "flow/flows.h"

#include <algorithm>
#include <string>

#include "util/error.h"

namespace lr::flow {
namespace {

struct Named {
    std::string_view name;
    VaryField bit;
};
constexpr Named kFields[] = {
    {"src-ip", vary_src_ip},
    {"dst-ip", vary_dst_ip},
    {"src-port", vary_src_port},
    {"dst-port", vary_dst_port},
};
constexpr unsigned kAllFields = vary_src_ip | vary_dst_ip | vary_src_port | vary_dst_port;

void check_port_range(uint16_t base, uint32_t count, const char* which) {
    if (uint64_t{base} + count - 1 > 65535)
        throw UsageError(std::to_string(count) + " flows starting at " + which + " port " + std::to_string(base) +
                         " would run past 65535");
}

void check_addr_range(const packet::IpAddr& base, uint32_t count, const char* which) {
    // plus() wraps within the family width, so a wrap shows up as a smaller last address.
    const packet::IpAddr last = base.plus(count - 1);
    const size_t width = base.v6 ? 16 : 4;
    if (std::lexicographical_compare(last.b.begin(), last.b.begin() + width, base.b.begin(),
                                     base.b.begin() + width))
        throw UsageError(std::to_string(count) + " flows starting at " + which + " address " + base.str() +
                         " would run past " +
                         (base.v6 ? "ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff" : "255.255.255.255"));
}

}  // namespace

unsigned parse_vary(std::string_view s) {
    if (s == "none") return 0;
    unsigned v = 0;
    size_t pos = 0;
    for (;;) {
        const size_t comma = std::min(s.find(',', pos), s.size());
        const std::string_view tok = s.substr(pos, comma - pos);
        const auto it = std::find_if(std::begin(kFields), std::end(kFields),
                                     [&](const Named& f) { return f.name == tok; });
        if (it == std::end(kFields))
            throw UsageError("invalid --vary \"" + std::string(s) + "\": unknown field \"" + std::string(tok) +
                             "\" (use src-ip, dst-ip, src-port, dst-port or none)");
        v |= it->bit;
        if (comma == s.size()) return v;
        pos = comma + 1;
    }
}

std::string vary_str(unsigned vary) {
    std::string s;
    for (const auto& f : kFields)
        if (vary & f.bit) {
            if (!s.empty()) s.push_back(',');
            s.append(f.name);
        }
    return s.empty() ? "none" : s;
}

std::vector<packet::FrameSpec> make_flows(const packet::FrameSpec& base, uint32_t count, unsigned vary) {
    if (count == 0) throw UsageError("--flows must be at least 1");
    if (count > 1 && (vary & kAllFields) == 0)
        throw UsageError(std::to_string(count) + " flows need at least one varied field (--vary)");
    if (vary & vary_src_port) check_port_range(base.src_port, count, "source");
    if (vary & vary_dst_port) check_port_range(base.dst_port, count, "destination");
    if (vary & vary_src_ip) check_addr_range(base.src_ip, count, "source");
    if (vary & vary_dst_ip) check_addr_range(base.dst_ip, count, "destination");

    std::vector<packet::FrameSpec> out;
    out.reserve(count);
    for (uint32_t i = 0; i < count; ++i) {
        packet::FrameSpec f = base;
        if (vary & vary_src_ip) f.src_ip = base.src_ip.plus(i);
        if (vary & vary_dst_ip) f.dst_ip = base.dst_ip.plus(i);
        if (vary & vary_src_port) f.src_port = static_cast<uint16_t>(base.src_port + i);
        if (vary & vary_dst_port) f.dst_port = static_cast<uint16_t>(base.dst_port + i);
        out.push_back(f);
    }
    return out;
}

std::vector<uint32_t> flows_for_queue(uint32_t count, uint32_t q, uint32_t nq) {
    std::vector<uint32_t> v;
    if (count == 0 || nq == 0) return v;
    if (count < nq) {
        v.push_back(q % count);  // fewer flows than queues: queues share flows
        return v;
    }
    v.reserve(count / nq + 1);
    for (uint64_t i = q; i < count; i += nq) v.push_back(static_cast<uint32_t>(i));
    return v;
}

}  // namespace lr::flow
