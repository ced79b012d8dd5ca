#include "spec/options.h"

#include <fmt/format.h>
#include <nlohmann/json.hpp>
#include <random>
#include <sched.h>

#include "spec/option_rows.h"
#include "util/error.h"

namespace lr::spec {
using namespace option_rows;
namespace {

// The frames' default addresses, in the benchmarking ranges (RFC 2544, RFC 5180).
constexpr std::string_view kSrcIp4 = "198.18.0.1", kDstIp4 = "198.18.0.2", kSrcIp6 = "2001:2::1", kDstIp6 = "2001:2::2";


std::vector<int> parse_cpus(const std::string& list) {
    std::vector<int> cpus;
    size_t pos = 0;
    while (pos <= list.size()) {
        size_t comma = list.find(',', pos);
        if (comma == std::string::npos) comma = list.size();
        cpus.push_back(static_cast<int>(
            parse_uint(std::string_view(list).substr(pos, comma - pos), "--cpus", 0, CPU_SETSIZE - 1, {list, "CPU"})));
        pos = comma + 1;
    }
    return cpus;
}

J ports_json(const std::vector<PortQueues>& v) {
    auto a = J::array();
    for (const auto& p : v) a.push_back({{"port", p.port}, {"queues", p.queues}});
    return a;
}


// Rows are written as designated initialisers of OptionDef; members a row leaves out keep
// their defaults, which is what -Wmissing-field-initializers would flag.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmissing-field-initializers"
using K = OptionDef::Kind;

std::vector<OptionDef> make_table() {
    std::vector<OptionDef> t;
    // Every printed default is the spec's own: a default-built RunSpec and Draft.
    const Draft def;
    const RunSpec& ds = def.spec;
    const auto num = [](auto v) { return fmt::format("{}", v); };
    // ---- Ports -------------------------------------------------------------------------
    t.push_back({.name = "tx", .group = "Ports", .value_name = "PORT[,queues=N]",
                 .help = "Transmit on PORT with N queues, one pinned worker each",
                 .kind = K::list,
                 .apply = [](Draft& d, const Values& v) {
                     for (const auto& s : v) d.spec.tx.push_back(parse_port_queues(s, "--tx"));
                 },
                 .show = [](const RunSpec& s, J& j) { j["tx"] = ports_json(s.tx); }});
    t.push_back({.name = "rx", .group = "Ports", .value_name = "PORT[,queues=N]",
                 .help = "Receive and measure on PORT with N queues", .kind = K::list,
                 .apply = [](Draft& d, const Values& v) {
                     for (const auto& s : v) d.spec.rx.push_back(parse_port_queues(s, "--rx"));
                 },
                 .show = [](const RunSpec& s, J& j) { j["rx"] = ports_json(s.rx); }});
    t.push_back({.name = "backend", .group = "Ports", .value_name = "NAME",
                 .help = "Packet I/O: dpdk (ports are DPDK devices) or afxdp (ports are kernel interfaces, "
                         "AF_XDP sockets, no DPDK or hugepages)",
                 .default_text = std::string(to_string(ds.backend)), .choices = &backend_choices(),
                 .apply = [](Draft& d, const Values& v) {
                     d.spec.backend = BackendKind(parse_choice(backend_choices(), one(v), "--backend"));
                 },
                 .show = [](const RunSpec& s, J& j) { j["backend"] = std::string(to_string(s.backend)); }});
    t.push_back({.name = "xdp-mode", .group = "Ports", .value_name = "MODE",
                 .help = "afxdp: attach linerate's XDP program in native (drv) or skb (generic) mode, or auto "
                         "(native, else skb)",
                 .default_text = std::string(to_string(ds.afxdp.xdp_mode)), .choices = &xdp_mode_choices(),
                 .backends = kAfxdp, .commands = kAll,
                 .apply = [](Draft& d, const Values& v) {
                     d.spec.afxdp.xdp_mode = XdpMode(parse_choice(xdp_mode_choices(), one(v), "--xdp-mode"));
                 },
                 .show = [](const RunSpec& s, J& j) { j["xdp_mode"] = std::string(to_string(s.afxdp.xdp_mode)); }});
    t.push_back({.name = "xsk-mode", .group = "Ports", .value_name = "MODE",
                 .help = "afxdp: AF_XDP sockets in copy, zero-copy (zc) or auto mode",
                 .default_text = std::string(to_string(ds.afxdp.xsk_mode)),
                 .choices = &xsk_mode_choices(), .backends = kAfxdp, .commands = kAll,
                 .apply = [](Draft& d, const Values& v) {
                     d.spec.afxdp.xsk_mode = XskMode(parse_choice(xsk_mode_choices(), one(v), "--xsk-mode"));
                 },
                 .show = [](const RunSpec& s, J& j) { j["xsk_mode"] = std::string(to_string(s.afxdp.xsk_mode)); }});
    t.push_back({.name = "rx-mode", .group = "Ports", .value_name = "MODE",
                 .help = "afxdp: socket (frames to user space: full measurements) or xdp (counting sink in the "
                         "driver: frames and sequence gaps per stream, no latency)",
                 .default_text = std::string(to_string(ds.afxdp.rx_mode)), .choices = &rx_mode_choices(),
                 .backends = kAfxdp,
                 .apply = [](Draft& d, const Values& v) {
                     d.spec.afxdp.rx_mode = RxMode(parse_choice(rx_mode_choices(), one(v), "--rx-mode"));
                 },
                 .show = [](const RunSpec& s, J& j) { j["rx_mode"] = std::string(to_string(s.afxdp.rx_mode)); }});
    t.push_back({.name = "tx-engine", .group = "Ports", .value_name = "ENGINE",
                 .help = fmt::format("afxdp: how TX queues send: socket (AF_XDP sockets), live (XDP live frames: the "
                                     "kernel runs linerate's XDP program over copies of the frame and sends them, Linux "
                                     "5.18+, frames up to {} bytes, paced in 50 ms calls) or auto (live for unpaced "
                                     "sending where delivery can be checked: a veth whose peer runs XDP; else socket)",
                                     kLiveMaxFrame),
                 .default_text = std::string(to_string(ds.afxdp.tx_engine)), .choices = &tx_engine_choices(),
                 .backends = kAfxdp,
                 .apply = [](Draft& d, const Values& v) {
                     d.spec.afxdp.tx_engine = TxEngine(parse_choice(tx_engine_choices(), one(v), "--tx-engine"));
                 },
                 .show = [](const RunSpec& s, J& j) { j["tx_engine"] = std::string(to_string(s.afxdp.tx_engine)); }});
    t.push_back({.name = "cpus", .group = "Ports", .value_name = "LIST",
                 .help = "Worker CPUs in worker order (TX queues first, then RX), e.g. 1,0; default: the allowed "
                         "CPUs after the first, which the control thread keeps",
                 .commands = kAll,
                 .apply = [](Draft& d, const Values& v) { d.spec.cpus = parse_cpus(one(v)); },
                 .show = [](const RunSpec& s, J& j) { j["cpus"] = s.cpus; }});
    t.push_back({.name = "ring-pair", .group = "Ports", .value_name = "A,B",
                 .help = "dpdk: create two in-memory ring ports A and B wired to each other (A's TX queue i is B's "
                         "RX queue i; up to 16 queues)",
                 .kind = K::list, .backends = kDpdk,
                 .apply = [](Draft& d, const Values& v) {
                     for (const auto& rp : v) {
                         const auto comma = rp.find(',');
                         if (comma == std::string::npos || comma == 0 || comma + 1 == rp.size() ||
                             rp.find(',', comma + 1) != std::string::npos ||
                             rp.substr(0, comma) == rp.substr(comma + 1))
                             throw UsageError(
                                 fmt::format("invalid --ring-pair \"{}\": expected two different names A,B", rp));
                         d.spec.dpdk.ring_pairs.emplace_back(rp.substr(0, comma), rp.substr(comma + 1));
                     }
                 },
                 .show = [](const RunSpec& s, J& j) { j["ring_pairs"] = s.dpdk.ring_pairs; }});
    t.push_back({.name = "eal", .group = "Ports", .value_name = "ARGS",
                 .help = "dpdk: EAL arguments, after --, passed to rte_eal_init unchanged", .kind = K::positional,
                 .backends = kDpdk, .commands = kAll,
                 .apply = [](Draft& d, const Values& v) { d.spec.dpdk.eal_args = v; },
                 .show = [](const RunSpec& s, J& j) { j["eal_args"] = s.dpdk.eal_args; }});

    // ---- Frames ------------------------------------------------------------------------
    t.push_back({.name = "size", .group = "Frames", .value_name = "SIZE",
                 .help = fmt::format("Frame size in bytes incl. FCS, {}..{}, or min: the smallest frame of the kind "
                                     "(64 for IPv4, 66 IPv6/UDP, 78 IPv6/TCP); or a distribution: {} (OTG's), "
                                     "S:W/S:W/... (sizes with weights), LO:HI:STEP (increment) or LO..HI (uniform "
                                     "random, from --seed). A distribution is exact over every period of its "
                                     "weights, in a shuffled order",
                                     packet::kMinFrame, packet::kMaxFrame, predefined_size_names()),
                 .default_text = "min",
                 .apply = [](Draft& d, const Values& v) {
                     if (one(v) == "min") return;
                     d.size_given = true;
                     d.size = parse_size_spec(one(v), "--size");
                 },
                 .show = [](const RunSpec& s, J& j) {
                     j["frame"]["size"] = s.size.varies() ? J(s.size.str()) : J(s.frame.frame_size);
                 }});
    t.push_back({.name = "proto", .group = "Frames", .value_name = "PROTO",
                 .help = "udp or tcp (TCP frames are SYNs)",
                 .default_text = std::string(proto_choices().name_of(int(ds.frame.l4))), .choices = &proto_choices(),
                 .apply = [](Draft& d, const Values& v) {
                     d.spec.frame.l4 = packet::L4(parse_choice(proto_choices(), one(v), "--proto"));
                 },
                 .show = [](const RunSpec& s, J& j) {
                     j["frame"]["l4"] = s.frame.l4 == packet::L4::udp ? "udp" : "tcp";
                 }});
    t.push_back({.name = "ipv6", .group = "Frames",
                 .help = fmt::format("IPv6 (default addresses {} -> {})", kSrcIp6, kDstIp6),
                 .kind = K::flag,
                 .apply = [](Draft& d, const Values& v) { d.ipv6 = parse_bool(one(v), "--ipv6"); },
                 .show = [](const RunSpec& s, J& j) { j["frame"]["ip"] = s.frame.src_ip.v6 ? 6 : 4; }});
    t.push_back({.name = "vlan", .group = "Frames", .value_name = "ID",
                 .help = "Add an 802.1Q tag with this VLAN id (0..4094)",
                 .apply = [](Draft& d, const Values& v) {
                     d.spec.frame.vlan = static_cast<uint16_t>(parse_uint(one(v), "--vlan", 0, 4094));
                 },
                 .show = [](const RunSpec& s, J& j) { j["frame"]["vlan"] = opt(s.frame.vlan); }});
    t.push_back({.name = "vlan-pcp", .group = "Frames", .value_name = "PCP", .help = "802.1Q priority (0..7)",
                 .default_text = num(ds.frame.vlan_pcp),
                 .apply = [](Draft& d, const Values& v) {
                     d.spec.frame.vlan_pcp = static_cast<uint8_t>(parse_uint(one(v), "--vlan-pcp", 0, 7));
                 },
                 .show = [](const RunSpec& s, J& j) { j["frame"]["vlan_pcp"] = s.frame.vlan_pcp; }});
    t.push_back({.name = "src-mac", .group = "Frames", .value_name = "MAC", .help = "Source MAC",
                 .default_text = ds.frame.src_mac.str(),
                 .apply = [](Draft& d, const Values& v) { d.spec.frame.src_mac = packet::parse_mac(one(v), "--src-mac"); },
                 .show = [](const RunSpec& s, J& j) { j["frame"]["src_mac"] = s.frame.src_mac.str(); }});
    t.push_back({.name = "dst-mac", .group = "Frames", .value_name = "MAC", .help = "Destination MAC",
                 .default_text = ds.frame.dst_mac.str(),
                 .apply = [](Draft& d, const Values& v) { d.spec.frame.dst_mac = packet::parse_mac(one(v), "--dst-mac"); },
                 .show = [](const RunSpec& s, J& j) { j["frame"]["dst_mac"] = s.frame.dst_mac.str(); }});
    t.push_back({.name = "src-ip", .group = "Frames", .value_name = "ADDR",
                 .help = "Source IP address", .default_text = fmt::format("{} (IPv6: {})", kSrcIp4, kSrcIp6),
                 .apply = [](Draft& d, const Values& v) { d.src_ip = one(v); },
                 .show = [](const RunSpec& s, J& j) { j["frame"]["src_ip"] = s.frame.src_ip.str(); }});
    t.push_back({.name = "dst-ip", .group = "Frames", .value_name = "ADDR",
                 .help = "Destination IP address (outside 198.18.0.0/15 and 2001:2::/48 only with --force)",
                 .default_text = fmt::format("{} (IPv6: {})", kDstIp4, kDstIp6),
                 .apply = [](Draft& d, const Values& v) { d.dst_ip = one(v); },
                 .show = [](const RunSpec& s, J& j) { j["frame"]["dst_ip"] = s.frame.dst_ip.str(); }});
    t.push_back({.name = "src-port", .group = "Frames", .value_name = "PORT", .help = "UDP/TCP source port",
                 .default_text = num(ds.frame.src_port),
                 .apply = [](Draft& d, const Values& v) {
                     d.spec.frame.src_port = static_cast<uint16_t>(parse_uint(one(v), "--src-port", 1, 65535));
                 },
                 .show = [](const RunSpec& s, J& j) { j["frame"]["src_port"] = s.frame.src_port; }});
    t.push_back({.name = "dst-port", .group = "Frames", .value_name = "PORT", .help = "UDP/TCP destination port",
                 .default_text = num(ds.frame.dst_port),
                 .apply = [](Draft& d, const Values& v) {
                     d.spec.frame.dst_port = static_cast<uint16_t>(parse_uint(one(v), "--dst-port", 1, 65535));
                 },
                 .show = [](const RunSpec& s, J& j) { j["frame"]["dst_port"] = s.frame.dst_port; }});
    t.push_back({.name = "ttl", .group = "Frames", .value_name = "N", .help = "IPv4 TTL / IPv6 hop limit",
                 .default_text = num(ds.frame.ttl) + " (connect: 64)",
                 .apply = [](Draft& d, const Values& v) {
                     d.spec.frame.ttl = static_cast<uint8_t>(parse_uint(one(v), "--ttl", 1, 255));
                 },
                 .show = [](const RunSpec& s, J& j) { j["frame"]["ttl"] = s.frame.ttl; }});
    t.push_back({.name = "flows", .group = "Frames", .value_name = "N",
                 .help = "Number of distinct flows (0 = one per TX queue)", .default_text = num(ds.flows),
                 .apply = [](Draft& d, const Values& v) {
                     d.spec.flows = static_cast<uint32_t>(parse_uint(one(v), "--flows", 0, 1u << 20));
                 },
                 .show = [](const RunSpec& s, J& j) { j["flows"] = s.effective_flows(); }});
    t.push_back({.name = "vary", .group = "Frames", .value_name = "LIST",
                 .help = "Fields that differ per flow: any of src-ip,dst-ip,src-port,dst-port",
                 .default_text = flow::vary_str(ds.vary),
                 .apply = [](Draft& d, const Values& v) { d.spec.vary = flow::parse_vary(one(v)); },
                 .show = [](const RunSpec& s, J& j) { j["vary"] = flow::vary_str(s.vary); }});
    t.push_back({.name = "no-signature", .group = "Frames",
                 .help = "Send plain frames: no sequence numbers or timestamps (receivers count every frame)",
                 .kind = K::flag,
                 .apply = [](Draft& d, const Values& v) { d.spec.signature = !parse_bool(one(v), "--no-signature"); },
                 .show = [](const RunSpec& s, J& j) { j["signature"] = s.signature; }});
    t.push_back({.name = "nonce", .group = "Frames", .value_name = "N",
                 .help = "Run identity, 0..4294967295 (default: random), carried in the signature and the IP header. A "
                         "receive-only run needs the sender's",
                 .apply = [](Draft& d, const Values& v) {
                     d.spec.nonce = static_cast<uint32_t>(parse_uint(one(v), "--nonce", 0, 0xffffffffu));
                     d.nonce_given = true;
                 },
                 .show = [](const RunSpec& s, J& j) { j["nonce"] = s.nonce; }});
    t.push_back({.name = "stream", .group = "Frames", .value_name = "KEY=VALUE,...",
                 .help = "A stream of its own (repeatable): the keys are the frame and rate options above and below, "
                         "without dashes (size, proto, ipv6, vlan, vlan-pcp, src-mac, dst-mac, src-ip, dst-ip, "
                         "src-port, dst-port, ttl, flows, vary, rate, pattern, seed, count), and name, share, bursts, "
                         "burst-frames, burst-gap, delay, after, port, pcap, speed and loops (docs/streams.md). The "
                         "frame options given outside --stream are every stream's defaults; without --stream they "
                         "describe the one stream",
                 .kind = K::list,
                 .apply = [](Draft& d, const Values& v) {
                     for (const auto& text : v) d.streams.push_back(parse_stream_text(text));
                 },
                 .show = [](const RunSpec& s, J& j) { j["streams"] = streams_json(s); }});

    // ---- Run ---------------------------------------------------------------------------
    t.push_back({.name = "count", .group = "Run", .value_name = "N",
                 .help = "Packets to send in total (k/M/G suffixes); RX-only: packets to await",
                 .apply = [](Draft& d, const Values& v) { d.spec.count = parse_count(one(v), "--count"); },
                 .show = [](const RunSpec& s, J& j) { j["count"] = opt(s.count); }});
    t.push_back({.name = "rate", .group = "Run", .value_name = "RATE",
                 .help = "Total TX rate over all queues: packets/s (10Mpps, 250kpps, 1000), bits/s at L1 (9.5Gbps: "
                         "preamble, SFD and inter-frame gap included, as RFC 2544 counts) or L2 (9.5Gbps-l2), a "
                         "percentage of the line rate (100%), or max",
                 .default_text = ds.rate.str(),
                 .apply = [](Draft& d, const Values& v) { d.spec.rate = parse_rate(one(v), "--rate"); },
                 .show = [](const RunSpec& s, J& j) {
                     j["rate"] = s.rate.str();
                     j["rate_pps"] = s.rate_pps > 0 ? J(s.rate_pps) : J(nullptr);
                 }});
    t.push_back({.name = "line-rate", .group = "Run", .value_name = "BPS",
                 .help = "The links' L1 bit rate (10G, 25Gbps), for rates in % and reports in % of line rate when the "
                         "ports report no speed (veth, net_null, net_ring); it overrides the ports' own",
                 .apply = [](Draft& d, const Values& v) {
                     d.spec.line_rate_bps = parse_bits_per_second(one(v), "--line-rate");
                     d.line_rate_typed = one(v);
                 },
                 .show = [](const RunSpec& s, J& j) {
                     j["line_rate_bps"] = s.line_rate_bps > 0 ? J(s.line_rate_bps) : J(nullptr);
                 }});
    t.push_back({.name = "pattern", .group = "Run", .value_name = "PATTERN",
                 .help = "How departures are spaced at a --rate: cbr (constant), burst:N (N back-to-back frames, then "
                         "the gap that keeps the average) or poisson (exponential gaps, from --seed)",
                 .default_text = ds.pattern.str(),
                 .apply = [](Draft& d, const Values& v) { d.spec.pattern = parse_pattern(one(v), "--pattern"); },
                 .show = [](const RunSpec& s, J& j) { j["pattern"] = s.pattern.str(); }});
    t.push_back({.name = "catch-up", .group = "Run", .value_name = "none|TIME",
                 .help = "A paced sender behind its schedule (preempted, a slow system call) sends the late frames "
                         "at once, up to this much lateness, so the trial offers exactly its rate; further behind, it "
                         "gives up the oldest slots. Stalls, the longest one, the slots given up and the largest "
                         "catch-up burst are reported. none: no more than two bursts' worth",
                 .default_text = format_duration(ds.catch_up_s),
                 .apply = [](Draft& d, const Values& v) { d.spec.catch_up_s = parse_catch_up(one(v), "--catch-up"); },
                 .show = [](const RunSpec& s, J& j) { j["catch_up_s"] = s.catch_up_s; }});
    t.push_back({.name = "sender-nice", .group = "Run", .value_name = "N|keep",
                 .help = "The nice value paced senders run at (-20..19). -20: another process on a sender's core "
                         "cannot hold it off the CPU for a time slice and bunch its departures, but a spinning "
                         "sender then starves whatever shares its core (a receiver, a DUT). Needs CAP_SYS_NICE or "
                         "RLIMIT_NICE; reported, with a note when refused, and when the kernel's session groups "
                         "leave the senders' whole session at a weaker nice. keep: the process's own",
                 .default_text = ds.sender_nice ? num(*ds.sender_nice) : "keep",
                 .apply = [](Draft& d, const Values& v) { d.spec.sender_nice = parse_nice(one(v), "--sender-nice"); },
                 .show = [](const RunSpec& s, J& j) {
                     j["sender_nice"] = s.sender_nice ? J(*s.sender_nice) : J("keep");
                 }});
    t.push_back({.name = "seed", .group = "Run", .value_name = "N",
                 .help = "Seed of the poisson pattern: the same seed gives the same departures",
                 .default_text = num(ds.seed),
                 .apply = [](Draft& d, const Values& v) { d.spec.seed = parse_uint(one(v), "--seed", 0, UINT64_MAX); },
                 .show = [](const RunSpec& s, J& j) { j["seed"] = s.seed; }});
    t.push_back({.name = "duration", .group = "Run", .value_name = "TIME",
                 .help = "Run time (e.g. 10s, 500ms); with --count and a TX port the count bounds the run",
                 .default_text = fmt::format("{} (reflect: {})", format_duration(ds.duration_s),
                                             format_duration(kReflectDurationS)),
                 .commands = kAll,
                 .apply = [](Draft& d, const Values& v) {
                     d.spec.duration_s = parse_duration(one(v), "--duration");
                     d.duration_given = true;
                 },
                 .show = [](const RunSpec& s, J& j) { j["duration_s"] = s.duration_s; }});
    t.push_back({.name = "trials", .group = "Run", .value_name = "N",
                 .help = "Run the same trial N times in one session (ports opened once), --settle apart; each "
                         "trial starts from a drained, idle device and is reported on its own",
                 .default_text = num(ds.trials),
                 .commands = kRun,
                 .apply = [](Draft& d, const Values& v) {
                     d.spec.trials = static_cast<unsigned>(parse_uint(one(v), "--trials", 1, 100000));
                 },
                 .show = [](const RunSpec& s, J& j) { j["trials"] = s.trials; }});
    t.push_back({.name = "outstanding", .group = "Run", .value_name = "N",
                 .help = "Request/response: keep at most N requests unanswered per queue (1 = ping-pong); the port "
                         "must be both --tx and --rx, facing a reflector",
                 .commands = kRun,
                 .apply = [](Draft& d, const Values& v) {
                     d.spec.outstanding = static_cast<uint32_t>(parse_uint(one(v), "--outstanding", 1, 65535));
                 },
                 .show = [](const RunSpec& s, J& j) {
                     j["outstanding"] = s.outstanding ? J(s.outstanding) : J(nullptr);
                 }});
    t.push_back({.name = "responder", .group = "Run", .value_name = "WHO",
                 .help = "Request/response: who answers: linerate (its reflector, which keeps the IP header) or stack "
                         "(a host's own UDP echo service, which writes its own: the run's identity is then read from "
                         "the signature alone)",
                 .default_text = "linerate", .choices = &responder_choices(), .commands = kRun,
                 .apply = [](Draft& d, const Values& v) {
                     d.spec.stack_responder = parse_choice(responder_choices(), one(v), "--responder") == 1;
                 },
                 .show = [](const RunSpec& s, J& j) { j["responder"] = s.stack_responder ? "stack" : "linerate"; }});
    t.push_back({.name = "response-timeout", .group = "Run", .value_name = "TIME",
                 .help = "Request/response: a request unanswered this long counts as lost",
                 .default_text = format_duration(ds.response_timeout_s),
                 .commands = kRun,
                 .apply = [](Draft& d, const Values& v) {
                     d.spec.response_timeout_s = parse_duration(one(v), "--response-timeout");
                 },
                 .show = [](const RunSpec& s, J& j) { j["response_timeout_s"] = s.response_timeout_s; }});
    t.push_back({.name = "interval", .group = "Run", .value_name = "TIME", .help = "Report interval",
                 .default_text = format_duration(ds.interval_s), .commands = kAll,
                 .apply = [](Draft& d, const Values& v) { d.spec.interval_s = parse_duration(one(v), "--interval"); },
                 .show = [](const RunSpec& s, J& j) { j["interval_s"] = s.interval_s; }});
    t.push_back({.name = "drain", .group = "Run", .value_name = "TIME",
                 .help = "Max wait for in-flight packets after TX ends (connect: for answers and closes; there the "
                         "default is --timeout)",
                 .default_text = format_duration(ds.drain_s),
                 .apply = [](Draft& d, const Values& v) { d.spec.drain_s = parse_duration(one(v), "--drain"); },
                 .show = [](const RunSpec& s, J& j) { j["drain_s"] = s.drain_s; }});
    t.push_back({.name = "settle", .group = "Run", .value_name = "TIME",
                 .help = "Between two trials of a session (--trials, procedures): how long the device under test "
                         "rests after one trial drained before the next starts (RFC 2544 section 23: its buffers "
                         "empty, its policers' and shapers' buckets refill); 0: none",
                 .default_text = format_duration(ds.settle_s),
                 .apply = [](Draft& d, const Values& v) { d.spec.settle_s = parse_settle(one(v), "--settle"); },
                 .show = [](const RunSpec& s, J& j) { j["settle_s"] = s.settle_s; }});
    t.push_back({.name = "stall-timeout", .group = "Run", .value_name = "TIME",
                 .help = "A worker without progress, or a TX queue the device accepts nothing on, for this long "
                         "makes the run invalid",
                 .default_text = format_duration(ds.stall_s),
                 .apply = [](Draft& d, const Values& v) { d.spec.stall_s = parse_duration(one(v), "--stall-timeout"); },
                 .show = [](const RunSpec& s, J& j) { j["stall_s"] = s.stall_s; }});
    t.push_back({.name = "stop-when-idle", .group = "Run",
                 .help = "RX-only: stop once traffic came and then stopped for --drain", .kind = K::flag,
                 .commands = kRun,
                 .apply = [](Draft& d, const Values& v) { d.spec.stop_when_idle = parse_bool(one(v), "--stop-when-idle"); },
                 .show = nullptr});
    t.push_back({.name = "force", .group = "Run",
                 .help = "Allow destinations outside 198.18.0.0/15 and 2001:2::/48", .kind = K::flag,
                 .apply = [](Draft& d, const Values& v) { d.spec.force = parse_bool(one(v), "--force"); },
                 .show = nullptr});

    add_procedure_rows(t, ds);

    // ---- Tuning ------------------------------------------------------------------------
    t.push_back({.name = "burst", .group = "Tuning", .value_name = "N",
                 .help = fmt::format("Packets per burst, 1..{} (0: the backend's default, dpdk {}, afxdp {}; the "
                                     "kernel's batch of live frames {}, at most {})",
                                     kMaxBurst, kDpdkBurst, kAfxdpBurst, kLiveBatch, kMaxLiveBatch),
                 .default_text = num(ds.burst),
                 .apply = [](Draft& d, const Values& v) {
                     d.spec.burst = static_cast<uint32_t>(parse_uint(one(v), "--burst", 0, kMaxBurst));
                 },
                 .show = [](const RunSpec& s, J& j) { j["burst"] = s.burst_size(); }});
    t.push_back({.name = "descriptors", .group = "Tuning", .value_name = "N",
                 .help = fmt::format("Ring size per queue, a power of two {}..{} (0: dpdk {}, afxdp {})", kMinRing,
                                     kMaxRing, kDpdkRing, kAfxdpRing),
                 .default_text = num(ds.descriptors),
                 .apply = [](Draft& d, const Values& v) {
                     const auto& n = one(v);
                     d.spec.descriptors = static_cast<uint32_t>(parse_uint(n, "--descriptors", 0, kMaxRing));
                     const auto r = d.spec.descriptors;
                     if (r && (r < kMinRing || (r & (r - 1))))
                         throw_invalid("--descriptors", n,
                                       fmt::format("a power of two between {} and {}", kMinRing, kMaxRing));
                 },
                 .show = [](const RunSpec& s, J& j) { j["descriptors"] = s.ring_size(); }});
    t.push_back({.name = "mbufs", .group = "Tuning", .value_name = "N",
                 .help = fmt::format("dpdk: mbufs per worker pool (0 = max({}, 4 x descriptors - 1))", kMinMbufs),
                 .default_text = num(ds.dpdk.mbufs),
                 .backends = kDpdk,
                 .apply = [](Draft& d, const Values& v) {
                     d.spec.dpdk.mbufs = static_cast<uint32_t>(parse_uint(one(v), "--mbufs", 0, 1u << 24));
                 },
                 .show = [](const RunSpec& s, J& j) { j["mbufs"] = s.effective_mbufs(); }});

    // ---- Output ------------------------------------------------------------------------
    t.push_back({.name = "json", .group = "Output", .value_name = "FILE", .help = "Write the full JSON report to FILE",
                 .commands = kAll,
                 .apply = [](Draft& d, const Values& v) { d.spec.json_path = one(v); }, .show = nullptr});
    t.push_back({.name = "quiet", .cli = "-q,--quiet", .group = "Output", .help = "No live per-interval lines", .kind = K::flag,
                 .commands = kAll,
                 .apply = [](Draft& d, const Values& v) { d.spec.quiet = parse_bool(one(v), "--quiet"); },
                 .show = nullptr});
    t.push_back({.name = "json-stream", .group = "Output", .value_name = "FILE",
                 .help = "JSON lines as the run goes: one object per interval (flushed), per trial, and a last one "
                         "with the whole report; - for stdout (the console output then goes to stderr)",
                 .apply = [](Draft& d, const Values& v) { d.spec.json_stream_path = one(v); }, .show = nullptr});
    t.push_back({.name = "csv", .group = "Output", .value_name = "FILE",
                 .help = "The per-interval series as CSV; procedures also write FILE-trials.csv (every trial) and "
                         "FILE-sizes.csv (their table)",
                 .apply = [](Draft& d, const Values& v) { d.spec.csv_path = one(v); }, .show = nullptr});
    t.push_back({.name = "metrics", .group = "Output", .value_name = "[ADDR:]PORT",
                 .help = "Serve Prometheus metrics at http://ADDR:PORT/metrics while running (ADDR defaults to "
                         "127.0.0.1: loopback only unless told otherwise)",
                 .apply = [](Draft& d, const Values& v) {
                     (void)parse_listen(one(v), "--metrics");  // refused here, before anything opens
                     d.spec.metrics_listen = one(v);
                 },
                 .show = nullptr});
    t.push_back({.name = "capture", .group = "Output", .value_name = "FILE",
                 .help = "Write the first received frames to FILE as pcap (Wireshark, tshark); copied off the "
                         "counting path, the counts do not change",
                 .apply = [](Draft& d, const Values& v) { d.spec.capture_path = one(v); }, .show = nullptr});
    t.push_back({.name = "capture-count", .group = "Output", .value_name = "N",
                 .help = "Frames the --capture file holds, over the whole run",
                 .default_text = num(ds.capture_count),
                 .apply = [](Draft& d, const Values& v) {
                     d.spec.capture_count = static_cast<uint32_t>(parse_uint(one(v), "--capture-count", 1, 1000000));
                 },
                 .show = nullptr});
    t.push_back({.name = "capture-filter", .group = "Output", .value_name = "WHICH",
                 .help = "Which frames --capture keeps: received ones (all, ours: test frames of this run, foreign or "
                         "malformed: the ones to look at), or sent: the frames as they left (socket engines)",
                 .default_text = std::string(capture_filter_choices().name_of(int(ds.capture_filter))),
                 .choices = &capture_filter_choices(),
                 .apply = [](Draft& d, const Values& v) {
                     d.spec.capture_filter =
                         stats::CaptureFilter(parse_choice(capture_filter_choices(), one(v), "--capture-filter"));
                 },
                 .show = nullptr});
    t.push_back({.name = "junit", .group = "Output", .value_name = "FILE",
                 .help = "Write the checks (one per threshold, per frame size) as JUnit XML to FILE",
                 .apply = [](Draft& d, const Values& v) { d.spec.junit_path = one(v); }, .show = nullptr});

    // ---- reflect only ------------------------------------------------------------------
    t.push_back({.name = "port", .group = "Reflector", .value_name = "PORT",
                 .help = "Interface (xdp, afxdp) or DPDK port to reflect on (required)", .commands = kReflect,
                 .apply = [](Draft& d, const Values& v) {
                     if (one(v).empty()) throw UsageError("--port: empty port name");
                     d.port = one(v);
                 }});
    t.push_back({.name = "reflect-backend", .cli = "--backend", .group = "Reflector", .value_name = "NAME",
                 .help = "xdp (linerate's XDP program reflects in the driver, no user space), afxdp or dpdk (in "
                         "user space, one worker per queue)",
                 .default_text = std::string(to_string(def.reflect_backend)), .choices = &reflect_backend_choices(),
                 .commands = kReflect,
                 .apply = [](Draft& d, const Values& v) {
                     d.reflect_backend = ReflectBackend(parse_choice(reflect_backend_choices(), one(v), "--backend"));
                 }});
    t.push_back({.name = "queues", .group = "Reflector", .value_name = "N",
                 .help = "afxdp/dpdk: queues to serve, one worker each", .default_text = num(def.queues),
                 .commands = kReflect,
                 .apply = [](Draft& d, const Values& v) {
                     d.queues = static_cast<uint16_t>(parse_uint(one(v), "--queues", 1, kMaxQueues));
                 }});
    t.push_back({.name = "reflect-proto", .cli = "--proto", .group = "Reflector", .value_name = "PROTO",
                 .help = "Protocols of the test frames: udp, tcp or any",
                 .default_text = std::string(reflect_proto_choices().name_of(
                     def.any_proto ? int(ReflectProto::any) : int(def.spec.frame.l4))),
                 .choices = &reflect_proto_choices(), .commands = kReflect,
                 .apply = [](Draft& d, const Values& v) {
                     const auto p = ReflectProto(parse_choice(reflect_proto_choices(), one(v), "--proto"));
                     d.any_proto = p == ReflectProto::any;
                     if (!d.any_proto) d.spec.frame.l4 = packet::L4(int(p));
                 }});
    t.push_back({.name = "dst-ports", .group = "Reflector", .value_name = "LO[-HI]",
                 .help = "Destination port or range of the test frames", .default_text = num(ds.frame.dst_port),
                 .commands = kReflect,
                 .apply = [](Draft& d, const Values& v) {
                     const auto& s = one(v);
                     const auto dash = s.find('-');
                     const std::string_view sv(s);
                     const auto lo = parse_uint(sv.substr(0, dash), "--dst-ports", 1, 65535, {s, "port"});
                     const auto hi = dash == std::string::npos
                                         ? lo
                                         : parse_uint(sv.substr(dash + 1), "--dst-ports", 1, 65535, {s, "port"});
                     if (hi < lo) throw_invalid("--dst-ports", s, "the range ends before it starts");
                     d.spec.frame.dst_port = static_cast<uint16_t>(lo);
                     d.dst_port_hi = static_cast<uint16_t>(hi);
                 }});
    add_serve_rows(t);
    add_impair_rows(t);
    add_connect_rows(t);
    return t;
}
#pragma GCC diagnostic pop

}  // namespace

void apply_all(Draft& d, const OptionValues& given, Command cmd, const OptionOrigins* origins) {
    for (const auto& [name, vals] : given) {
        const OptionDef* o = nullptr;
        for (const auto& row : option_table())
            if (row.name == name && row.applies_to(cmd)) o = &row;
        if (o) continue;
        const auto from = origins ? origins->find(name) : OptionOrigins::const_iterator{};
        const auto prefix = origins && from != origins->end() ? from->second + ": " : std::string();
        if (find_option(name))
            throw OptionError(fmt::format("{}--{} does not apply to {}", prefix, name,
                                          cmd == Command::run       ? "run"
                                          : cmd == Command::reflect ? "reflect"
                                          : cmd == Command::serve   ? "serve"
                                          : cmd == Command::impair  ? "impair"
                                          : cmd == Command::connect ? "connect"
                                                                    : "the procedures"));
        throw OptionError(fmt::format("{}unknown option \"{}\"", prefix, name));
    }
    for (const auto& row : option_table()) {
        if (!row.applies_to(cmd)) continue;
        const auto it = given.find(row.name);
        if (it == given.end() || it->second.empty()) continue;
        const auto from = origins ? origins->find(row.name) : OptionOrigins::const_iterator{};
        if (!origins || from == origins->end()) {
            row.apply(d, it->second);
            continue;
        }
        try {
            row.apply(d, it->second);
        } catch (const UsageError& e) {
            throw OptionError(fmt::format("{}: {}", from->second, e.what()));
        }
    }
}

// Options given that the chosen backend does not honour are refused, never ignored.
void check_backend_support(const OptionValues& given, BackendKind b, Command cmd) {
    for (const auto& row : option_table()) {
        if (!row.applies_to(cmd) || (row.backends & backend_bit(b))) continue;
        const auto it = given.find(row.name);
        if (it == given.end() || it->second.empty()) continue;
        std::string who;
        for (auto k : {BackendKind::dpdk, BackendKind::afxdp})
            if (row.backends & backend_bit(k)) who += std::string(who.empty() ? "" : " or ") + std::string(to_string(k));
        throw UsageError(fmt::format("{} applies to the {} backend only (this run uses {})",
                                     row.kind == OptionDef::Kind::positional ? std::string("EAL arguments after --")
                                                                             : "--" + std::string(row.name),
                                     who, to_string(b)));
    }
}


void resolve_frame(Draft& d, std::vector<std::string>& notes) {
    auto& f = d.spec.frame;
    f.src_ip = packet::parse_ip(d.src_ip ? *d.src_ip : std::string(d.ipv6 ? kSrcIp6 : kSrcIp4), "--src-ip");
    f.dst_ip = packet::parse_ip(d.dst_ip ? *d.dst_ip : std::string(d.ipv6 ? kDstIp6 : kDstIp4), "--dst-ip");
    if (d.ipv6 && (!f.src_ip.v6 || !f.dst_ip.v6))
        throw UsageError("--ipv6 was given but --src-ip/--dst-ip are IPv4 addresses");
    if (f.src_ip.v6 != f.dst_ip.v6)
        throw UsageError(fmt::format("--src-ip {} and --dst-ip {} are of different address families",
                                     d.src_ip.value_or(f.src_ip.str()), d.dst_ip.value_or(f.dst_ip.str())));
    const unsigned min = packet::min_frame_size(f);
    if (!d.size_given) {
        d.spec.size = SizeSpec::fixed_size(min);
    } else {
        std::string note;
        d.spec.size = d.size.at_least(min, "size", note);
        if (!note.empty()) notes.push_back(note);
    }
    f.frame_size = d.spec.size.smallest();
}

namespace {

void finalize(Draft& d) {
    auto& s = d.spec;
    auto& f = s.frame;
    resolve_frame(d, s.notes);
    s.streams = build_streams(d, nullptr);
    auto& sizes = s.procedure.sizes;
    if (!sizes.empty() && d.size_given) throw UsageError("--size and --sizes: give one of them");
    for (unsigned size : sizes)  // as given with --sizes (the frame's own --size is checked when it is built)
        if (size < packet::min_frame_size(f))
            throw_invalid("--sizes", s.procedure.sizes_typed,
                          fmt::format("{} bytes is smaller than this frame kind's smallest ({} bytes)", size,
                                      packet::min_frame_size(f)));
    // A procedure over a stream mix (or a size distribution) has one row: the mix, size 0.
    const bool mix = !s.single_fixed_stream() && s.procedure.kind != Procedure::run;
    if (mix && !sizes.empty())
        throw UsageError("--sizes with a stream mix: the mix's sizes are its streams' own; run one procedure per mix");
    if (mix) sizes = {0};
    if (s.procedure.kind != Procedure::run && sizes.empty()) sizes = {f.frame_size};
    if (!sizes.empty() && !mix) {
        f.frame_size = sizes.front();
        s.max_frame_size = std::max(s.max_frame_size, sizes.back());
    }
    if (const auto physical = spec_ceiling(0, s.tx.size()); s.line_rate_bps > physical.bps)
        throw_invalid("--line-rate", d.line_rate_typed, "more than " + physical.source);
    s.nonce_given = d.nonce_given;
    if (!d.nonce_given) s.nonce = static_cast<uint32_t>(std::random_device{}());
    // The count bounds a TX run; the watchdog catches a stuck device.
    if (!d.duration_given && s.count && !s.tx.empty()) s.duration_s = 3600;
}

}  // namespace

const std::vector<OptionDef>& option_table() {
    static const std::vector<OptionDef> t = make_table();
    return t;
}

const OptionDef* find_option(std::string_view name) {
    for (const auto& row : option_table())
        if (row.name == name) return &row;
    return nullptr;
}

RunSpec build_run_spec(const OptionValues& given, Procedure kind, const OptionOrigins* origins,
                       const std::vector<StreamInput>* streams) {
    Draft d;
    const auto cmd = kind == Procedure::run ? Command::run : Command::procedure;
    d.spec.procedure.kind = kind;
    apply_all(d, given, cmd, origins);
    if (d.streams.empty() && streams) d.streams = *streams;
    check_backend_support(given, d.spec.backend, cmd);
    // The searches size their trials themselves (load x trial duration).
    if (d.spec.count && kind != Procedure::run && kind != Procedure::sweep && kind != Procedure::back_to_back)
        throw UsageError(fmt::format("{} runs trials of a duration (--trial-duration), not of a --count",
                                     to_string(kind)));
    finalize(d);
    d.spec.validate();
    return d.spec;
}

Draft build_reflect_draft(const OptionValues& given) {
    Draft d;
    apply_all(d, given, Command::reflect);
    if (d.port.empty()) throw UsageError("reflect needs --port PORT");
    const bool dpdk = d.reflect_backend == ReflectBackend::dpdk;
    check_backend_support(given, dpdk ? BackendKind::dpdk : BackendKind::afxdp, Command::reflect);
    if (d.reflect_backend == ReflectBackend::xdp) return d;
    // In user space the reflector is the run engine with the reflect role: one worker per
    // queue receives and sends on the same port.
    auto& s = d.spec;
    s.backend = dpdk ? BackendKind::dpdk : BackendKind::afxdp;
    s.tx = s.rx = {PortQueues{d.port, d.queues}};
    s.reflect = true;
    s.signature = false;  // nothing of its own is sent
    s.force = true;       // the addresses are the sender's, swapped
    if (!d.duration_given) s.duration_s = kReflectDurationS;
    if (d.dst_port_hi > s.frame.dst_port) {  // the receive program steers the whole range
        s.flows = d.dst_port_hi - s.frame.dst_port + 1u;
        s.vary = flow::vary_dst_port;
    }
    finalize(d);
    s.nonce = 0;
    s.nonce_given = true;
    s.validate();
    return d;
}

ServeSpec build_serve_spec(const OptionValues& given) {
    Draft d;
    apply_all(d, given, Command::serve);
    check_backend_support(given, d.spec.backend, Command::serve);
    const auto& t = d.serve;
    if (t.tls_cert.empty() != t.tls_key.empty()) throw UsageError("--tls-cert and --tls-key go together");
    if (t.tls_self_signed && !t.tls_cert.empty())
        throw UsageError("--tls makes its own certificate: give --tls or --tls-cert with --tls-key, not both");
    auto& s = d.spec;
    resolve_frame(d, s.notes);
    if (const auto physical = spec_ceiling(0, 1); s.line_rate_bps > physical.bps)
        throw_invalid("--line-rate", d.line_rate_typed, "more than " + physical.source);
    s.nonce_given = d.nonce_given;
    if (!d.nonce_given) s.nonce = static_cast<uint32_t>(std::random_device{}());
    return {d.serve, s};
}



nlohmann::json spec_json(const RunSpec& s) {
    J j = J::object();
    const auto cmd = s.impair ? Command::impair : s.connect ? Command::connect : s.procedure.kind == Procedure::run ? Command::run : Command::procedure;
    for (const auto& row : option_table())
        if (row.show && row.applies_to(cmd)) row.show(s, j);
    j["reflect"] = s.reflect;
    return j;
}

std::vector<ShownOption> shown_options() {
    std::vector<ShownOption> out;
    RunSpec s;
    s.impair.emplace();  // so the rows of impair and connect show their keys too
    s.connect.emplace();
    for (const auto& row : option_table()) {
        if (!row.show) continue;
        J j = J::object();
        row.show(s, j);
        ShownOption o{row.kind == OptionDef::Kind::positional ? "-- " + std::string(row.value_name)
                                                              : row.cli_names().substr(row.cli_names().rfind(',') + 1),
                      std::string(row.group), {}};
        for (const auto& [k, v] : j.items()) {
            if (!v.is_object()) {
                o.keys.push_back(k);
                continue;
            }
            for (const auto& [k2, v2] : v.items()) o.keys.push_back(k + "." + k2);
        }
        out.push_back(std::move(o));
    }
    return out;
}

std::string options_markdown(Command c) {
    std::string out;
    std::string_view group;
    for (const auto& row : option_table()) {
        if (!row.applies_to(c)) continue;
        // The procedures take run's options too: their page lists only their own.
        if (c == Command::procedure && row.applies_to(Command::run)) continue;
        if (row.group != group) {
            group = row.group;
            out += fmt::format("\n**{}**\n\n| option | default | backends | meaning |\n|---|---|---|---|\n", group);
        }
        std::string name;
        if (row.kind == OptionDef::Kind::positional) {
            name = "`-- " + std::string(row.value_name) + "`";
        } else {
            name = "`";
            for (const char ch : row.cli_names()) name += ch == ',' ? std::string("`, `") : std::string(1, ch);
            name += (row.value_name.empty() ? "" : " " + std::string(row.value_name)) + "`";
        }
        std::string backends = "all";
        if (row.backends != kAllBackends) {
            backends.clear();
            for (auto k : {BackendKind::dpdk, BackendKind::afxdp})
                if (row.backends & backend_bit(k)) backends += std::string(backends.empty() ? "" : ", ") + std::string(to_string(k));
        }
        std::string help;
        for (const char ch : row.help) help += ch == '|' ? std::string("\\|") : std::string(1, ch);
        out += fmt::format("| {}{} | {} | {} | {} |\n", name, row.kind == OptionDef::Kind::list ? " (repeatable)" : "",
                           row.default_text.empty() ? "" : std::string(row.default_text), backends, help);
    }
    return out;
}

}  // namespace lr::spec
