#include "spec/stream_spec.h"

#include <fmt/format.h>
#include <string_view>
#include <utility>

#include "spec/parse.h"
#include "util/error.h"

namespace lr::spec {

std::string Pattern::str() const {
    switch (kind) {
        case Kind::cbr: return "cbr";
        case Kind::burst: return fmt::format("burst:{}", burst);
        case Kind::poisson: return "poisson";
    }
    return "?";
}

Pattern parse_pattern(std::string_view s, std::string_view what) {
    if (s == "cbr") return {};
    if (s == "poisson") return {Pattern::Kind::poisson, 1};
    if (s.rfind("burst:", 0) == 0)
        return {Pattern::Kind::burst,
                static_cast<uint32_t>(parse_uint(s.substr(6), what, 1, 1u << 20, {s, "the burst length"}))};
    throw UsageError(fmt::format("invalid {} \"{}\": expected cbr, burst:N or poisson", what, s));
}

std::string StreamSpec::str() const {
    std::string s = fmt::format("{}: size {}", name, replay ? "as recorded" : size.str());
    if (rate) s += fmt::format(", {}", rate->str());
    else if (share) s += fmt::format(", {:g} % of the port's frames", *share * 100);
    if (replay) s += fmt::format(", {} from {}", replay->loops ? fmt::format("{} x", replay->loops) : "looped",
                                 replay->path);
    if (count) s += fmt::format(", {} frames", *count);
    if (bursts) s += fmt::format(", {} bursts of {} every {}", bursts, burst_frames, format_duration(burst_gap_s));
    if (endless_bursts) s += fmt::format(", bursts of {} every {}", burst_frames, format_duration(burst_gap_s));
    if (delay_s > 0) s += fmt::format(", starts at {}", format_duration(delay_s));
    if (!after.empty()) s += fmt::format(", after {}", after);
    return s;
}

namespace {

// The code point of the UTF-8 sequence at s[i] and its length; length 0 when malformed
// (truncated, overlong, a surrogate or above U+10FFFF).
std::pair<uint32_t, size_t> utf8_at(std::string_view s, size_t i) {
    const auto c = static_cast<unsigned char>(s[i]);
    if (c < 0x80) return {c, 1};
    const size_t n = c >= 0xf0 ? 4 : c >= 0xe0 ? 3 : c >= 0xc2 ? 2 : 0;
    if (n == 0 || c > 0xf4 || i + n > s.size()) return {0, 0};
    uint32_t cp = c & (0x7f >> n);
    for (size_t k = 1; k < n; ++k) {
        const auto t = static_cast<unsigned char>(s[i + k]);
        if ((t & 0xc0) != 0x80) return {0, 0};
        cp = cp << 6 | (t & 0x3f);
    }
    const uint32_t least[] = {0, 0, 0x80, 0x800, 0x10000};
    if (cp < least[n] || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff)) return {0, 0};
    return {cp, n};
}

}  // namespace

std::string stream_name_problem(std::string_view name) {
    if (name.empty()) return "a stream needs a name";
    if (name.size() > kMaxStreamNameBytes)
        return fmt::format("a name of {} bytes is too long (at most {})", name.size(), kMaxStreamNameBytes);
    for (size_t i = 0; i < name.size();) {
        const auto [cp, n] = utf8_at(name, i);
        if (n == 0) return fmt::format("byte {} of the name is not valid UTF-8", i);
        if (cp < 0x20 || (cp >= 0x7f && cp < 0xa0))
            return fmt::format("the name has a control character (U+{:04X}) at byte {}", cp, i);
        i += n;
    }
    return {};
}

std::string name_prefix(std::string_view name, size_t bytes) {
    if (name.size() <= bytes) return std::string(name);
    size_t n = bytes;
    while (n > 0 && (static_cast<unsigned char>(name[n]) & 0xc0) == 0x80) --n;  // a continuation byte
    return std::string(name.substr(0, n));
}

StreamInput parse_stream_text(std::string_view text) {
    StreamInput in;
    in.text = fmt::format("--stream {}", text);
    if (text.empty()) throw UsageError("invalid --stream \"\": expected KEY=VALUE,... (docs/streams.md)");
    size_t pos = 0;
    while (pos <= text.size()) {
        size_t comma = text.find(',', pos);
        if (comma == std::string_view::npos) comma = text.size();
        const auto tok = text.substr(pos, comma - pos);
        const auto eq = tok.find('=');
        if (eq == std::string_view::npos && tok == "ipv6") {
            in.keys.push_back({"ipv6", "true", {}});  // a switch needs no value
        } else if (eq == std::string_view::npos) {
            // A list value (vary=src-ip,dst-port): the token continues the previous value.
            if (in.keys.empty() || tok.empty())
                throw UsageError(fmt::format("invalid --stream \"{}\": \"{}\" is not KEY=VALUE", text, tok));
            in.keys.back().value += fmt::format(",{}", tok);
        } else {
            if (eq == 0) throw UsageError(fmt::format("invalid --stream \"{}\": \"{}\" has no key", text, tok));
            const std::string key(tok.substr(0, eq));
            for (const auto& k : in.keys)
                if (k.key == key)
                    throw UsageError(fmt::format("invalid --stream \"{}\": {} is given twice", text, key));
            in.keys.push_back({key, std::string(tok.substr(eq + 1)), {}});
        }
        pos = comma + 1;
    }
    return in;
}

const std::vector<StreamKeyDoc>& stream_only_keys() {
    static const std::vector<StreamKeyDoc> k = {
        {"name", "NAME", "The stream's name in every output (default s1, s2, ... in the order given)"},
        {"share", "PERCENT", "Its part of the port's frames (of --rate, or of as fast as possible when --rate is "
                             "max); streams with neither rate nor share split what the shares leave equally"},
        {"bursts", "B", "Send B bursts of burst-frames frames, burst-gap apart (multi-burst), then end"},
        {"burst-frames", "N", "Frames per burst (with bursts)"},
        {"burst-gap", "TIME", "From one burst's last frame to the next burst's first (with bursts)"},
        {"delay", "TIME", "Start this long after the trial starts"},
        {"after", "NAME", "Start once stream NAME has sent everything it sends (it needs a count or bursts)"},
        {"port", "PORT[,PORT...]", "Leave by these --tx ports only (default: every --tx port)"},
        {"pcap", "FILE", "Replay the frames of a pcap file instead of building them (Ethernet captures)"},
        {"speed", "FACTOR", "pcap: the recorded timing sped up by FACTOR (default 1; a rate overrides it)"},
        {"loops", "N", "pcap: times through the file (default 1; 0: until the trial ends)"},
    };
    return k;
}

}  // namespace lr::spec
