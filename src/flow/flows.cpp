#include "flow/flows.h"

#include <fmt/format.h>

#include "util/error.h"

namespace lr::flow {
namespace {

struct Named {
    const char* name;
    VaryField bit;
};
constexpr Named kFields[] = {
    {"src-ip", vary_src_ip}, {"dst-ip", vary_dst_ip}, {"src-port", vary_src_port}, {"dst-port", vary_dst_port}};

void check_addr(const packet::IpAddr& base, uint32_t count, const char* what) {
    if (base.v6 || count == 0) return;
    const uint64_t v = uint64_t(base.b[0]) << 24 | base.b[1] << 16 | base.b[2] << 8 | base.b[3];
    if (v + count - 1 > 0xffffffffull)
        throw UsageError(fmt::format("{} flows starting at {} {} would run past 255.255.255.255", count, what,
                                     base.str()));
}

}  // namespace

unsigned parse_vary(std::string_view s) {
    if (s == "none") return 0;
    unsigned v = 0;
    size_t pos = 0;
    while (pos <= s.size()) {
        size_t comma = s.find(',', pos);
        if (comma == std::string_view::npos) comma = s.size();
        const auto tok = s.substr(pos, comma - pos);
        pos = comma + 1;
        bool found = false;
        for (const auto& f : kFields)
            if (tok == f.name) {
                v |= f.bit;
                found = true;
            }
        if (!found)
            throw UsageError(fmt::format("invalid --vary \"{}\": unknown field \"{}\" (use src-ip, dst-ip, "
                                         "src-port, dst-port or none)",
                                         s, tok));
    }
    return v;
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
    if (count > 1 && vary == 0)
        throw UsageError(fmt::format("{} flows need at least one varied field (--vary)", count));
    if ((vary & vary_src_port) && base.src_port + uint64_t(count) - 1 > 65535)
        throw UsageError(fmt::format("{} flows starting at source port {} would run past 65535", count,
                                     base.src_port));
    if ((vary & vary_dst_port) && base.dst_port + uint64_t(count) - 1 > 65535)
        throw UsageError(fmt::format("{} flows starting at destination port {} would run past 65535", count,
                                     base.dst_port));
    if (vary & vary_src_ip) check_addr(base.src_ip, count, "source");
    if (vary & vary_dst_ip) check_addr(base.dst_ip, count, "destination");
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
        v.push_back(q % count);
        return v;
    }
    for (uint32_t i = q; i < count; i += nq) v.push_back(i);
    return v;
}

}  // namespace lr::flow
