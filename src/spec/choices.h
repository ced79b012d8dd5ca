// Every enumerated setting and the one table of names it is known by. The CLI builds its
// transformers from these tables and profile files read the same names, so a value is
// accepted in one place with one set of spellings.
#pragma once
#include <array>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "spec/connect_spec.h"
#include "spec/impair_spec.h"

namespace lr::spec {

enum class BackendKind { dpdk, afxdp, loop };
enum class XdpMode { auto_mode, native, skb };
enum class XskMode { auto_mode, copy, zero_copy };
enum class RxMode { socket, xdp };
enum class TxEngine { socket, live, auto_mode };
enum class LinkOutage { fail, tolerate };
enum class SearchMethod { mlr, binary };
enum class Preset { rfc2544, csit, tst009 };
enum class ReflectBackend { xdp, afxdp, dpdk };
enum class ReflectProto { udp, tcp, any };

// Bit per backend, for options that only some backends honour.
inline constexpr unsigned kDpdk = 1u << 0, kAfxdp = 1u << 1, kLoop = 1u << 2;
inline constexpr unsigned kAllBackends = kDpdk | kAfxdp | kLoop;
inline unsigned backend_bit(BackendKind b) { return 1u << static_cast<unsigned>(b); }

// A name table: the first name of each value is its canonical spelling (reports, JSON);
// later ones are accepted aliases.
struct Choice {
    std::string_view name;
    int value;
};
struct ChoiceSet {
    std::string_view what;  // "backend", "XDP attach mode"...
    std::vector<Choice> names;
    // Canonical names, comma separated ("auto, native or skb").
    std::string expected() const;
    std::optional<int> find(std::string_view s) const;
    std::string_view name_of(int v) const;
};

const ChoiceSet& backend_choices();  // dpdk, afxdp (loop is for tests and is not offered)
const ChoiceSet& xdp_mode_choices();
const ChoiceSet& xsk_mode_choices();
const ChoiceSet& rx_mode_choices();
const ChoiceSet& tx_engine_choices();
const ChoiceSet& proto_choices();     // packet::L4
const ChoiceSet& link_outage_choices();
const ChoiceSet& capture_filter_choices();  // stats::CaptureFilter
const ChoiceSet& search_choices();          // throughput: mlr or binary
const ChoiceSet& preset_choices();          // rfc2544, csit, tst009
const ChoiceSet& reflect_backend_choices(); // reflect: xdp, afxdp, dpdk
const ChoiceSet& reflect_proto_choices();   // reflect: udp, tcp, any
const ChoiceSet& jitter_dist_choices();     // impair: normal, uniform, pareto
const ChoiceSet& impair_direction_choices();  // impair: both, a-to-b, b-to-a
const ChoiceSet& close_choices();             // connect: rst, fin, abort
const ChoiceSet& responder_choices();         // request/response: linerate (0), stack (1)

// Canonical names.
std::string_view to_string(BackendKind v);
std::string_view to_string(JitterDist v);
std::string_view to_string(ImpairDirection v);
std::string_view to_string(CloseMode v);
std::string_view to_string(XdpMode v);
std::string_view to_string(XskMode v);
std::string_view to_string(RxMode v);
std::string_view to_string(TxEngine v);
std::string_view to_string(LinkOutage v);
std::string_view to_string(SearchMethod v);
std::string_view to_string(Preset v);
std::string_view to_string(ReflectBackend v);

// Parses `s` against `set`; throws UsageError naming `option` and the accepted names.
int parse_choice(const ChoiceSet& set, std::string_view s, std::string_view option);

}  // namespace lr::spec
