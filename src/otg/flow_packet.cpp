#include "otg/flow_packet.h"

#include <fmt/format.h>
#include <functional>
#include <utility>

#include "otg/patterns.h"

namespace lr::otg {
namespace {

constexpr std::string_view kShape = "linerate sends Ethernet [VLAN] IPv4|IPv6 UDP|TCP frames";
constexpr uint16_t kEtherIpv4 = 0x0800, kEtherIpv6 = 0x86dd, kEtherVlan = 0x8100;
constexpr uint8_t kProtoUdp = 17, kProtoTcp = 6;
constexpr uint16_t kTpidUnset = 65535;  // the model's default tpid: the tag linerate writes
constexpr uint32_t kVlanReserved = 4095;

// Every header the model has (Flow.Header's choices).
const std::vector<std::string_view>& header_choices() {
    static const std::vector<std::string_view> c = {
        "custom", "ethernet", "vlan", "vxlan", "ipv4", "ipv6", "pfcpause", "ethernetpause", "tcp",
        "udp", "gre", "gtpv1", "gtpv2", "arp", "icmp", "icmpv6", "ppp", "igmpv1", "mpls", "snmpv2c",
        "rsvp", "macsec", "lacp", "ipv6_extension_header", "cfm"};
    return c;
}

std::vector<std::string_view> header_keys() {
    auto k = header_choices();
    k.insert(k.begin(), "choice");
    return k;
}

FieldModel with_random(FieldModel m) {
    m.has_random = true;
    return m;
}

// "a gre header", "an ipv4 header".
std::string a_header(std::string_view h) {
    const bool vowel = !h.empty() && std::string_view("aeiou").find(h.front()) != std::string_view::npos;
    return fmt::format("{} {} header", vowel ? "an" : "a", h);
}

// The header list's shape: the choices in order, checked against what linerate sends.
// Refuses (at the packet or the header out of place) and returns false when it does not fit.
bool check_shape(Reader& r, const Field& packet, const std::vector<std::string_view>& hdr) {
    // Where each header may come: ethernet first, then an optional vlan, an IP, an L4.
    enum Stage { start, after_eth, after_vlan, after_ip, after_l4 };
    Stage at = start;
    for (size_t k = 0; k < hdr.size(); ++k) {
        const auto h = hdr[k];
        const auto path = packet.at(k).path();
        const bool known = h == "ethernet" || h == "vlan" || h == "ipv4" || h == "ipv6" || h == "udp" || h == "tcp";
        if (!known) {
            r.refuse(path, fmt::format("{}; {} is not supported", kShape, a_header(h)));
            return false;
        }
        const bool fits = (at == start && h == "ethernet") || ((at == after_eth) && h == "vlan") ||
                          ((at == after_eth || at == after_vlan) && (h == "ipv4" || h == "ipv6")) ||
                          (at == after_ip && (h == "udp" || h == "tcp"));
        if (!fits) {
            const std::string_view why = at == start               ? "the first header must be ethernet"
                                         : h == "vlan" && at == after_vlan ? "one VLAN tag at most"
                                         : at == after_l4                  ? "nothing follows the UDP or TCP header"
                                                                           : "not in this place";
            r.refuse(path, fmt::format("{}; {} here: {}", kShape, a_header(h), why));
            return false;
        }
        at = h == "ethernet" ? after_eth : h == "vlan" ? after_vlan : (h == "ipv4" || h == "ipv6") ? after_ip : after_l4;
    }
    if (at != after_l4) {
        const std::string_view missing =
            at == after_ip ? "a udp or tcp header" : "an ipv4 or ipv6 header and a udp or tcp header";
        r.refuse(packet.path(), fmt::format("{}; {}: add {}", kShape,
                                            packet.present() ? "this packet ends too soon"
                                                             : "absent, the packet is one ethernet header (the "
                                                               "model's default)",
                                            missing));
        return false;
    }
    return true;
}

// Reads one packet's headers into frames.
class PacketReader {
public:
    PacketReader(Reader& r, uint64_t max_frames) : r_(r), max_(max_frames) {
        base_.src_mac = base_.dst_mac = packet::MacAddr{};
        base_.src_port = base_.dst_port = 0;
        base_.ttl = 64;
        base_.tcp_seq = 0;
        base_.tcp_flags = 0;
        base_.tcp_window = 0;
        base_.dont_fragment = false;
    }

    void ethernet(const Field& h, uint16_t next_type) {
        r_.object(h, {"dst", "src", "ether_type", "pfc_queue"});
        const auto dst = field(h["dst"], mac_field(true));
        if (dst.automatic) dst_mac_auto_ = true;
        set(dst, [](packet::FrameSpec& f, FieldValue v) { f.dst_mac = to_mac(v); });
        const auto src = field(h["src"], mac_field(false));
        for (const auto v : src.values)
            if (to_mac(v).is_multicast()) {
                r_.refuse(src.path, fmt::format("{} is a multicast address: a frame's source cannot be one",
                                                to_mac(v).str()));
                break;
            }
        set(src, [](packet::FrameSpec& f, FieldValue v) { f.src_mac = to_mac(v); });
        only(h["ether_type"], auto_integer_field(16, 65535), next_type,
             fmt::format("auto or {} (0x{:04x}, the header that follows): linerate writes the EtherType of the next "
                         "header",
                         next_type, next_type));
        only(h["pfc_queue"], integer_field(3), 0, "0 only: linerate sends to no PFC queue");
    }

    void vlan(const Field& h) {
        r_.object(h, {"priority", "cfi", "id", "tpid"});
        base_.vlan = 0;
        set(field(h["priority"], integer_field(3)),
            [](packet::FrameSpec& f, FieldValue v) { f.vlan_pcp = static_cast<uint8_t>(v); });
        only(h["cfi"], integer_field(1), 0, "0 only: linerate sends DEI (CFI) 0");
        const auto id = field(h["id"], integer_field(12));
        for (const auto v : id.values)
            if (v == kVlanReserved) {
                r_.refuse(id.path, "VLAN id 4095 is reserved (IEEE 802.1Q): 0..4094");
                break;
            }
        set(id, [](packet::FrameSpec& f, FieldValue v) { f.vlan = static_cast<uint16_t>(v); });
        const auto tpid = field(h["tpid"], integer_field(16, kTpidUnset));
        for (const auto v : tpid.values)
            if (v != kTpidUnset && v != kEtherVlan) {
                r_.refuse(tpid.path, "33024 (0x8100) only, or leave it out: linerate writes 802.1Q tags");
                break;
            }
    }

    void ipv4(const Field& h, uint8_t proto) {
        r_.object(h, {"version", "header_length", "priority", "total_length", "identification", "reserved",
                      "dont_fragment", "more_fragments", "fragment_offset", "time_to_live", "protocol",
                      "header_checksum", "src", "dst", "options"});
        base_.src_ip = base_.dst_ip = packet::IpAddr{};
        only(h["version"], integer_field(4, 4), 4, "4 only");
        only(h["header_length"], auto_integer_field(4, 5), 5, "auto or 5: linerate sends IPv4 headers without options");
        priority(h["priority"]);
        computed(h["total_length"], auto_integer_field(16, 46), "auto only: linerate computes it from the frame size");
        only(h["identification"], integer_field(16), 0,
             "0 only: linerate carries its run identity in the IPv4 identification of the frames it signs");
        only(h["reserved"], integer_field(1), 0, "0 only");
        set(field(h["dont_fragment"], integer_field(1)),
            [](packet::FrameSpec& f, FieldValue v) { f.dont_fragment = v != 0; });
        only(h["more_fragments"], integer_field(1), 0, "0 only: linerate sends whole packets, not fragments");
        only(h["fragment_offset"], integer_field(5), 0, "0 only: linerate sends whole packets, not fragments");
        set(field(h["time_to_live"], integer_field(8, 64)),
            [](packet::FrameSpec& f, FieldValue v) { f.ttl = static_cast<uint8_t>(v); });
        only(h["protocol"], auto_integer_field(8, 61), proto,
             fmt::format("auto or {} (the header that follows)", proto));
        checksum(h["header_checksum"]);
        set(field(h["src"], with_random(ip_field(false))),
            [](packet::FrameSpec& f, FieldValue v) { f.src_ip = to_ip(v, false); });
        set(field(h["dst"], with_random(ip_field(false))),
            [](packet::FrameSpec& f, FieldValue v) { f.dst_ip = to_ip(v, false); });
        if (r_.array(h["options"]) > 0) r_.refuse(h["options"], "linerate sends IPv4 headers without options");
    }

    void ipv6(const Field& h, uint8_t proto) {
        r_.object(h, {"version", "traffic_class", "flow_label", "payload_length", "next_header", "hop_limit", "src",
                      "dst", "dst_usids"});
        base_.src_ip = base_.dst_ip = packet::IpAddr{true, {}};
        only(h["version"], integer_field(4, 6), 6, "6 only");
        set(field(h["traffic_class"], integer_field(8)),
            [](packet::FrameSpec& f, FieldValue v) { f.tos = static_cast<uint8_t>(v); });
        only(h["flow_label"], with_random(integer_field(20)), 0,
             "0 only: linerate carries its run identity in the flow label of the frames it signs");
        computed(h["payload_length"], auto_integer_field(16, 0), "auto only: linerate computes it from the frame size");
        only(h["next_header"], auto_integer_field(8, 59), proto,
             fmt::format("auto or {} (the header that follows)", proto));
        set(field(h["hop_limit"], integer_field(8, 64)),
            [](packet::FrameSpec& f, FieldValue v) { f.ttl = static_cast<uint8_t>(v); });
        set(field(h["src"], ip_field(true)), [](packet::FrameSpec& f, FieldValue v) { f.src_ip = to_ip(v, true); });
        set(field(h["dst"], ip_field(true)), [](packet::FrameSpec& f, FieldValue v) { f.dst_ip = to_ip(v, true); });
        if (h["dst_usids"].present()) r_.refuse(h["dst_usids"], "linerate sends no segment routing header");
    }

    void udp(const Field& h) {
        r_.object(h, {"src_port", "dst_port", "length", "checksum"});
        base_.l4 = packet::L4::udp;
        ports(h);
        if (h["length"].present())
            r_.refuse(h["length"], "linerate computes the UDP length from the frame size: leave length out");
        checksum(h["checksum"]);
    }

    void tcp(const Field& h) {
        r_.object(h, {"src_port", "dst_port", "seq_num", "ack_num", "data_offset", "ecn_ns", "ecn_cwr", "ecn_echo",
                      "ctl_urg", "ctl_ack", "ctl_psh", "ctl_rst", "ctl_syn", "ctl_fin", "window", "checksum"});
        base_.l4 = packet::L4::tcp;
        ports(h);
        only(h["seq_num"], integer_field(32), 0,
             "0 only: linerate's signature takes the sequence number (the flow's frame count)");
        only(h["ack_num"], integer_field(32), 0,
             "0 only: linerate's signature takes the acknowledgement number (its magic and run identity)");
        if (h["data_offset"].present())
            only(h["data_offset"], integer_field(4), 5,
                 "5 only (or leave it out): linerate sends TCP headers without options");
        only(h["ecn_ns"], integer_field(1), 0, "0 only: linerate does not set the NS bit");
        only(h["ctl_urg"], integer_field(1), 0,
             "0 only: the urgent pointer carries linerate's signature (the flow's id), so URG stays unset");
        const std::pair<std::string_view, unsigned> flags[] = {{"ecn_cwr", 7}, {"ecn_echo", 6}, {"ctl_ack", 4},
                                                               {"ctl_psh", 3}, {"ctl_rst", 2},  {"ctl_syn", 1},
                                                               {"ctl_fin", 0}};
        for (const auto& [name, bit] : flags)
            set(field(h[name], integer_field(1)), [bit = bit](packet::FrameSpec& f, FieldValue v) {
                f.tcp_flags = static_cast<uint8_t>((f.tcp_flags & ~(1u << bit)) | (static_cast<unsigned>(v) << bit));
            });
        set(field(h["window"], integer_field(16)),
            [](packet::FrameSpec& f, FieldValue v) { f.tcp_window = static_cast<uint16_t>(v); });
        checksum(h["checksum"]);
    }

    FlowPacket build(const Field& packet) {
        FlowPacket out;
        uint64_t period = 1;
        for (const auto& s : setters_)
            if (s.values.varies()) {
                period = lcm_capped(period, s.values.values.size(), max_);
                out.varying.push_back(fmt::format("{} ({} values)", s.values.path, s.values.values.size()));
            }
        if (period > max_) {
            r_.refuse(packet.path(),
                      fmt::format("its packets repeat only after more than {} packets ({}: each field's values come in "
                                  "turn): linerate builds a frame for each distinct packet of a flow, at most {}",
                                  max_, fmt::join(out.varying, ", "), max_));
            return out;
        }
        out.dst_mac_auto = dst_mac_auto_;
        out.frames.reserve(period);
        for (uint64_t k = 0; k < period; ++k) {
            auto f = base_;
            for (const auto& s : setters_) s.apply(f, s.values.values[k % s.values.values.size()]);
            out.frames.push_back(f);
        }
        return out;
    }

private:
    struct Setter {
        FieldValues values;
        std::function<void(packet::FrameSpec&, FieldValue)> apply;
    };

    FieldValues field(const Field& f, const FieldModel& m) { return read_pattern(r_, f, m, max_); }
    void set(FieldValues v, std::function<void(packet::FrameSpec&, FieldValue)> apply) {
        if (!v.automatic) setters_.push_back({std::move(v), std::move(apply)});
    }
    // A field linerate writes itself: auto or `allowed` only.
    void only(const Field& f, const FieldModel& m, FieldValue allowed, const std::string& why) {
        require_value(r_, field(f, m), allowed, why);
    }
    // A field linerate computes: auto only.
    void computed(const Field& f, const FieldModel& m, const std::string& why) {
        if (!field(f, m).automatic) r_.refuse(f, why);
    }
    // A bit field of the TOS byte (IPv4 priority).
    void tos_bits(const Field& f, unsigned bits, unsigned shift) {
        set(field(f, integer_field(bits)), [bits, shift](packet::FrameSpec& fs, FieldValue v) {
            const unsigned mask = ((1u << bits) - 1) << shift;
            fs.tos = static_cast<uint8_t>((fs.tos & ~mask) | (static_cast<unsigned>(v) << shift));
        });
    }
    void priority(const Field& p) {
        r_.object(p, {"choice", "raw", "tos", "dscp"});
        const std::vector<std::string_view> choices = {"raw", "tos", "dscp"};
        const auto c = r_.one_of(p["choice"], choices).value_or(2);
        if (c == 0) {
            tos_bits(p["raw"], 8, 0);
        } else if (c == 1) {
            const auto t = p["tos"];
            r_.object(t, {"precedence", "delay", "throughput", "reliability", "monetary", "unused"});
            tos_bits(t["precedence"], 3, 5);
            tos_bits(t["delay"], 1, 4);
            tos_bits(t["throughput"], 1, 3);
            tos_bits(t["reliability"], 1, 2);
            tos_bits(t["monetary"], 1, 1);
            tos_bits(t["unused"], 1, 0);
        } else {
            const auto d = p["dscp"];
            r_.object(d, {"phb", "ecn"});
            tos_bits(d["phb"], 6, 2);
            tos_bits(d["ecn"], 2, 0);
        }
    }
    void ports(const Field& h) {
        set(field(h["src_port"], with_random(integer_field(16))),
            [](packet::FrameSpec& f, FieldValue v) { f.src_port = static_cast<uint16_t>(v); });
        set(field(h["dst_port"], with_random(integer_field(16))),
            [](packet::FrameSpec& f, FieldValue v) { f.dst_port = static_cast<uint16_t>(v); });
    }
    void checksum(const Field& c) {
        if (!r_.object(c, {"choice", "generated", "custom"})) return;
        const auto choice = r_.one_of(c["choice"], {"generated", "custom"}).value_or(0);
        const auto generated = r_.one_of(c["generated"], {"good", "bad"}).value_or(0);
        if (choice != 0 || generated != 0)
            r_.refuse(c, "generated good only: linerate writes correct checksums (its receivers count a frame whose "
                         "checksum fails as malformed)");
    }

    Reader& r_;
    uint64_t max_;
    packet::FrameSpec base_;
    std::vector<Setter> setters_;
    bool dst_mac_auto_ = false;
};

}  // namespace

FlowPacket read_packet(Reader& r, const Field& packet, uint64_t max_frames) {
    const size_t before = r.refusal_count();
    // The header choices in order (absent: one ethernet header, the model's default).
    std::vector<std::string_view> hdr;
    const size_t n = r.array(packet);
    if (!packet.present()) hdr.push_back("ethernet");
    for (size_t k = 0; k < n; ++k) {
        const auto h = packet.at(k);
        r.object(h, header_keys());
        const auto c = r.one_of(h["choice"], header_choices());
        hdr.push_back(c ? header_choices()[*c] : "ethernet");
    }
    if (r.refusal_count() > before || !check_shape(r, packet, hdr)) return {};
    const auto body = [&](size_t k) { return packet.at(k)[hdr[k]]; };
    const bool vlan = hdr[1] == "vlan";
    const size_t ip = vlan ? 2 : 1;
    const bool v6 = hdr[ip] == "ipv6";
    const uint8_t proto = hdr[ip + 1] == "udp" ? kProtoUdp : kProtoTcp;
    const uint16_t ip_type = v6 ? kEtherIpv6 : kEtherIpv4;
    PacketReader p(r, max_frames);
    p.ethernet(body(0), vlan ? kEtherVlan : ip_type);
    if (vlan) p.vlan(body(1));
    if (v6) p.ipv6(body(ip), proto);
    else p.ipv4(body(ip), proto);
    if (proto == kProtoUdp) p.udp(body(ip + 1));
    else p.tcp(body(ip + 1));
    if (r.refusal_count() > before) return {};
    auto out = p.build(packet);
    if (r.refusal_count() > before) return {};
    return out;
}

}  // namespace lr::otg
