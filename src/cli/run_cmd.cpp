#include "cli/run_cmd.h"

#include <fmt/format.h>
#include <random>
#include <sched.h>

#include "util/error.h"

namespace lr::cli {

CLI::App* add_run_command(CLI::App& app, RunOptions& o) {
    auto* run = app.add_subcommand("run", "Transmit and/or receive-and-measure on DPDK ports or kernel interfaces");
    run->footer(R"(Ports: DPDK device names or ids (--backend dpdk), or interface names (--backend afxdp),
with an optional queue count: PORT or PORT,queues=N. Each queue gets its own pinned worker.
EAL arguments go after "--" and are passed to DPDK unchanged; linerate adds --in-memory,
--no-telemetry and an lcore map unless you give your own.
Every frame with room is signed (stream, sequence, timestamp, run nonce): receivers report
loss, reordering, duplicates, latency and jitter per stream (docs/measurement.md).

Examples:
  transmit 10M 64-byte UDP frames into a null device:
    linerate run --tx net_null0 --count 10M -- --vdev=net_null0 --no-pci
  TX on one ring port, RX on its pair, 2 queues each, for 5 seconds:
    linerate run --ring-pair ringA,ringB --tx ringA,queues=2 --rx ringB,queues=2 --duration 5s -- --no-pci
  DPDK's net_af_xdp on a veth (inside its namespace):
    linerate run --tx net_af_xdp0 --duration 10s -- --vdev=net_af_xdp0,iface=veth0 --no-pci
  plain kernel, AF_XDP sockets, send on veth0 and measure on veth1:
    linerate run --backend afxdp --tx veth0 --rx veth1 --count 1M --rate 500k
  ping-pong transactions through a reflector (far side: linerate reflect --port IF):
    linerate run --backend afxdp --tx veth0 --rx veth0 --outstanding 1 --count 100k

The run is always finite: --count, or --duration (default 10s).
Exit codes: 0 pass, 1 threshold failed, 2 usage error, 3 environment error, 4 invalid run.)");
    auto* g = "Ports";
    run->add_option("--tx", o.tx, "Transmit on PORT[,queues=N] (repeatable)")->group(g)->type_name("PORT");
    run->add_option("--rx", o.rx, "Receive and count on PORT[,queues=N] (repeatable)")->group(g)->type_name("PORT");
    run->add_option("--backend", o.backend, "Packet I/O: dpdk (ports are DPDK devices) or afxdp (ports are "
                                            "kernel interfaces, AF_XDP sockets, no DPDK or hugepages)")
        ->group(g)->capture_default_str();
    run->add_option("--xdp-mode", o.xdp_mode, "afxdp: attach the XDP receive program native, skb, or auto")
        ->group(g)->capture_default_str();
    run->add_option("--xsk-mode", o.xsk_mode, "afxdp: AF_XDP sockets in copy, zero-copy, or auto mode")
        ->group(g)->capture_default_str();
    run->add_option("--rx-mode", o.rx_mode,
                    "afxdp: socket (frames to user space: full measurements) or xdp (counting sink in the driver: "
                    "frames and sequence gaps per stream, no latency)")
        ->group(g)->capture_default_str();
    run->add_option("--cpus", o.cpus, "Worker CPUs in worker order (TX ports' queues first), e.g. 1,0")
        ->group(g)->type_name("LIST");
    run->add_option("--ring-pair", o.ring_pairs,
                    "Create two in-memory ring ports A and B wired to each other (A's TX queue i is B's RX "
                    "queue i; up to 16 queues)")
        ->group(g)->type_name("A,B");
    run->add_option("eal", o.eal, "EAL arguments, after --")->group(g);

    g = "Frames";
    run->add_option("--size", o.size,
                    "Frame size in bytes incl. FCS, 64..9000, or min: the smallest frame of the kind "
                    "(64 for IPv4, 66 IPv6/UDP, 78 IPv6/TCP)")
        ->group(g)->capture_default_str();
    run->add_option("--proto", o.proto, "udp or tcp (TCP frames are SYNs)")->group(g)->capture_default_str();
    run->add_flag("--ipv6", o.ipv6, "IPv6 (default addresses 2001:2::1 -> 2001:2::2)")->group(g);
    run->add_option("--vlan", o.vlan, "Add an 802.1Q tag with this VLAN id (0..4094)")->group(g);
    run->add_option("--vlan-pcp", o.vlan_pcp, "802.1Q priority (0..7)")->group(g)->capture_default_str();
    run->add_option("--src-mac", o.src_mac, "Source MAC")->group(g)->capture_default_str();
    run->add_option("--dst-mac", o.dst_mac, "Destination MAC")->group(g)->capture_default_str();
    run->add_option("--src-ip", o.src_ip, "Source IP (default 198.18.0.1 or 2001:2::1)")->group(g);
    run->add_option("--dst-ip", o.dst_ip, "Destination IP (default 198.18.0.2 or 2001:2::2)")->group(g);
    run->add_option("--src-port", o.src_port, "UDP/TCP source port")->group(g)->capture_default_str();
    run->add_option("--dst-port", o.dst_port, "UDP/TCP destination port")->group(g)->capture_default_str();
    run->add_option("--ttl", o.ttl, "IPv4 TTL / IPv6 hop limit")->group(g)->capture_default_str();
    run->add_option("--flows", o.flows, "Number of distinct flows (0 = one per TX queue)")->group(g)->capture_default_str();
    run->add_flag("--no-signature", o.no_signature,
                  "Send plain frames: no sequence numbers or timestamps (receivers count every frame)")
        ->group(g);
    run->add_option("--nonce", o.nonce,
                    "Run identity in the signature, 0..65535 (default: random). A receive-only run needs the "
                    "sender's")
        ->group(g);
    run->add_option("--vary", o.vary, "Fields that differ per flow: src-ip,dst-ip,src-port,dst-port")
        ->group(g)->capture_default_str();

    g = "Run";
    run->add_option("--count", o.count, "Packets to send in total (k/M/G suffixes); RX-only: packets to await")->group(g);
    run->add_option("--rate", o.rate, "Total TX rate in packets/s over all queues (k/M/G suffixes); default: as "
                                      "fast as possible")->group(g);
    run->add_option("--outstanding", o.outstanding,
                    "Request/response: keep at most N requests unanswered per queue (1 = ping-pong); the port "
                    "must be both --tx and --rx, facing a reflector")
        ->group(g);
    run->add_option("--response-timeout", o.response_timeout,
                    "Request/response: a request unanswered this long counts as lost")
        ->group(g)->capture_default_str();
    run->add_option("--duration", o.duration, "Run time (e.g. 10s, 500ms; default 10s)")->group(g);
    run->add_option("--interval", o.interval, "Report interval")->group(g)->capture_default_str();
    run->add_option("--drain", o.drain, "Max wait for in-flight packets after TX ends")->group(g)->capture_default_str();
    run->add_option("--stall-timeout", o.stall, "A worker without progress this long makes the run invalid")
        ->group(g)->capture_default_str();
    run->add_flag("--stop-when-idle", o.stop_when_idle, "RX-only: stop once traffic came and then stopped for --drain")
        ->group(g);
    run->add_option("--max-loss", o.max_loss, "Fail (exit 1) when loss exceeds this percentage")->group(g);
    run->add_flag("--force", o.force, "Allow destinations outside 198.18.0.0/15 and 2001:2::/48")->group(g);

    g = "Tuning";
    run->add_option("--burst", o.burst, "Packets per burst (0: dpdk 64, afxdp 32)")->group(g)->capture_default_str();
    run->add_option("--descriptors", o.descriptors, "Ring size per queue (0 = dpdk 1024, afxdp 4096)")->group(g)->capture_default_str();
    run->add_option("--mbufs", o.mbufs, "Mbufs per worker pool (DPDK; 0 = max(8191, 4 x descriptors - 1))")->group(g)->capture_default_str();

    g = "Output";
    run->add_option("--json", o.json, "Write the full JSON report to FILE")->group(g)->type_name("FILE");
    run->add_flag("-q,--quiet", o.quiet, "No live per-interval lines")->group(g);
    return run;
}

spec::RunSpec to_spec(const RunOptions& o) {
    using spec::parse_uint;
    spec::RunSpec s;
    s.backend = o.backend;
    s.xdp_mode = o.xdp_mode;
    s.xsk_mode = o.xsk_mode;
    s.rx_mode = o.rx_mode;
    if (!o.cpus.empty()) {
        size_t pos = 0;
        while (pos <= o.cpus.size()) {
            size_t comma = o.cpus.find(',', pos);
            if (comma == std::string::npos) comma = o.cpus.size();
            s.cpus.push_back(static_cast<int>(parse_uint(o.cpus.substr(pos, comma - pos), "--cpus", 0, CPU_SETSIZE - 1)));
            pos = comma + 1;
        }
    }
    for (const auto& t : o.tx) s.tx.push_back(spec::parse_port_queues(t, "--tx"));
    for (const auto& r : o.rx) s.rx.push_back(spec::parse_port_queues(r, "--rx"));
    s.eal_args = o.eal;
    for (const auto& rp : o.ring_pairs) {
        const auto comma = rp.find(',');
        if (comma == std::string::npos || comma == 0 || comma + 1 == rp.size() ||
            rp.find(',', comma + 1) != std::string::npos || rp.substr(0, comma) == rp.substr(comma + 1))
            throw UsageError(fmt::format("invalid --ring-pair \"{}\": expected two different names A,B", rp));
        s.ring_pairs.emplace_back(rp.substr(0, comma), rp.substr(comma + 1));
    }

    auto& f = s.frame;
    if (o.size != "min")
        f.frame_size = static_cast<unsigned>(parse_uint(o.size, "--size", packet::kMinFrame, packet::kMaxFrame));
    if (o.proto == "udp") f.l4 = packet::L4::udp;
    else if (o.proto == "tcp") f.l4 = packet::L4::tcp;
    else throw UsageError(fmt::format("invalid --proto \"{}\": expected udp or tcp", o.proto));
    if (!o.vlan.empty()) f.vlan = static_cast<uint16_t>(parse_uint(o.vlan, "--vlan", 0, 4094));
    f.vlan_pcp = static_cast<uint8_t>(parse_uint(o.vlan_pcp, "--vlan-pcp", 0, 7));
    f.src_mac = packet::parse_mac(o.src_mac, "--src-mac");
    f.dst_mac = packet::parse_mac(o.dst_mac, "--dst-mac");
    f.src_ip = packet::parse_ip(!o.src_ip.empty() ? o.src_ip : (o.ipv6 ? "2001:2::1" : "198.18.0.1"), "--src-ip");
    f.dst_ip = packet::parse_ip(!o.dst_ip.empty() ? o.dst_ip : (o.ipv6 ? "2001:2::2" : "198.18.0.2"), "--dst-ip");
    if (o.ipv6 && (!f.src_ip.v6 || !f.dst_ip.v6))
        throw UsageError("--ipv6 was given but --src-ip/--dst-ip are IPv4 addresses");
    if (f.src_ip.v6 != f.dst_ip.v6)
        throw UsageError(fmt::format("--src-ip {} and --dst-ip {} are of different address families",
                                     f.src_ip.str(), f.dst_ip.str()));
    f.src_port = static_cast<uint16_t>(parse_uint(o.src_port, "--src-port", 1, 65535));
    f.dst_port = static_cast<uint16_t>(parse_uint(o.dst_port, "--dst-port", 1, 65535));
    f.ttl = static_cast<uint8_t>(parse_uint(o.ttl, "--ttl", 1, 255));
    if (o.size == "min") f.frame_size = packet::min_frame_size(f);
    s.flows = static_cast<uint32_t>(parse_uint(o.flows, "--flows", 0, 1u << 20));
    s.vary = flow::parse_vary(o.vary);
    s.signature = !o.no_signature;
    if (!o.nonce.empty()) {
        s.nonce = static_cast<uint16_t>(parse_uint(o.nonce, "--nonce", 0, 65535));
        s.nonce_given = true;
    } else {
        s.nonce = static_cast<uint16_t>(std::random_device{}());
    }

    if (!o.count.empty()) s.count = spec::parse_count(o.count, "--count");
    if (!o.outstanding.empty())
        s.outstanding = static_cast<uint32_t>(parse_uint(o.outstanding, "--outstanding", 1, 65535));
    s.response_timeout_s = spec::parse_duration(o.response_timeout, "--response-timeout");
    if (!o.rate.empty()) s.rate_pps = static_cast<double>(spec::parse_count(o.rate, "--rate"));
    if (!o.duration.empty()) {
        s.duration_s = spec::parse_duration(o.duration, "--duration");
    } else if (s.count && !s.tx.empty()) {
        s.duration_s = 3600;  // the count bounds the run; the watchdog catches a stuck device
    }
    s.interval_s = spec::parse_duration(o.interval, "--interval");
    s.drain_s = spec::parse_duration(o.drain, "--drain");
    s.stall_s = spec::parse_duration(o.stall, "--stall-timeout");
    s.stop_when_idle = o.stop_when_idle;
    if (!o.max_loss.empty()) {
        try {
            size_t pos = 0;
            s.max_loss_pct = std::stod(o.max_loss, &pos);
            if (pos != o.max_loss.size()) throw std::invalid_argument("junk");
        } catch (const std::exception&) {
            throw UsageError(fmt::format("invalid --max-loss \"{}\": expected a percentage", o.max_loss));
        }
    }
    s.burst = static_cast<uint32_t>(parse_uint(o.burst, "--burst", 0, 512));
    s.descriptors = static_cast<uint32_t>(parse_uint(o.descriptors, "--descriptors", 0, 16384));
    s.mbufs = static_cast<uint32_t>(parse_uint(o.mbufs, "--mbufs", 0, 1u << 24));
    s.json_path = o.json;
    s.quiet = o.quiet;
    s.force = o.force;
    s.validate();
    return s;
}

}  // namespace lr::cli
