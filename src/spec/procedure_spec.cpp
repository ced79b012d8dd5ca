#include "spec/procedure_spec.h"

#include <algorithm>
#include <fmt/format.h>

#include "packet/frame.h"
#include "spec/parse.h"
#include "util/error.h"

namespace lr::spec {
namespace {

constexpr std::pair<Procedure, std::string_view> kNames[] = {
    {Procedure::run, "run"},           {Procedure::sweep, "sweep"},           {Procedure::throughput, "throughput"},
    {Procedure::latency, "latency"},   {Procedure::frame_loss, "frame-loss"}, {Procedure::back_to_back, "back-to-back"},
};

// A frame size within the value `whole` (errors quote all of it).
unsigned frame_size(std::string_view s, std::string_view what, std::string_view whole) {
    return static_cast<unsigned>(parse_uint(s, what, packet::kMinFrame, packet::kMaxFrame, {whole, "frame size"}));
}

// "LO:HI:*F" or "LO:HI:+S" within `whole`: LO, then multiplied by F (or plus S) while at most HI.
void append_range(std::string_view item, std::string_view what, std::string_view whole, std::vector<unsigned>& out) {
    const auto c1 = item.find(':'), c2 = item.find(':', c1 + 1);
    const auto bad = [&](std::string_view why) { throw_invalid(what, whole, fmt::format("\"{}\": {}", item, why)); };
    if (c2 == std::string_view::npos || item.find(':', c2 + 1) != std::string_view::npos)
        bad("a range is LO:HI:*FACTOR or LO:HI:+STEP");
    const unsigned lo = frame_size(item.substr(0, c1), what, whole),
                   hi = frame_size(item.substr(c1 + 1, c2 - c1 - 1), what, whole);
    if (hi < lo) bad("the range ends before it starts");
    const auto step = item.substr(c2 + 1);
    if (step.size() < 2 || (step[0] != '*' && step[0] != '+')) bad("the step is *FACTOR or +STEP");
    const auto n = parse_uint(step.substr(1), what, step[0] == '*' ? 2 : 1, packet::kMaxFrame,
                              {whole, step[0] == '*' ? "the factor" : "the step"});
    for (uint64_t v = lo; v <= hi; v = step[0] == '*' ? v * n : v + n) out.push_back(static_cast<unsigned>(v));
}

}  // namespace

std::string_view to_string(Procedure p) {
    for (const auto& [k, n] : kNames)
        if (k == p) return n;
    return "?";
}

Procedure parse_procedure(std::string_view s, std::string_view what) {
    for (const auto& [k, n] : kNames)
        if (n == s) return k;
    throw UsageError(fmt::format("invalid {} \"{}\": expected run, sweep, throughput, latency, frame-loss or "
                                 "back-to-back",
                                 what, s));
}

std::vector<unsigned> parse_sizes(std::string_view s, std::string_view what) {
    std::vector<unsigned> out;
    size_t pos = 0;
    if (s.empty()) throw_invalid(what, s, "give frame sizes");
    while (pos <= s.size()) {
        auto comma = s.find(',', pos);
        if (comma == std::string_view::npos) comma = s.size();
        const auto item = s.substr(pos, comma - pos);
        if (item == "rfc2544" || item == "rfc2544+jumbo") {
            for (unsigned v : {64u, 128u, 256u, 512u, 1024u, 1280u, 1518u}) out.push_back(v);
            if (item == "rfc2544+jumbo") out.push_back(9000);
        } else if (item.find(':') != std::string_view::npos) {
            append_range(item, what, s, out);
        } else {
            if (item.empty()) throw_invalid(what, s, "an empty size in the list");
            out.push_back(frame_size(item, what, s));
        }
        pos = comma + 1;
    }
    std::sort(out.begin(), out.end());
    out.erase(std::unique(out.begin(), out.end()), out.end());
    return out;
}

}  // namespace lr::spec
