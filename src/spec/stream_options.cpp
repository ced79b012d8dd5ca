// Stream definitions (--stream KEY=VALUE,..., a profile's [[stream]] tables) built through the
// option table: a key that is an option name is applied by that option's own row, onto the
// command line's options as the stream's defaults, so a stream and the command line cannot
// disagree on what a value means; the keys of streams alone are parsed here.
#include <algorithm>
#include <fmt/format.h>
#include <set>

#include "spec/option_rows.h"
#include "spec/options.h"

namespace lr::spec {
using namespace option_rows;
namespace {

// The options a stream may set for itself.
const std::set<std::string, std::less<>>& stream_option_keys() {
    static const std::set<std::string, std::less<>> k = {
        "size",     "proto",    "ipv6", "vlan", "vlan-pcp", "src-mac", "dst-mac", "src-ip", "dst-ip",
        "src-port", "dst-port", "ttl",  "flows", "vary",    "rate",    "pattern", "seed",   "count"};
    return k;
}
// Of those, what describes a built frame: a replayed stream takes its frames from the file.
bool template_key(std::string_view k) {
    return k != "rate" && k != "pattern" && k != "seed" && k != "count";
}

std::string key_list() {
    std::string out;
    for (const auto& k : stream_option_keys()) out += fmt::format("{}{}", out.empty() ? "" : ", ", k);
    for (const auto& k : stream_only_keys()) out += fmt::format(", {}", k.key);
    return out;
}

void stream_only_key(StreamSpec& st, const StreamKey& k) {
    const auto what = fmt::format("{}=", k.key);
    const auto& v = k.value;
    if (k.key == "name") {
        if (v.empty() || v.size() > 64 ||
            !std::all_of(v.begin(), v.end(), [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_' || c == '.'; }))
            throw_invalid(what, v, "a name of 1 to 64 letters, digits, '-', '_' or '.'");
        st.name = v;
    } else if (k.key == "share") {
        std::string p = v;
        if (!p.empty() && p.back() == '%') p.pop_back();
        const double pct = parse_percent(p, what);
        if (pct <= 0) throw_invalid(what, v, "a share above 0 %");
        st.share = pct / 100;
    } else if (k.key == "bursts") {
        st.bursts = static_cast<uint32_t>(parse_uint(v, what, 1, 1u << 30));
    } else if (k.key == "burst-frames") {
        st.burst_frames = static_cast<uint32_t>(parse_uint(v, what, 1, 1u << 30));
    } else if (k.key == "burst-gap") {
        st.burst_gap_s = parse_duration(v, what);
    } else if (k.key == "delay") {
        st.delay_s = parse_duration(v, what, true);
    } else if (k.key == "after") {
        st.after = v;
    } else if (k.key == "port") {
        size_t pos = 0;
        while (pos <= v.size()) {
            const size_t c = std::min(v.find(',', pos), v.size());
            if (c == pos) throw_invalid(what, v, "an empty port name");
            st.ports.push_back(v.substr(pos, c - pos));
            pos = c + 1;
        }
    } else if (k.key == "pcap") {
        if (v.empty()) throw_invalid(what, v, "a file name");
        if (!st.replay) st.replay = Replay{};
        st.replay->path = v;
    } else if (k.key == "speed") {
        double f = 0;
        size_t pos = 0;
        try {
            f = std::stod(v, &pos);
        } catch (const std::exception&) {
            pos = 0;
        }
        if (v.empty() || pos != v.size() || !(f > 0) || f > 1e6)
            throw_invalid(what, v, "a factor above 0 (2: twice as fast as recorded)");
        if (!st.replay) st.replay = Replay{};
        st.replay->speed = f;
    } else if (k.key == "loops") {
        if (!st.replay) st.replay = Replay{};
        st.replay->loops = parse_uint(v, what, 0, UINT64_MAX);
    }
}

// What the stream's keys together must satisfy, alone.
void check_stream(const StreamSpec& st, const std::set<std::string, std::less<>>& given) {
    const auto has = [&](std::string_view k) { return given.count(k) > 0; };
    if (st.rate && st.share) throw UsageError("rate= and share=: give one of them");
    if (st.count && st.bursts) throw UsageError("count= and bursts=: a multi-burst stream sends bursts x burst-frames");
    if (st.bursts && !st.burst_frames) throw UsageError("bursts= needs burst-frames=N");
    if (!st.bursts && (has("burst-frames") || has("burst-gap")))
        throw UsageError("burst-frames= and burst-gap= go with bursts=B");
    if (!st.after.empty() && st.after == st.name) throw UsageError(fmt::format("after={}: the stream itself", st.after));
    if (st.replay) {
        if (st.replay->path.empty()) throw UsageError("speed= and loops= go with pcap=FILE");
        for (const auto& k : given)
            if (stream_option_keys().count(k) && template_key(k))
                throw UsageError(fmt::format("{}= does not apply to a pcap stream: its frames come from the file", k));
        if (st.count && st.replay->loops != 1 && has("loops"))
            throw UsageError("count= and loops=: give one of them");
    }
}

}  // namespace

std::vector<StreamSpec> build_streams(const Draft& base, const OptionOrigins*) {
    std::vector<StreamSpec> out;
    // Each stream starts from the base options without the list of streams: copying the list
    // for every stream made reading a profile of 4096 streams take seconds.
    Draft without_streams = base;
    without_streams.streams.clear();
    for (size_t i = 0; i < base.streams.size(); ++i) {
        const auto& in = base.streams[i];
        Draft sd = without_streams;
        sd.spec.rate = {};
        sd.spec.count.reset();
        StreamSpec st;
        st.typed = in.text;
        std::set<std::string, std::less<>> given;
        std::string at = in.text;  // where an error is
        try {
            for (const auto& k : in.keys) {
                at = k.origin.empty() ? in.text : k.origin;
                given.insert(k.key);
                if (stream_option_keys().count(k.key)) {
                    find_option(k.key)->apply(sd, {k.value});
                } else if (std::any_of(stream_only_keys().begin(), stream_only_keys().end(),
                                       [&](const StreamKeyDoc& d) { return d.key == k.key; })) {
                    stream_only_key(st, k);
                } else {
                    throw UsageError(fmt::format("unknown key \"{}\" (stream keys: {})", k.key, key_list()));
                }
            }
            at = in.text;
            resolve_frame(sd, sd.spec.notes);
            if (st.name.empty()) st.name = fmt::format("s{}", i + 1);
            st.frame = sd.spec.frame;
            st.size = sd.spec.size;
            st.flows = sd.spec.flows;
            st.vary = sd.spec.vary;
            st.pattern = sd.spec.pattern;
            st.seed = given.count("seed") ? sd.spec.seed : sd.spec.seed + i;  // streams differ unless told
            if (given.count("rate")) st.rate = sd.spec.rate;
            if (given.count("count")) st.count = sd.spec.count;
            check_stream(st, given);
            if (st.bursts) st.count = uint64_t{st.bursts} * st.burst_frames;
        } catch (const UsageError& e) {
            throw OptionError(fmt::format("{}: {}", at, e.what()));
        }
        out.push_back(std::move(st));
    }
    // What the streams must satisfy together.
    std::set<std::string> names;
    for (const auto& st : out)
        if (!names.insert(st.name).second)
            throw OptionError(fmt::format("{}: a second stream named {}", st.typed, st.name));
    double shares = 0;
    for (const auto& st : out) {
        shares += st.share.value_or(0);
        if (st.after.empty()) continue;
        const auto it = std::find_if(out.begin(), out.end(), [&](const StreamSpec& o) { return o.name == st.after; });
        if (it == out.end()) throw OptionError(fmt::format("{}: after={}: no stream has that name", st.typed, st.after));
        if (!it->ends())
            throw OptionError(fmt::format("{}: after={}: {} never ends (give it count= or bursts=)", st.typed,
                                          st.after, st.after));
        // A chain must start somewhere: walking back from any stream reaches one without after=.
        const StreamSpec* p = &st;
        for (size_t steps = 0; !p->after.empty(); ++steps) {
            if (steps > out.size())
                throw OptionError(fmt::format("{}: after={}: the streams wait for each other in a circle", st.typed,
                                              st.after));
            p = &*std::find_if(out.begin(), out.end(), [&](const StreamSpec& o) { return o.name == p->after; });
        }
    }
    if (shares > 1 + 1e-9)
        throw OptionError(fmt::format("the streams' shares add up to {:g} %, more than the port's frames", shares * 100));
    for (const auto& st : out)
        for (const auto& p : st.ports)
            if (std::none_of(base.spec.tx.begin(), base.spec.tx.end(), [&](const PortQueues& q) { return q.port == p; }))
                throw OptionError(fmt::format("{}: port={}: not a --tx port of this run", st.typed, p));
    return out;
}

nlohmann::json streams_json(const RunSpec& s) {
    auto a = J::array();
    for (const auto& st : s.mix()) {
        J j = {{"name", st.name},
               {"size", st.replay ? J(nullptr) : J(st.size.str())},
               {"mean_size", st.replay ? J(nullptr) : J(st.size.mean())},
               {"flows", s.stream_flows(st)},
               {"vary", flow::vary_str(st.vary)},
               {"rate", st.rate ? J(st.rate->str()) : J(nullptr)},
               {"share", st.share ? J(*st.share) : J(nullptr)},
               {"pattern", st.pattern.str()},
               {"seed", st.seed},
               {"count", opt(st.count)},
               {"bursts", st.bursts || st.endless_bursts
                              ? J{{"bursts", st.endless_bursts ? J(nullptr) : J(st.bursts)},  // null: until the trial ends
                                  {"frames", st.burst_frames},
                                  {"gap_s", st.burst_gap_s}}
                              : J(nullptr)},
               {"delay_s", st.delay_s},
               {"after", st.after.empty() ? J(nullptr) : J(st.after)},
               {"ports", st.ports},
               {"vlan", opt(st.frame.vlan)},
               {"l4", st.frame.l4 == packet::L4::udp ? "udp" : "tcp"},
               {"ip", st.frame.src_ip.v6 ? 6 : 4},
               {"src_ip", st.frame.src_ip.str()},
               {"dst_ip", st.frame.dst_ip.str()}};
        if (st.replay)
            j["pcap"] = {{"path", st.replay->path}, {"speed", st.replay->speed}, {"loops", st.replay->loops}};
        a.push_back(std::move(j));
    }
    return a;
}

std::string stream_keys_markdown() {
    std::string out = "| key | value | meaning |\n|---|---|---|\n";
    for (const auto& k : stream_option_keys()) {
        const auto* o = find_option(k);
        std::string help;
        for (const char ch : o->help) help += ch == '|' ? std::string("\\|") : std::string(1, ch);
        out += fmt::format("| `{}` | `{}` | as `--{}`: {} |\n", k, o->value_name.empty() ? "true\\|false" : o->value_name,
                           k, help);
    }
    for (const auto& k : stream_only_keys()) out += fmt::format("| `{}` | `{}` | {} |\n", k.key, k.value_name, k.help);
    return out;
}

}  // namespace lr::spec
