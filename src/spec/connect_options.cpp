// The option table's rows for `linerate connect` (TCP connection rate against a real listener),
// which other rows it shares (the backend, its tuning, the frame's addresses, --dst-port as
// the listener's port, --rate as SYNs per second, the run length, the outputs), and the checks
// of its spec, made before anything is sent.
#include <bit>

#include "spec/option_rows.h"
#include "packet/tcp_segment.h"
#include "spec/rate.h"
#include "worker/handshake_window.h"

namespace lr::spec::option_rows {
namespace {

constexpr std::string_view kSharedWithConnect[] = {
    "backend", "xdp-mode", "xsk-mode", "cpus", "ring-pair", "eal", "force", "interval", "duration", "burst", "descriptors", "mbufs", "json", "json-stream", "metrics", "quiet", "stall-timeout",
    "ipv6", "vlan", "vlan-pcp", "src-mac", "dst-mac", "src-ip", "dst-ip", "dst-port", "ttl", "drain"};

}  // namespace

#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmissing-field-initializers"

void add_connect_rows(std::vector<OptionDef>& t) {
    for (auto& row : t)
        for (auto n : kSharedWithConnect)
            if (row.name == n) row.commands |= kConnect;
    const ConnectSpec def;
    t.push_back({.name = "connect-port", .cli = "--port", .group = "Connections", .value_name = "PORT",
                 .help = "The interface (afxdp) or DPDK port facing the listener (required)", .commands = kConnect,
                 .apply = [](Draft& d, const Values& v) {
                     if (one(v).empty()) throw UsageError("--port: empty port name");
                     d.connect.port = one(v);
                 },
                 .show = [](const RunSpec& s, J& j) {
                     if (s.connect) j["connect"]["port"] = s.connect->port;
                 }});
    t.push_back({.name = "connect-queues", .cli = "--queues", .group = "Connections", .value_name = "N",
                 .help = "Queues of --port, one worker each; the device must return each answer on the queue that "
                         "sent its SYN",
                 .default_text = "1", .commands = kConnect,
                 .apply = [](Draft& d, const Values& v) {
                     d.queues = static_cast<uint16_t>(parse_uint(one(v), "--queues", 1, 1u << worker::kQueueBits));
                 },
                 .show = [](const RunSpec& s, J& j) {
                     if (s.connect) j["connect"]["queues"] = s.connect->queues;
                 }});
    t.push_back({.name = "connect-rate", .cli = "--rate", .group = "Connections", .value_name = "RATE",
                 .help = "SYNs per second over all queues (10k, 500), or max: as fast as --outstanding handshakes "
                         "in flight allow",
                 .default_text = "max", .commands = kConnect,
                 .apply = [](Draft& d, const Values& v) {
                     const auto r = parse_rate(one(v), "--rate");
                     if (r.unit != RateSpec::Unit::pps && r.unit != RateSpec::Unit::max)
                         throw_invalid("--rate", one(v), "connections per second (e.g. 10k) or max");
                     d.spec.rate = r;
                 },
                 .show = [](const RunSpec& s, J& j) {
                     if (s.connect) j["connect"]["rate"] = s.rate.str();
                 }});
    t.push_back({.name = "connect-count", .cli = "--count", .group = "Connections", .value_name = "N",
                 .help = "Connections to attempt in all (k/M suffixes); the run then lasts until they are answered "
                         "or timed out",
                 .commands = kConnect,
                 .apply = [](Draft& d, const Values& v) { d.spec.count = parse_count(one(v), "--count"); },
                 .show = [](const RunSpec& s, J& j) {
                     if (s.connect) j["connect"]["count"] = opt(s.count);
                 }});
    t.push_back({.name = "close", .group = "Connections", .value_name = "HOW",
                 .help = "How each answered handshake ends: rst (ACK then RST: the connection opens and is reset), "
                         "fin (FIN-ACK: it opens, we close it and acknowledge the listener's FIN) or abort (RST: "
                         "no connection opens)",
                 .default_text = std::string(to_string(def.close)), .choices = &close_choices(),
                 .commands = kConnect,
                 .apply = [](Draft& d, const Values& v) {
                     d.connect.close = CloseMode(parse_choice(close_choices(), one(v), "--close"));
                 },
                 .show = [](const RunSpec& s, J& j) {
                     if (s.connect) j["connect"]["close"] = std::string(to_string(s.connect->close));
                 }});
    t.push_back({.name = "src-ports", .group = "Connections", .value_name = "LO-HI",
                 .help = "The connections' source ports, taken in turn (each connection a 4-tuple of its own while "
                         "in flight)",
                 .default_text = fmt::format("{}-{}", def.src_port_lo, def.src_port_hi), .commands = kConnect,
                 .apply = [](Draft& d, const Values& v) {
                     const auto& s = one(v);
                     const auto dash = s.find('-');
                     const auto lo = parse_uint(s.substr(0, dash), "--src-ports", 1, 65535);
                     const auto hi = dash == std::string::npos ? lo : parse_uint(s.substr(dash + 1), "--src-ports", 1, 65535);
                     if (hi < lo) throw_invalid("--src-ports", s, "LO-HI with LO at most HI");
                     d.connect.src_port_lo = static_cast<uint16_t>(lo);
                     d.connect.src_port_hi = static_cast<uint16_t>(hi);
                 },
                 .show = [](const RunSpec& s, J& j) {
                     if (s.connect) j["connect"]["src_ports"] = {s.connect->src_port_lo, s.connect->src_port_hi};
                 }});
    t.push_back({.name = "connect-outstanding", .cli = "--outstanding", .group = "Connections", .value_name = "N",
                 .help = "Handshakes in flight at most per queue (--close fin: connections not yet closed too); "
                         "with --rate max the connection rate is what N handshakes in flight carry",
                 .default_text = std::to_string(def.outstanding), .commands = kConnect,
                 .apply = [](Draft& d, const Values& v) {
                     d.connect.outstanding =
                         static_cast<uint32_t>(parse_uint(one(v), "--outstanding", 1, worker::kMaxWindow));
                     d.connect.outstanding_given = true;
                 },
                 .show = [](const RunSpec& s, J& j) {
                     if (s.connect) j["connect"]["outstanding"] = s.connect->outstanding;
                 }});
    t.push_back({.name = "connect-timeout", .cli = "--timeout", .group = "Connections", .value_name = "TIME",
                 .help = "A SYN unanswered this long has timed out; with --close fin, also how long the listener may "
                         "take to close after the handshake",
                 .default_text = format_duration(def.close_timeout_s), .commands = kConnect,
                 .apply = [](Draft& d, const Values& v) {
                     d.spec.response_timeout_s = parse_duration(one(v), "--timeout");
                     d.connect.close_timeout_s = d.spec.response_timeout_s;
                 },
                 .show = [](const RunSpec& s, J& j) {
                     if (s.connect) j["connect"]["timeout_s"] = s.response_timeout_s;
                 }});
    t.push_back({.name = "mss", .group = "Connections", .value_name = "BYTES",
                 .help = "The MSS option of the SYNs", .default_text = std::to_string(def.mss), .commands = kConnect,
                 .apply = [](Draft& d, const Values& v) {
                     d.connect.mss = static_cast<uint16_t>(parse_uint(one(v), "--mss", 88, 65535));
                 },
                 .show = [](const RunSpec& s, J& j) {
                     if (s.connect) j["connect"]["mss"] = s.connect->mss;
                 }});
}

#pragma GCC diagnostic pop

}  // namespace lr::spec::option_rows

namespace lr::spec {

namespace {
constexpr uint8_t kConnectTtl = 64;  // a listener may be routers away
}  // namespace

void RunSpec::validate_connect() const {
    const auto& c = *connect;
    if (c.port.empty()) throw UsageError("connect needs --port PORT: the port facing the listener");
    const auto& f = frame;
    if (!force) {
        if (!packet::in_benchmark_range(f.dst_ip))
            throw UsageError(fmt::format("--dst-ip {} is outside the benchmarking ranges 198.18.0.0/15 and 2001:2::/48; "
                                         "pass --force to connect there anyway",
                                         f.dst_ip.str()));
        if (f.dst_mac.is_multicast())
            throw UsageError(fmt::format("--dst-mac {} is a multicast/broadcast address: give the listener's (or its "
                                         "router's) MAC address",
                                         f.dst_mac.str()));
    }
    if (f.dst_port == 0) throw UsageError("--dst-port 0: give the port the listener listens on");
    // No two connections in flight may share a 4-tuple: the window of every queue fits in the
    // range of source ports.
    const uint64_t ports = c.src_port_hi - c.src_port_lo + 1u;
    const uint64_t window = std::bit_ceil(c.outstanding);
    if (window * c.queues > ports)
        throw UsageError(fmt::format("--outstanding {} (a window of {} connections) on {} queue{} needs {} source ports; "
                                     "--src-ports {}-{} has {}: widen the range or lower --outstanding",
                                     c.outstanding, window, c.queues, c.queues == 1 ? "" : "s", window * c.queues,
                                     c.src_port_lo, c.src_port_hi, ports));
    if (c.queues > (1u << worker::kQueueBits))
        throw UsageError(fmt::format("--queues {}: connect runs on at most {} queues", c.queues, 1u << worker::kQueueBits));
    if (!(response_timeout_s > 0)) throw UsageError("--timeout must be more than 0");
}

RunSpec build_connect_spec(const OptionValues& given) {
    Draft d;
    apply_all(d, given, Command::connect);
    check_backend_support(given, d.spec.backend, Command::connect);
    auto& s = d.spec;
    resolve_frame(d, s.notes);
    if (!given.count("ttl")) s.frame.ttl = kConnectTtl;  // a listener may be routers away
    ConnectSpec c = d.connect;
    c.queues = d.queues;
    if (!given.count("connect-timeout")) s.response_timeout_s = c.close_timeout_s;
    s.tx = s.rx = {PortQueues{c.port, c.queues}};
    s.signature = false;  // SYNs of a real handshake: the listener answers them, nothing reads a signature
    s.nonce_given = true;
    if (!given.count("drain")) s.drain_s = s.response_timeout_s;  // the answers to the last SYNs
    if (!d.duration_given && s.count) s.duration_s = 3600;  // the count bounds the run
    // The buffers hold a SYN or the longest reply (IPv6 with a VLAN tag).
    s.max_frame_size = std::max<unsigned>(s.max_frame_size, packet::kMaxReplyLen + packet::kFcsLen);
    s.connect = std::move(c);
    s.validate();
    return s;
}

}  // namespace lr::spec
