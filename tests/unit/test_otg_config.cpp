// The OTG Config reader (src/otg): requests as snappi 1.62.0 sends them, read into linerate's
// streams with every model default applied, and every refusal at the path its user knows.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <fmt/format.h>
#include <nlohmann/json.hpp>
#include <set>
#include <string>

#include "engine/program_builder.h"
#include "frame_checks.h"
#include "otg/config.h"
#include "packet/signature.h"
#include "spec/options.h"
#include "spec/stream_rates.h"

using namespace lr;
using nlohmann::json;
using test_support::get16;

namespace {

// otg-examples' quickstart (snappi/otg-flows.py's shape, one flow), exactly as snappi 1.62.0's
// cfg.serialize() writes it.
constexpr const char* kQuickstart = R"({
  "flows": [
    {
      "duration": {
        "choice": "fixed_packets",
        "fixed_packets": {
          "gap": 12,
          "packets": 1000
        }
      },
      "metrics": {
        "enable": true,
        "loss": false,
        "timestamps": false
      },
      "name": "f1",
      "packet": [
        {
          "choice": "ethernet",
          "ethernet": {
            "dst": {
              "choice": "value",
              "value": "00:11:22:33:44:66"
            },
            "src": {
              "choice": "value",
              "value": "00:11:22:33:44:55"
            }
          }
        },
        {
          "choice": "ipv4",
          "ipv4": {
            "dst": {
              "choice": "value",
              "value": "2.2.2.2"
            },
            "src": {
              "choice": "value",
              "value": "1.1.1.1"
            }
          }
        },
        {
          "choice": "udp",
          "udp": {
            "dst_port": {
              "choice": "value",
              "value": 6000
            },
            "src_port": {
              "choice": "value",
              "value": 5000
            }
          }
        }
      ],
      "rate": {
        "choice": "pps",
        "pps": "1000"
      },
      "size": {
        "choice": "fixed",
        "fixed": 128
      },
      "tx_rx": {
        "choice": "port",
        "port": {
          "rx_names": [
            "p2"
          ],
          "tx_name": "p1"
        }
      }
    }
  ],
  "ports": [
    {
      "location": "veth0",
      "name": "p1"
    },
    {
      "location": "veth1",
      "name": "p2"
    }
  ]
})";

// otg-examples snappi/otg-flows.py: two flows with incrementing source ports and listed
// destination ports (snappi's serialize(), keys sorted, whitespace dropped).
constexpr const char* kTwoFlows =
    R"({"flows":[{"duration":{"choice":"fixed_packets","fixed_packets":{"gap":12,"packets":1000}},)"
    R"("metrics":{"enable":true,"loss":false,"timestamps":false},"name":"flow p1->p2","packet":[)"
    R"({"choice":"ethernet","ethernet":{"dst":{"choice":"value","value":"00:AA:00:00:00:AA"},)"
    R"("src":{"choice":"value","value":"00:AA:00:00:04:00"}}},{"choice":"ipv4","ipv4":{"dst":{"choice":"value",)"
    R"("value":"10.0.0.2"},"src":{"choice":"value","value":"10.0.0.1"}}},{"choice":"udp","udp":{"dst_port":)"
    R"({"choice":"values","values":[4000,4044,4060,4074]},"src_port":{"choice":"increment","increment":)"
    R"({"count":10,"start":5000,"step":2}}}}],"rate":{"choice":"pps","pps":"1000"},"size":{"choice":"fixed",)"
    R"("fixed":128},"tx_rx":{"choice":"port","port":{"rx_names":["p2"],"tx_name":"p1"}}},{"duration":)"
    R"({"choice":"fixed_packets","fixed_packets":{"gap":12,"packets":1000}},"metrics":{"enable":true,)"
    R"("loss":false,"timestamps":false},"name":"flow p2->p1","packet":[{"choice":"ethernet","ethernet":)"
    R"({"dst":{"choice":"value","value":"00:AA:00:00:04:00"},"src":{"choice":"value","value":"00:AA:00:00:00:AA"}}},)"
    R"({"choice":"ipv4","ipv4":{"dst":{"choice":"value","value":"10.0.0.1"},"src":{"choice":"value",)"
    R"("value":"10.0.0.2"}}},{"choice":"udp","udp":{"dst_port":{"choice":"values","values":[8000,8044,8060,)"
    R"(8074,8082,8084]},"src_port":{"choice":"increment","increment":{"count":10,"start":6000,"step":4}}}}],)"
    R"("rate":{"choice":"pps","pps":"1000"},"size":{"choice":"fixed","fixed":256},"tx_rx":{"choice":"port",)"
    R"("port":{"rx_names":["p1"],"tx_name":"p2"}}}],"ports":[{"location":"localhost:5555","name":"p1"},)"
    R"({"location":"localhost:5556","name":"p2"}]})";

// otg-examples snappi/data-plane-performance: configs/unidirectional.json as test_rfc2544.py
// sends it in a trial (layer1 patched, 1518 bytes at 50 %, 5 s; its placeholders filled in).
constexpr const char* kRfc2544 =
    R"({"flows":[{"duration":{"choice":"fixed_seconds","fixed_seconds":{"gap":12,"seconds":5}},)"
    R"("metrics":{"enable":true,"loss":false,"timestamps":false},"name":"f1","packet":[{"choice":"ethernet",)"
    R"("ethernet":{"dst":{"choice":"value","value":"02:00:00:00:02:01"},"src":{"choice":"value",)"
    R"("value":"02:00:00:00:01:01"}}},{"choice":"ipv4","ipv4":{"dst":{"choice":"value","value":"198.18.0.2"},)"
    R"("src":{"choice":"value","value":"198.18.0.1"}}},{"choice":"tcp","tcp":{"dst_port":{"choice":"value",)"
    R"("value":543},"src_port":{"choice":"value","value":643}}}],"rate":{"choice":"percentage","percentage":50.0},)"
    R"("size":{"choice":"fixed","fixed":1518},"tx_rx":{"choice":"port","port":{"rx_names":["VM2-TE1"],)"
    R"("tx_name":"VM1-TE1"}}}],"layer1":[{"mtu":9000,"name":"l1","port_names":["VM1-TE1","VM2-TE1"],)"
    R"("promiscuous":true,"speed":"speed_10_gbps"}],"ports":[{"location":"veth0","name":"VM1-TE1"},)"
    R"({"location":"veth1","name":"VM2-TE1"}]})";

// Two ports and one flow p1 -> p2 of Ethernet (a source MAC), IPv4 and UDP, all else left out.
json base_config() {
    return json::parse(R"({"ports":[{"name":"p1","location":"veth0"},{"name":"p2","location":"veth1"}],
        "flows":[{"name":"f1","tx_rx":{"choice":"port","port":{"tx_name":"p1","rx_names":["p2"]}},
          "packet":[{"choice":"ethernet","ethernet":{"src":{"choice":"value","value":"02:00:00:00:00:01"}}},
                    {"choice":"ipv4","ipv4":{}},{"choice":"udp","udp":{}}]}]})");
}

// The base config's flow, and its headers.
json& flow0(json& c) { return c["flows"][0]; }
json& header(json& c, size_t k) {
    auto& h = flow0(c)["packet"][k];
    return h[h["choice"].get<std::string>()];
}

std::vector<otg::Refusal> refusals_of(const json& body) {
    try {
        otg::parse_config(body);
    } catch (const otg::OtgError& e) {
        EXPECT_EQ(e.http_status(), 400);
        return e.refusals();
    }
    return {};
}

std::string lines(const std::vector<otg::Refusal>& r) {
    std::string s;
    for (const auto& x : r) s += x.line() + "\n";
    return s;
}

// The config is refused once, at `path`, with a message that contains `needle`.
void expect_refused(const json& body, const std::string& path, const std::string& needle) {
    const auto r = refusals_of(body);
    ASSERT_EQ(r.size(), 1u) << "refusals:\n" << lines(r);
    EXPECT_EQ(r[0].path, path) << r[0].message;
    EXPECT_NE(r[0].message.find(needle), std::string::npos) << "message: " << r[0].message << "\nexpected: " << needle;
}

std::string mac_at(const std::vector<uint8_t>& f, size_t off) {
    packet::MacAddr m;
    std::copy(f.begin() + static_cast<std::ptrdiff_t>(off), f.begin() + static_cast<std::ptrdiff_t>(off + 6),
              m.b.begin());
    return m.str();
}

std::string ip4_at(const std::vector<uint8_t>& f, size_t off) {
    return fmt::format("{}.{}.{}.{}", f[off], f[off + 1], f[off + 2], f[off + 3]);
}

}  // namespace

TEST(OtgConfig, TheQuickstartAsSnappiSendsItIsOneCompleteStream) {
    const auto body = json::parse(kQuickstart);
    const auto c = otg::parse_config(body);
    EXPECT_EQ(c.as_set, body) << "GET /config echoes what was set";
    ASSERT_EQ(c.ports.size(), 2u);
    EXPECT_EQ(c.ports[0].name, "p1");
    EXPECT_EQ(c.ports[0].location, "veth0");
    EXPECT_EQ(c.ports[1].name, "p2");
    EXPECT_EQ(c.ports[1].location, "veth1");
    EXPECT_TRUE(c.warnings.empty()) << c.warnings.front();
    ASSERT_EQ(c.flows.size(), 1u);
    const auto& f = c.flows[0];
    EXPECT_EQ(f.name, "f1");
    EXPECT_EQ(f.path, "flows[0]");
    EXPECT_EQ(f.tx_port, "p1");
    EXPECT_EQ(f.rx_ports, std::vector<std::string>{"p2"});
    EXPECT_TRUE(f.metrics);
    EXPECT_FALSE(f.loss || f.timestamps || f.latency || f.dst_mac_auto);
    const auto& st = f.stream;
    EXPECT_EQ(st.name, "f1");
    EXPECT_TRUE(st.ports.empty()) << "the server names the tx port's location";
    EXPECT_EQ(st.size.str(), "128");
    ASSERT_TRUE(st.count.has_value());
    EXPECT_EQ(*st.count, 1000u);
    ASSERT_TRUE(st.rate.has_value());
    EXPECT_EQ(st.rate->unit, spec::RateSpec::Unit::pps);
    EXPECT_EQ(st.rate->value, 1000);
    EXPECT_EQ(st.pattern.kind, spec::Pattern::Kind::cbr);
    EXPECT_EQ(st.bursts, 0u);
    EXPECT_FALSE(st.endless_bursts);
    ASSERT_EQ(st.flow_frames.size(), 1u) << "no field varies: one frame";
    const auto bytes = packet::build_frame(st.flow_frames[0]);
    ASSERT_EQ(bytes.size(), 124u) << "128 bytes with the FCS";
    EXPECT_EQ(mac_at(bytes, 0), "00:11:22:33:44:66");
    EXPECT_EQ(mac_at(bytes, 6), "00:11:22:33:44:55");
    EXPECT_EQ(get16(bytes, 12), 0x0800);
    EXPECT_EQ(bytes[14 + 8], 64) << "the model's TTL";
    EXPECT_EQ(get16(bytes, 14 + 6), 0u) << "the model's dont_fragment 0";
    EXPECT_EQ(ip4_at(bytes, 26), "1.1.1.1");
    EXPECT_EQ(ip4_at(bytes, 30), "2.2.2.2");
    EXPECT_EQ(get16(bytes, 34), 5000);
    EXPECT_EQ(get16(bytes, 36), 6000);
    test_support::expect_checksums_verify(bytes, false);
    EXPECT_EQ(packet::build_frame(st.frame), bytes) << "the base frame is the first packet's";
    // Nothing to resolve: no port speed is asked for.
    auto resolved = c;
    otg::resolve_counts_and_rates(resolved, [](const std::string&) -> std::optional<double> {
        ADD_FAILURE() << "a pps flow needs no speed";
        return std::nullopt;
    });
    EXPECT_EQ(*resolved.flows[0].stream.count, 1000u);
}

TEST(OtgConfig, OtgExamplesTwoFlowsSendTheirPacketsInOtgOrder) {
    const auto c = otg::parse_config(json::parse(kTwoFlows));
    ASSERT_EQ(c.flows.size(), 2u);
    EXPECT_EQ(c.flows[0].name, "flow p1->p2");
    EXPECT_EQ(c.flows[1].name, "flow p2->p1");
    const auto& a = c.flows[0].stream.flow_frames;
    ASSERT_EQ(a.size(), 20u) << "lcm(10 source ports, 4 destination ports)";
    const uint16_t dst_a[] = {4000, 4044, 4060, 4074};
    for (size_t k = 0; k < a.size(); ++k) {
        const auto f = packet::build_frame(a[k]);
        EXPECT_EQ(get16(f, 34), 5000 + 2 * (k % 10)) << "packet " << k;
        EXPECT_EQ(get16(f, 36), dst_a[k % 4]) << "packet " << k;
        EXPECT_EQ(mac_at(f, 6), "00:aa:00:00:04:00");
        EXPECT_EQ(f.size(), 124u);
    }
    const auto& b = c.flows[1].stream.flow_frames;
    ASSERT_EQ(b.size(), 30u) << "lcm(10, 6)";
    const uint16_t dst_b[] = {8000, 8044, 8060, 8074, 8082, 8084};
    for (size_t k = 0; k < b.size(); ++k) {
        EXPECT_EQ(b[k].src_port, 6000 + 4 * (k % 10)) << "packet " << k;
        EXPECT_EQ(b[k].dst_port, dst_b[k % 6]) << "packet " << k;
        EXPECT_EQ(b[k].frame_size, 256u);
    }
}

TEST(OtgConfig, TwoFlowsBecomeProgramsWhoseTemplatesFollowOtgOrder) {
    // The streams as the server hands them to a run: the flow names (spaces, '>') pass the
    // stream checks, and the templates are the packets in OTG's order, one signed flow each.
    const auto c = otg::parse_config(json::parse(kTwoFlows));
    auto spec = spec::build_run_spec({{"tx", {"veth0"}}, {"rx", {"veth1"}}, {"force", {"true"}}});
    for (const auto& f : c.flows) spec.streams.push_back(f.stream);
    spec.validate();
    EXPECT_EQ(spec.mix_flows(), 50u);
    const auto progs = engine::build_programs(spec, {{"veth0", 0}});
    const auto& p = *progs.queues[0];
    ASSERT_EQ(p.shares.size(), 2u);
    const auto& sh = p.shares[0];
    ASSERT_EQ(sh.flows, 20u);
    const uint16_t dst[] = {4000, 4044, 4060, 4074};
    for (uint32_t k = 0; k < 20; ++k) {
        const auto& t = p.templates[sh.templates[k]];
        const std::vector<uint8_t> frame(t.bytes.begin(), t.bytes.begin() + t.len);
        EXPECT_EQ(get16(frame, 34), 5000 + 2 * (k % 10)) << "template " << k;
        EXPECT_EQ(get16(frame, 36), dst[k % 4]) << "template " << k;
        EXPECT_EQ(packet::sig_classify(frame.data(), frame.size(), spec.nonce, spec.rx_streams()).stream, k);
    }
    EXPECT_EQ(progs.first_flow, (std::vector<uint32_t>{0, 20}));
}

TEST(OtgConfig, Rfc2544PercentagesAndFixedSecondsResolveAtThePortsSpeed) {
    auto c = otg::parse_config(json::parse(kRfc2544));
    ASSERT_EQ(c.layer1.size(), 1u);
    const auto& l1 = c.layer1[0];
    EXPECT_EQ(l1.name, "l1");
    EXPECT_EQ(l1.path, "layer1[0]");
    EXPECT_EQ(l1.ports, (std::vector<std::string>{"VM1-TE1", "VM2-TE1"}));
    EXPECT_EQ(l1.speed_bps, 10e9);
    EXPECT_EQ(l1.mtu, 9000u);
    EXPECT_EQ(l1.promiscuous, true);
    auto& f = c.flows[0];
    EXPECT_EQ(f.stream.frame.l4, packet::L4::tcp);
    EXPECT_EQ(f.stream.frame.src_port, 643);
    EXPECT_EQ(f.stream.frame.dst_port, 543);
    EXPECT_EQ(f.stream.frame.tcp_flags, 0) << "the model's flags: none set";
    EXPECT_EQ(f.rate_percent, 50.0);
    EXPECT_EQ(f.fixed_seconds, 5.0);
    EXPECT_FALSE(f.stream.rate.has_value()) << "not before the speed is known";
    EXPECT_FALSE(f.stream.count.has_value());
    std::set<std::string> asked;
    otg::resolve_counts_and_rates(c, [&](const std::string& port) -> std::optional<double> {
        asked.insert(port);
        return 10e9;
    });
    EXPECT_EQ(asked, std::set<std::string>{"VM1-TE1"}) << "the tx port's speed";
    ASSERT_TRUE(f.stream.rate.has_value());
    EXPECT_EQ(f.stream.rate->unit, spec::RateSpec::Unit::l1_bps);
    EXPECT_EQ(f.stream.rate->value, 5e9);
    const double pps = 5e9 / ((1518 + 20) * 8.0);  // 406371.9 frames/s at L1
    ASSERT_TRUE(f.stream.count.has_value());
    EXPECT_EQ(*f.stream.count, static_cast<uint64_t>(std::llround(pps * 5)));
    EXPECT_EQ(*f.stream.count, 2031860u);
}

TEST(OtgConfig, AbsentFieldsTakeTheModelsDefaults) {
    auto c = base_config();
    header(c, 0) = json::object();  // ethernet {}: dst auto, src 00:00:00:00:00:00
    const auto cfg = otg::parse_config(c);
    const auto& f = cfg.flows[0];
    const auto& st = f.stream;
    EXPECT_EQ(st.size.str(), "64");
    ASSERT_TRUE(st.rate.has_value());
    EXPECT_EQ(st.rate->unit, spec::RateSpec::Unit::pps);
    EXPECT_EQ(st.rate->value, 1000);
    EXPECT_FALSE(st.count.has_value()) << "continuous";
    EXPECT_FALSE(st.ends());
    EXPECT_EQ(st.delay_s, 0);
    EXPECT_FALSE(f.metrics || f.loss || f.timestamps || f.latency);
    EXPECT_TRUE(f.dst_mac_auto) << "ethernet.dst's default choice is auto";
    ASSERT_EQ(st.flow_frames.size(), 1u);
    const auto& fr = st.flow_frames[0];
    EXPECT_EQ(fr.src_mac, packet::MacAddr{});
    EXPECT_EQ(fr.src_ip, packet::parse_ip("0.0.0.0", "ip"));
    EXPECT_EQ(fr.dst_ip, packet::parse_ip("0.0.0.0", "ip"));
    EXPECT_EQ(fr.src_port, 0);
    EXPECT_EQ(fr.dst_port, 0);
    EXPECT_EQ(fr.ttl, 64);
    EXPECT_EQ(fr.tos, 0);
    EXPECT_FALSE(fr.dont_fragment);
    EXPECT_FALSE(fr.vlan.has_value());
    EXPECT_EQ(fr.frame_size, 64u);
    ASSERT_EQ(cfg.warnings.size(), 1u);
    EXPECT_NE(cfg.warnings[0].find("flows[0] \"f1\": ethernet.src is 00:00:00:00:00:00"), std::string::npos)
        << cfg.warnings[0];
    EXPECT_NE(cfg.warnings[0].find("a Linux bridge drops"), std::string::npos);
    // No packet at all: one Ethernet header, and no frame linerate can send.
    flow0(c).erase("packet");
    expect_refused(c, "flows[0].packet", "absent, the packet is one ethernet header");
    // An Ethernet header alone.
    flow0(c)["packet"] = json::parse(R"([{"choice":"ethernet","ethernet":{}}])");
    expect_refused(c, "flows[0].packet", "add an ipv4 or ipv6 header and a udp or tcp header");
}

TEST(OtgConfig, HeaderFieldsAndTheirPatternsGoIntoEveryPacket) {
    auto c = base_config();
    flow0(c)["packet"] = json::parse(R"([
        {"choice":"ethernet","ethernet":{"src":{"choice":"increment","increment":{"start":"02:00:00:00:00:ff","step":"00:00:00:00:00:01","count":2}},
                                         "dst":{"choice":"value","value":"02:00:00:00:00:02"},"ether_type":{"choice":"auto","auto":65535}}},
        {"choice":"vlan","vlan":{"id":{"choice":"values","values":[10,20]},"priority":{"choice":"value","value":5},"tpid":{"choice":"value","value":33024}}},
        {"choice":"ipv4","ipv4":{"src":{"choice":"decrement","decrement":{"start":"0.0.0.1","step":"0.0.0.2","count":2}},
                                 "dst":{"choice":"random","random":{"min":"198.18.1.0","max":"198.18.1.255","seed":7,"count":3}},
                                 "priority":{"choice":"dscp","dscp":{"phb":{"choice":"value","value":46},"ecn":{"choice":"value","value":1}}},
                                 "time_to_live":{"choice":"value","value":9},"dont_fragment":{"choice":"value","value":1},
                                 "protocol":{"choice":"value","value":6},"total_length":{"choice":"auto","auto":46}}},
        {"choice":"tcp","tcp":{"src_port":{"choice":"decrement","decrement":{"start":1,"step":1,"count":2}},
                               "ctl_ack":{"choice":"value","value":1},"ctl_psh":{"choice":"values","values":[0,1]},
                               "ecn_echo":{"choice":"value","value":1},"window":{"choice":"value","value":512},
                               "data_offset":{"choice":"value","value":5}}}])");
    const auto cfg = otg::parse_config(c);
    const auto& fr = cfg.flows[0].stream.flow_frames;
    ASSERT_EQ(fr.size(), 6u) << "lcm(2, 2, 2, 3, 2, 2)";
    for (size_t k = 0; k < fr.size(); ++k) {
        SCOPED_TRACE(k);
        EXPECT_EQ(fr[k].src_mac.str(), k % 2 ? "02:00:00:00:01:00" : "02:00:00:00:00:ff") << "a carry";
        EXPECT_EQ(fr[k].dst_mac.str(), "02:00:00:00:00:02");
        EXPECT_EQ(fr[k].vlan, k % 2 ? 20 : 10);
        EXPECT_EQ(fr[k].vlan_pcp, 5);
        EXPECT_EQ(fr[k].src_ip.str(), k % 2 ? "255.255.255.255" : "0.0.0.1") << "decrement wraps within the address";
        EXPECT_EQ(fr[k].dst_ip, fr[k % 3].dst_ip) << "three random draws, in turn";
        EXPECT_EQ(fr[k].dst_ip.b[2], 1);
        EXPECT_EQ(fr[k].tos, 46 << 2 | 1);
        EXPECT_EQ(fr[k].ttl, 9);
        EXPECT_TRUE(fr[k].dont_fragment);
        EXPECT_EQ(fr[k].l4, packet::L4::tcp);
        EXPECT_EQ(fr[k].src_port, k % 2 ? 0 : 1);
        EXPECT_EQ(fr[k].tcp_flags, k % 2 ? 0x58 : 0x50) << "ECE, ACK, and PSH every other packet";
        EXPECT_EQ(fr[k].tcp_window, 512);
        const auto bytes = packet::build_frame(fr[k]);
        test_support::expect_checksums_verify(bytes, true);
        EXPECT_EQ(get16(bytes, 12), 0x8100);
        EXPECT_EQ(get16(bytes, 14), (5 << 13) | (k % 2 ? 20 : 10));
    }
    EXPECT_NE(fr[0].dst_ip, fr[1].dst_ip);
    // The same seed draws the same addresses, another seed others.
    EXPECT_EQ(otg::parse_config(c).flows[0].stream.flow_frames[2].dst_ip, fr[2].dst_ip);
    header(c, 2)["dst"]["random"]["seed"] = 8;
    const auto other = otg::parse_config(c).flows[0].stream.flow_frames;
    EXPECT_FALSE(other[0].dst_ip == fr[0].dst_ip && other[1].dst_ip == fr[1].dst_ip && other[2].dst_ip == fr[2].dst_ip);
}

TEST(OtgConfig, Ipv6TosAndSizes) {
    auto c = base_config();
    flow0(c)["packet"][1] = json::parse(R"({"choice":"ipv6","ipv6":{"src":{"choice":"value","value":"2001:2::1"},
        "dst":{"choice":"increment","increment":{"start":"2001:2::ffff:ffff","step":"::1","count":2}},
        "traffic_class":{"choice":"value","value":184},"hop_limit":{"choice":"value","value":3},
        "next_header":{"choice":"auto","auto":59}}})");
    auto cfg = otg::parse_config(c);
    const auto& st = cfg.flows[0].stream;
    ASSERT_EQ(st.flow_frames.size(), 2u);
    EXPECT_EQ(st.flow_frames[1].dst_ip.str(), "2001:2::1:0:0") << "a carry across the 32-bit boundary";
    EXPECT_EQ(st.frame.tos, 184);
    EXPECT_EQ(st.frame.ttl, 3);
    // The model's 64 bytes are too few for IPv6/UDP: raised, with a warning; given, refused.
    EXPECT_EQ(st.size.str(), "66");
    EXPECT_NE(cfg.warnings.at(0).find("size left out"), std::string::npos) << cfg.warnings[0];
    EXPECT_NE(cfg.warnings.at(1).find("no room for linerate's signature"), std::string::npos) << cfg.warnings[1];
    flow0(c)["size"] = json::parse(R"({"choice":"fixed","fixed":64})");
    expect_refused(c, "flows[0].size.fixed", "64 bytes is below the smallest Ethernet IPv6 UDP frame (66 bytes");
    // A predefined mix is raised where it is below the kind's smallest, with a note.
    flow0(c)["size"] = json::parse(R"({"choice":"weight_pairs","weight_pairs":{"choice":"predefined","predefined":"ipv6_imix"}})");
    cfg = otg::parse_config(c);
    EXPECT_EQ(cfg.flows[0].stream.size.smallest(), 66u);
    EXPECT_NE(cfg.warnings.at(0).find("ipv6-imix: its 60 byte frames are sent as 66 bytes"), std::string::npos);
}

TEST(OtgConfig, SizesRatesAndDurations) {
    auto c = base_config();
    const auto stream_of = [&](const char* key, const char* value) {
        auto x = c;
        flow0(x)[key] = json::parse(value);
        return otg::parse_config(x).flows.at(0).stream;
    };
    auto st = stream_of("size", R"({"choice":"increment","increment":{"start":100,"end":200,"step":10}})");
    EXPECT_EQ(st.size.kind, spec::SizeSpec::Kind::increment);
    EXPECT_EQ(st.size.str(), "100:200:+10");
    EXPECT_EQ(st.frame.frame_size, 100u) << "the frame is the smallest size";
    st = stream_of("size", R"({"choice":"random","random":{"min":64,"max":1518}})");
    EXPECT_EQ(st.size.kind, spec::SizeSpec::Kind::random);
    EXPECT_EQ(st.size.str(), "64..1518");
    EXPECT_EQ(st.seed, 1u) << "flow 0's own seed";
    st = stream_of("size", R"({"choice":"weight_pairs","weight_pairs":{"choice":"custom","custom":[{"size":64,"weight":7},{"size":1500,"weight":1.5}]}})");
    EXPECT_EQ(st.size.str(), "64:7/1500:1.5");
    st = stream_of("size", R"({"choice":"weight_pairs","weight_pairs":{"choice":"predefined","predefined":"tcp_imix"}})");
    EXPECT_EQ(st.size.str(), "tcp-imix");

    st = stream_of("rate", R"({"choice":"bps","bps":"1000000000"})");
    EXPECT_EQ(st.rate->unit, spec::RateSpec::Unit::l1_bps);
    EXPECT_EQ(st.rate->value, 1e9);
    EXPECT_EQ(stream_of("rate", R"({"choice":"gbps","gbps":10})").rate->value, 10e9);
    EXPECT_EQ(stream_of("rate", R"({"choice":"kbps","kbps":"672"})").rate->value, 672e3);
    EXPECT_EQ(stream_of("rate", R"({"choice":"mbps","mbps":100})").rate->value, 100e6) << "a uint64 as a number";
    EXPECT_EQ(stream_of("rate", R"({"choice":"pps","pps":250})").rate->value, 250);
    flow0(c)["rate"] = json::parse(R"({"choice":"mbps","mbps":"10"})");
    const auto bits = otg::parse_config(c);
    ASSERT_EQ(bits.warnings.size(), 1u);
    EXPECT_NE(bits.warnings[0].find("at layer 1: preamble, SFD and inter-frame gap included"), std::string::npos);
    flow0(c).erase("rate");

    st = stream_of("duration", R"({"choice":"burst","burst":{"bursts":0,"packets":5,"gap":12,"inter_burst_gap":{"choice":"microseconds","microseconds":5}}})");
    EXPECT_TRUE(st.endless_bursts) << "bursts 0: bursts until stopped";
    EXPECT_EQ(st.burst_frames, 5u);
    EXPECT_NEAR(st.burst_gap_s, 5e-6, 1e-15);
    EXPECT_FALSE(st.ends());
    st = stream_of("duration", R"({"choice":"burst","burst":{"bursts":3,"packets":10}})");
    EXPECT_EQ(st.bursts, 3u);
    EXPECT_EQ(st.burst_frames, 10u);
    EXPECT_EQ(st.count, 30u);
    st = stream_of("duration", R"({"choice":"fixed_packets","fixed_packets":{"packets":7,"gap":12,"delay":{"choice":"nanoseconds","nanoseconds":1000}}})");
    EXPECT_EQ(st.count, 7u);
    EXPECT_NEAR(st.delay_s, 1e-6, 1e-15);
    st = stream_of("duration", R"({"choice":"continuous","continuous":{"gap":12,"delay":{"choice":"microseconds","microseconds":2.5}}})");
    EXPECT_FALSE(st.count.has_value());
    EXPECT_NEAR(st.delay_s, 2.5e-6, 1e-15);

    // Times in bytes take the port's speed: 125 bytes at 1 Gbit/s are 1 us; the default
    // inter-burst gap of 12 bytes needs no speed.
    flow0(c)["duration"] = json::parse(R"({"choice":"continuous","continuous":{"delay":{"choice":"bytes","bytes":125}}})");
    auto cfg = otg::parse_config(c);
    otg::resolve_counts_and_rates(cfg, [](const std::string&) { return std::optional<double>(1e9); });
    EXPECT_NEAR(cfg.flows[0].stream.delay_s, 1e-6, 1e-15);
    cfg = otg::parse_config(c);
    try {
        otg::resolve_counts_and_rates(cfg, [](const std::string&) { return std::optional<double>(); });
        ADD_FAILURE() << "a delay in bytes without the port's speed";
    } catch (const otg::OtgError& e) {
        ASSERT_EQ(e.refusals().size(), 1u);
        EXPECT_EQ(e.refusals()[0].path, "flows[0].duration.continuous.delay.bytes");
    }
    flow0(c)["duration"] = json::parse(R"({"choice":"burst","burst":{"bursts":2,"packets":3}})");
    cfg = otg::parse_config(c);
    otg::resolve_counts_and_rates(cfg, [](const std::string&) { return std::optional<double>(); });
    EXPECT_EQ(cfg.flows[0].stream.burst_gap_s, 0);
}

TEST(OtgConfig, RefusalsOfTheTopAndThePorts) {
    const auto with = [](auto&& change) {
        auto c = base_config();
        change(c);
        return c;
    };
    expect_refused(with([](json& c) { c["foo"] = 1; }), "foo", "unknown key (the keys here are ports, lags");
    expect_refused(with([](json& c) { c["devices"] = json::parse(R"([{"name":"d1"}])"); }), "devices",
                   "no emulated devices");
    EXPECT_TRUE(refusals_of(with([](json& c) { c["devices"] = json::array(); })).empty()) << "empty lists are fine";
    expect_refused(with([](json& c) { c["stateful_flows"] = json::object(); }), "stateful_flows", "RoCEv2");
    expect_refused(with([](json& c) { c["events"] = json::parse(R"({"dp_events":{"enable":true}})"); }),
                   "events.dp_events.enable", "no data plane events");
    EXPECT_TRUE(refusals_of(with([](json& c) {
                    c["options"] = json::parse(R"({"port_options":{"location_preemption":true,"data_integrity":false}})");
                })).empty())
        << "what snappi sends when one port option is set";
    expect_refused(with([](json& c) { c["options"] = json::parse(R"({"port_options":{"data_integrity":true}})"); }),
                   "options.port_options.data_integrity", "false only");
    expect_refused(with([](json& c) { c["ports"][1]["location"] = ""; }), "ports[1].location", "give a location");
    expect_refused(with([](json& c) {
                       c["ports"][1]["name"] = "p1";
                       flow0(c)["tx_rx"]["port"]["rx_names"] = {"p1"};
                   }),
                   "ports[1].name", "a second port named \"p1\"");
    expect_refused(with([](json& c) { c["layer1"] = json::parse(R"([{"name":"l","port_names":["p1"],"speed":"speed_100_hd_mbps"}])"); }),
                   "layer1[0].speed", "half duplex");
    expect_refused(with([](json& c) { c["layer1"] = json::parse(R"([{"name":"l","port_names":["p1"],"auto_negotiation":{"rs_fec":true}}])"); }),
                   "layer1[0].auto_negotiation.rs_fec", "false (its default) only");
    expect_refused(with([](json& c) { c["layer1"] = json::parse(R"([{"name":"l","port_names":["p1"],"mtu":20000}])"); }),
                   "layer1[0].mtu", "between 64 and 14000");
    expect_refused(with([](json& c) { c["captures"] = json::parse(R"([{"name":"c","port_names":["p2"],"format":"pcapng"}])"); }),
                   "captures[0].format", "pcap only");
    expect_refused(with([](json& c) { c["captures"] = json::parse(R"([{"name":"c","port_names":["p2"],"packet_size":128}])"); }),
                   "captures[0].packet_size", "whole frames");
    expect_refused(with([](json& c) { c["captures"] = json::parse(R"([{"name":"a","port_names":["p2"]},{"name":"b","port_names":["p2"]}])"); }),
                   "captures[1].port_names[0]", "port p2 is in captures[0] already");
    const auto cap = otg::parse_config(with([](json& c) {
        c["captures"] = json::parse(R"([{"port_names":["p2"],"overwrite":true,"format":"pcap","name":"c1"}])");
    }));
    ASSERT_EQ(cap.captures.size(), 1u) << "as snappi sends a capture";
    EXPECT_EQ(cap.captures[0].ports, std::vector<std::string>{"p2"});
}

TEST(OtgConfig, RefusalsOfTheFlows) {
    const auto with = [](auto&& change) {
        auto c = base_config();
        change(c);
        return c;
    };
    expect_refused(with([](json& c) { flow0(c)["tx_rx"] = json::parse(R"({"choice":"device","device":{"tx_names":["d"],"rx_names":["e"]}})"); }),
                   "flows[0].tx_rx", "device is not supported");
    expect_refused(with([](json& c) { flow0(c)["tx_rx"]["port"]["rx_names"] = {"p3"}; }),
                   "flows[0].tx_rx.port.rx_names[0]", "no port is named \"p3\"");
    expect_refused(with([](json& c) { c["flows"].push_back(c["flows"][0]); }), "flows[1].name",
                   "a second flow named \"f1\"");
    expect_refused(with([](json& c) { flow0(c)["name"] = "tab\there"; }), "flows[0].name", "control character");
    expect_refused(with([](json& c) {
                       flow0(c)["packet"].insert(flow0(c)["packet"].begin() + 1, json::parse(R"({"choice":"gre","gre":{}})"));
                   }),
                   "flows[0].packet[1]",
                   "linerate sends Ethernet [VLAN] IPv4|IPv6 UDP|TCP frames; a gre header is not supported");
    expect_refused(with([](json& c) { flow0(c)["packet"].push_back(json::parse(R"({"choice":"udp"})")); }),
                   "flows[0].packet[3]", "nothing follows the UDP or TCP header");
    expect_refused(with([](json& c) {
                       flow0(c)["packet"][2] = json::parse(R"({"choice":"tcp","tcp":{"seq_num":{"choice":"value","value":4000000000}}})");
                   }),
                   "flows[0].packet[2].tcp.seq_num", "the sequence number");
    expect_refused(with([](json& c) {
                       flow0(c)["packet"][2] = json::parse(R"({"choice":"tcp","tcp":{"ctl_urg":{"choice":"value","value":1}}})");
                   }),
                   "flows[0].packet[2].tcp.ctl_urg", "URG stays unset");
    expect_refused(with([](json& c) { header(c, 1)["src"] = json::parse(R"({"choice":"auto","auto":{"choice":"dhcp"}})"); }),
                   "flows[0].packet[1].ipv4.src", "auto (DHCP) needs an OTG device");
    expect_refused(with([](json& c) { header(c, 1)["identification"] = json::parse(R"({"choice":"value","value":7})"); }),
                   "flows[0].packet[1].ipv4.identification", "run identity");
    expect_refused(with([](json& c) { header(c, 1)["protocol"] = json::parse(R"({"choice":"value","value":6})"); }),
                   "flows[0].packet[1].ipv4.protocol", "auto or 17");
    expect_refused(with([](json& c) { header(c, 2)["length"] = json::parse(R"({"choice":"value","value":100})"); }),
                   "flows[0].packet[2].udp.length", "leave length out");
    expect_refused(with([](json& c) { header(c, 2)["checksum"] = json::parse(R"({"choice":"generated","generated":"bad"})"); }),
                   "flows[0].packet[2].udp.checksum", "generated good only");
    expect_refused(with([](json& c) { header(c, 0)["src"]["metric_tags"] = json::parse(R"([{"name":"smac"}])"); }),
                   "flows[0].packet[0].ethernet.src.metric_tags", "no tagged metrics");
    expect_refused(with([](json& c) { flow0(c)["duration"] = json::parse(R"({"choice":"fixed_packets","fixed_packets":{"packets":5,"gap":13}})"); }),
                   "flows[0].duration.fixed_packets.gap", "12 only");
    expect_refused(with([](json& c) { flow0(c)["duration"] = json::parse(R"({"choice":"burst","burst":{"bursts":2,"packets":3,"gap":20}})"); }),
                   "flows[0].duration.burst.gap", "12 only");
    expect_refused(with([](json& c) { flow0(c)["metrics"] = json::parse(R"({"enable":true,"rx_tx_ratio":{"choice":"rx_count","rx_count":{}}})"); }),
                   "flows[0].metrics.rx_tx_ratio", "rx_count is not supported");
    expect_refused(with([](json& c) { flow0(c)["payload"] = json::parse(R"({"choice":"fixed","fixed":{"pattern":"ab","repeat":true}})"); }),
                   "flows[0].payload", "linerate writes its signature");
    EXPECT_TRUE(refusals_of(with([](json& c) { flow0(c)["payload"] = json::parse(R"({"choice":"fixed","fixed":{"pattern":"00"}})"); })).empty())
        << "the default payload is fine";
    expect_refused(with([](json& c) { flow0(c)["rate"] = json::parse(R"({"choice":"percentage","percentage":0})"); }),
                   "flows[0].rate.percentage", "sends nothing");
    expect_refused(with([](json& c) { flow0(c)["rate"] = json::parse(R"({"choice":"bps","bps":"671"})"); }),
                   "flows[0].rate.bps", "between 672 and");
    expect_refused(with([](json& c) { flow0(c)["size"] = json::parse(R"({"choice":"fixed","fixed":1.5})"); }),
                   "flows[0].size.fixed", "expected an unsigned integer, got 1.5");
    expect_refused(with([](json& c) { flow0(c)["size"] = json::parse(R"({"choice":"fixed","fixed":9001})"); }),
                   "flows[0].size.fixed", "must be between 64 and 9000");
    expect_refused(with([](json& c) { flow0(c)["rate"] = json::parse(R"({"choice":"pps","pps":"abc"})"); }),
                   "flows[0].rate.pps", "expected an unsigned integer (a number or a string of digits), got \"abc\"");
    expect_refused(with([](json& c) { flow0(c)["rate"] = json::parse(R"({"choice":"ppm"})"); }), "flows[0].rate.choice",
                   "must be one of pps, bps, kbps, mbps, gbps or percentage; got \"ppm\"");
    expect_refused(with([](json& c) { flow0(c)["egress_packet"] = json::parse(R"([{"choice":"ethernet"}])"); }),
                   "flows[0].egress_packet", "leave egress_packet out");
}

TEST(OtgConfig, PatternsRepeatingTooLateAreRefused) {
    auto c = base_config();
    header(c, 2)["src_port"] = json::parse(R"({"choice":"increment","increment":{"start":1,"step":1,"count":5000}})");
    expect_refused(c, "flows[0].packet[2].udp.src_port.increment.count", "5000 values: linerate builds a frame for each distinct packet of a flow, at most 4096");
    // Each field within the limit, but together repeating only after lcm(64, 65) = 4160 packets.
    header(c, 2)["src_port"]["increment"]["count"] = 64;
    header(c, 2)["dst_port"] = json::parse(R"({"choice":"random","random":{"min":1,"max":9,"count":65}})");
    const auto r = refusals_of(c);
    ASSERT_EQ(r.size(), 1u) << lines(r);
    EXPECT_EQ(r[0].path, "flows[0].packet");
    EXPECT_NE(r[0].message.find("flows[0].packet[2].udp.src_port (64 values), flows[0].packet[2].udp.dst_port (65 values)"),
              std::string::npos)
        << r[0].message;
    header(c, 2)["dst_port"]["random"]["count"] = 64;
    EXPECT_EQ(otg::parse_config(c).flows[0].stream.flow_frames.size(), 64u);
}

TEST(OtgConfig, TheFlowsTogetherStayWithinTheSignaturesFlowIds) {
    // 16 flows of 4096 distinct packets: 65536 signed flows, one more than a signature tells apart.
    auto c = base_config();
    header(c, 2)["src_port"] = json::parse(R"({"choice":"increment","increment":{"start":0,"step":1,"count":4096}})");
    const auto one = flow0(c);
    for (int i = 1; i < 16; ++i) {
        c["flows"].push_back(one);
        c["flows"].back()["name"] = fmt::format("f{}", i + 1);
    }
    expect_refused(c, "flows", "the flows have 65536 distinct packets in all");
    c["flows"].erase(15);
    header(c, 2)["src_port"]["increment"]["count"] = 4095;  // flow 0: 4095, the other 14: 4096
    EXPECT_EQ(otg::parse_config(c).flows.size(), 15u);
}

TEST(OtgConfig, APercentageNeedsThePortsSpeed) {
    auto c = base_config();
    flow0(c)["rate"] = json::parse(R"({"choice":"percentage","percentage":10})");
    auto cfg = otg::parse_config(c);
    try {
        otg::resolve_counts_and_rates(cfg, [](const std::string&) { return std::optional<double>(); });
        ADD_FAILURE() << "no speed, no rate";
    } catch (const otg::OtgError& e) {
        ASSERT_EQ(e.refusals().size(), 1u);
        EXPECT_EQ(e.refusals()[0].path, "flows[0].rate.percentage");
        EXPECT_NE(e.refusals()[0].message.find("give it a layer1 speed, or start linerate serve with --line-rate"),
                  std::string::npos);
        EXPECT_EQ(e.http_status(), 400);
    }
    otg::resolve_counts_and_rates(cfg, [](const std::string& p) {
        return p == "p1" ? std::optional<double>(25e9) : std::nullopt;
    });
    EXPECT_EQ(cfg.flows[0].stream.rate->value, 2.5e9);
    EXPECT_FALSE(cfg.flows[0].stream.count.has_value()) << "continuous: no count";
}

TEST(OtgConfig, EveryRefusalIsReportedTogether) {
    auto c = base_config();
    c["devices"] = json::parse(R"([{"name":"d1"}])");
    c["captures"] = json::parse(R"([{"name":"c","port_names":["p9"],"format":"pcapng"}])");
    flow0(c)["duration"] = json::parse(R"({"choice":"fixed_packets","fixed_packets":{"gap":13}})");
    header(c, 2)["src_port"] = json::parse(R"({"choice":"value","value":70000})");
    try {
        otg::parse_config(c);
        ADD_FAILURE() << "refused";
    } catch (const otg::OtgError& e) {
        std::set<std::string> paths;
        for (const auto& r : e.refusals()) paths.insert(r.path);
        EXPECT_EQ(paths, (std::set<std::string>{"devices", "captures[0].port_names[0]", "captures[0].format",
                                                "flows[0].duration.fixed_packets.gap",
                                                "flows[0].packet[2].udp.src_port.value"}));
        const std::string what = e.what();
        EXPECT_EQ(std::count(what.begin(), what.end(), '\n'), 4) << "one line each:\n" << what;
        EXPECT_NE(what.find("flows[0].packet[2].udp.src_port.value: 70000 is out of range: must be between 0 and 65535"),
                  std::string::npos)
            << what;
    }
}
