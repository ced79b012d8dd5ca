#include "spec/choices.h"

#include "stats/capture.h"

#include <algorithm>
#include <fmt/format.h>

#include "packet/frame.h"
#include "util/error.h"

namespace lr::spec {

std::string ChoiceSet::expected() const {
    std::vector<int> seen;
    std::vector<std::string_view> canon;  // the first name of each value
    for (const auto& c : names)
        if (std::find(seen.begin(), seen.end(), c.value) == seen.end()) {
            seen.push_back(c.value);
            canon.push_back(c.name);
        }
    std::string s;
    for (size_t i = 0; i < canon.size(); ++i) {
        if (i) s += i + 1 == canon.size() ? " or " : ", ";
        s += canon[i];
    }
    return s;
}

std::optional<int> ChoiceSet::find(std::string_view s) const {
    for (const auto& c : names)
        if (c.name == s) return c.value;
    return std::nullopt;
}

std::string_view ChoiceSet::name_of(int v) const {
    for (const auto& c : names)
        if (c.value == v) return c.name;
    return "?";
}

const ChoiceSet& backend_choices() {
    static const ChoiceSet s{"backend",
                             {{"dpdk", int(BackendKind::dpdk)}, {"afxdp", int(BackendKind::afxdp)}}};
    return s;
}

const ChoiceSet& xdp_mode_choices() {
    static const ChoiceSet s{"XDP attach mode",
                             {{"auto", int(XdpMode::auto_mode)},
                              {"native", int(XdpMode::native)},
                              {"drv", int(XdpMode::native)},
                              {"skb", int(XdpMode::skb)},
                              {"generic", int(XdpMode::skb)}}};
    return s;
}

const ChoiceSet& xsk_mode_choices() {
    static const ChoiceSet s{"AF_XDP socket mode",
                             {{"auto", int(XskMode::auto_mode)},
                              {"copy", int(XskMode::copy)},
                              {"zero-copy", int(XskMode::zero_copy)},
                              {"zc", int(XskMode::zero_copy)}}};
    return s;
}

const ChoiceSet& jitter_dist_choices() {
    static const ChoiceSet s{"jitter distribution",
                             {{"normal", int(JitterDist::normal)}, {"uniform", int(JitterDist::uniform)},
                              {"pareto", int(JitterDist::pareto)}}};
    return s;
}

const ChoiceSet& impair_direction_choices() {
    static const ChoiceSet s{"direction",
                             {{"both", int(ImpairDirection::both)}, {"a-to-b", int(ImpairDirection::a_to_b)},
                              {"b-to-a", int(ImpairDirection::b_to_a)}}};
    return s;
}

const ChoiceSet& close_choices() {
    static const ChoiceSet s{"close", {{"rst", int(CloseMode::rst)}, {"fin", int(CloseMode::fin)}, {"abort", int(CloseMode::abort)}}};
    return s;
}

const ChoiceSet& responder_choices() {
    static const ChoiceSet s{"responder", {{"linerate", 0}, {"stack", 1}}};
    return s;
}

const ChoiceSet& tx_engine_choices() {
    static const ChoiceSet s{"TX engine",
                             {{"socket", int(TxEngine::socket)}, {"live", int(TxEngine::live)},
                              {"auto", int(TxEngine::auto_mode)}}};
    return s;
}

const ChoiceSet& capture_filter_choices() {
    using F = stats::CaptureFilter;
    static const ChoiceSet s{"capture filter",
                             {{"all", int(F::all)}, {"ours", int(F::ours)}, {"foreign", int(F::foreign)},
                              {"malformed", int(F::malformed)}, {"sent", int(F::sent)}}};
    return s;
}

const ChoiceSet& link_outage_choices() {
    static const ChoiceSet s{"link outage policy",
                             {{"fail", int(LinkOutage::fail)}, {"tolerate", int(LinkOutage::tolerate)}}};
    return s;
}

const ChoiceSet& rx_mode_choices() {
    static const ChoiceSet s{"receive mode", {{"socket", int(RxMode::socket)}, {"xdp", int(RxMode::xdp)}}};
    return s;
}

const ChoiceSet& proto_choices() {
    static_assert(int(packet::L4::udp) == 0 && int(packet::L4::tcp) == 1);
    static const ChoiceSet s{"protocol", {{"udp", int(packet::L4::udp)}, {"tcp", int(packet::L4::tcp)}}};
    return s;
}

const ChoiceSet& search_choices() {
    static const ChoiceSet s{"search method", {{"mlr", int(SearchMethod::mlr)}, {"binary", int(SearchMethod::binary)}}};
    return s;
}

const ChoiceSet& preset_choices() {
    static const ChoiceSet s{"preset",
                             {{"rfc2544", int(Preset::rfc2544)},
                              {"csit", int(Preset::csit)},
                              {"tst009", int(Preset::tst009)}}};
    return s;
}

const ChoiceSet& reflect_backend_choices() {
    static const ChoiceSet s{"reflector backend",
                             {{"xdp", int(ReflectBackend::xdp)},
                              {"afxdp", int(ReflectBackend::afxdp)},
                              {"dpdk", int(ReflectBackend::dpdk)}}};
    return s;
}

const ChoiceSet& reflect_proto_choices() {
    static_assert(int(ReflectProto::udp) == int(packet::L4::udp) && int(ReflectProto::tcp) == int(packet::L4::tcp));
    static const ChoiceSet s{"protocol",
                             {{"udp", int(ReflectProto::udp)},
                              {"tcp", int(ReflectProto::tcp)},
                              {"any", int(ReflectProto::any)}}};
    return s;
}

std::string_view to_string(BackendKind v) {
    return v == BackendKind::loop ? "loop" : backend_choices().name_of(int(v));
}
std::string_view to_string(XdpMode v) { return xdp_mode_choices().name_of(int(v)); }
std::string_view to_string(XskMode v) { return xsk_mode_choices().name_of(int(v)); }
std::string_view to_string(JitterDist v) { return jitter_dist_choices().name_of(int(v)); }
std::string_view to_string(ImpairDirection v) { return impair_direction_choices().name_of(int(v)); }
std::string_view to_string(CloseMode v) { return close_choices().name_of(int(v)); }
std::string_view to_string(RxMode v) { return rx_mode_choices().name_of(int(v)); }
std::string_view to_string(TxEngine v) { return tx_engine_choices().name_of(int(v)); }
std::string_view to_string(LinkOutage v) { return link_outage_choices().name_of(int(v)); }
std::string_view to_string(SearchMethod v) { return search_choices().name_of(int(v)); }
std::string_view to_string(Preset v) { return preset_choices().name_of(int(v)); }
std::string_view to_string(ReflectBackend v) { return reflect_backend_choices().name_of(int(v)); }

int parse_choice(const ChoiceSet& set, std::string_view s, std::string_view option) {
    if (auto v = set.find(s)) return *v;
    throw UsageError(fmt::format("invalid {} \"{}\": expected {}", option, s, set.expected()));
}

}  // namespace lr::spec
