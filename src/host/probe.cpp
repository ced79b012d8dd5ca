#include "host/probe.h"

#include <fmt/format.h>
#include <fstream>
#include <linux/capability.h>
#include <nlohmann/json.hpp>
#include <sys/resource.h>
#include <sys/statfs.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "backend/afxdp/afxdp_backend.h"
#include "backend/afxdp/live_tx.h"
#include "backend/afxdp/netdev.h"
#include "backend/afxdp/xdp_prog.h"
#include "backend/afxdp/xsk_socket.h"
#include "stats/tsc_clock.h"
#include "util/error.h"
#include "util/privileges.h"

namespace lr::host {
namespace {

constexpr unsigned long kBpfFsMagic = 0xcafe4a11;

uint64_t read_u64(const std::string& path) {
    std::ifstream f(path);
    uint64_t v = 0;
    f >> v;
    return v;
}

// What the afxdp backend needs, held or missing, and CAP_IPC_LOCK (needed only when
// RLIMIT_MEMLOCK is below a UMEM's size).
nlohmann::json capabilities(std::vector<Check>& checks) {
    nlohmann::json caps = nlohmann::json::object();
    std::vector<std::string> held, missing;
    auto needs = afxdp::afxdp_capabilities();
    needs.push_back({CAP_IPC_LOCK, "UMEM above RLIMIT_MEMLOCK"});
    std::string missing_text;
    for (const auto& n : needs) {
        const auto name = util::cap_name(n.cap);
        const bool has = util::has_capability(n.cap);
        caps[name] = has;
        (has ? held : missing).push_back(name);
        if (!has && n.cap != CAP_IPC_LOCK)
            missing_text += fmt::format("{}{} ({})", missing_text.empty() ? "" : ", ", name, n.why);
    }
    caps["held"] = held;
    caps["missing"] = missing;
    checks.push_back({"capabilities", missing_text.empty(),
                      missing_text.empty() ? fmt::format("held: {}", fmt::join(held, ", "))
                                           : "missing " + missing_text + " (run as root or grant them)"});
    return caps;
}

}  // namespace

bool ProbeReport::afxdp_usable() const {
    for (const auto& c : checks)
        if (!c.ok && c.needed_by_afxdp) return false;
    return true;
}

ProbeReport probe_interface(const std::string& iface) {
    ProbeReport rep;
    std::vector<Check> checks;
    nlohmann::json j;
    utsname u{};
    uname(&u);
    j["kernel"] = u.release;

    const auto nd = afxdp::netdev_info(iface);  // UsageError when unknown
    j["interface"] = {{"name", nd.name}, {"ifindex", nd.ifindex}, {"driver", nd.driver}, {"mtu", nd.mtu},
                      {"up", nd.up},     {"rx_queues", nd.rx_queues}, {"tx_queues", nd.tx_queues}};
    checks.push_back({"interface up", nd.up, nd.up ? "operstate up" : "down: ip link set dev " + nd.name + " up"});
    j["capabilities"] = capabilities(checks);

    struct statfs sf{};
    const bool bpffs = statfs("/sys/fs/bpf", &sf) == 0 && static_cast<unsigned long>(sf.f_type) == kBpfFsMagic;
    checks.push_back({"bpffs", bpffs, bpffs ? "mounted at /sys/fs/bpf"
                                            : "not mounted (mount -t bpf bpf /sys/fs/bpf); linerate itself does "
                                              "not need it, libxdp-based tools do"});
    rlimit ml{};
    getrlimit(RLIMIT_MEMLOCK, &ml);
    j["memlock_limit"] = ml.rlim_cur == RLIM_INFINITY ? nlohmann::json("unlimited") : nlohmann::json(ml.rlim_cur);

    // XDP: load our program, try native then SKB attach, detach at once.
    const uint32_t foreign = afxdp::attached_xdp_prog_id(nd.ifindex);
    nlohmann::json xdp;
    if (foreign) {
        checks.push_back({"xdp attach", false,
                          fmt::format("another XDP program (id {}) is attached; linerate will not touch it", foreign)});
    } else {
        for (auto mode : {afxdp::XdpMode::native, afxdp::XdpMode::skb}) {
            try {
                afxdp::XdpRxProgram prog(afxdp::RxMatch{});
                prog.attach(nd.name, nd.ifindex, mode);
                xdp[afxdp::xdp_mode_str(mode)] = "supported";
            } catch (const Error& e) {
                xdp[afxdp::xdp_mode_str(mode)] = std::string("unavailable: ") + e.what();
            }
        }
        const bool any = xdp["native"] == "supported" || xdp["skb"] == "supported";
        checks.push_back({"xdp attach", any,
                          xdp["native"] == "supported" ? "native (driver) mode" : any ? "SKB (generic) mode only" : "no mode works"});
    }
    j["xdp"] = xdp;

    // AF_XDP sockets on queue 0: zero-copy, then copy.
    nlohmann::json xsk;
    for (auto mode : {spec::XskMode::zero_copy, spec::XskMode::copy}) {
        const std::string name(spec::to_string(mode));
        try {
            afxdp::XskConfig c;
            c.ifname = nd.name;
            c.rx = true;
            c.mode = mode;
            afxdp::XskSocket q(c);
            xsk[name] = "supported";
        } catch (const Error& e) {
            xsk[name] = std::string("unavailable: ") + e.what();
        }
    }
    j["af_xdp"] = xsk;
    const bool xsk_ok = xsk["copy"] == "supported" || xsk["zero-copy"] == "supported";
    checks.push_back({"af_xdp socket", xsk_ok,
                      xsk["zero-copy"] == "supported" ? "zero-copy and copy" : xsk_ok ? "copy mode only (no zero-copy in this driver)" : "cannot bind"});

    // XDP live frames (--tx-engine live): the kernel's support, and loading linerate's program.
    nlohmann::json live;
    std::string live_why = afxdp::live_frames_unsupported();
    if (live_why.empty()) {
        try {
            packet::FrameSpec fs;
            afxdp::LiveTxProgram prog(nd.ifindex, packet::sig_layout(fs), true, 1, 60);
        } catch (const Error& e) {
            live_why = e.what();
        }
    }
    live["supported"] = live_why.empty();
    live["detail"] = live_why.empty() ? "the kernel runs linerate's live-frames program (Linux 5.18+)" : live_why;
    if (nd.driver == "veth")
        live["egress"] = "veth: the peer must run an XDP program (a linerate receiver or reflector does) or have GRO "
                         "enabled, else the frames are dropped (reported as the device's drops: the run is invalid)";
    j["live_frames"] = live;
    checks.push_back({"xdp live frames", live_why.empty(),
                      live_why.empty() ? (nd.driver == "veth" ? "supported; the veth peer needs XDP or GRO"
                                                              : "supported (the driver must implement ndo_xdp_xmit)")
                                       : live_why});

    // DPDK: compiled in, and hugepages to run it.
    const uint64_t hp_free = read_u64("/sys/kernel/mm/hugepages/hugepages-2048kB/free_hugepages") +
                             read_u64("/sys/kernel/mm/hugepages/hugepages-1048576kB/free_hugepages");
#ifdef LINERATE_HAVE_DPDK
    const bool dpdk_built = true;
#else
    const bool dpdk_built = false;
#endif
    j["dpdk"] = {{"built_in", dpdk_built}, {"free_hugepages", hp_free}};
    checks.push_back({"dpdk", dpdk_built && hp_free > 0,
                      !dpdk_built ? "this linerate was built without DPDK"
                      : hp_free   ? fmt::format("{} free hugepages; virtual PMDs and net_af_xdp usable", hp_free)
                                  : "no free hugepages (echo 1024 > /sys/kernel/mm/hugepages/hugepages-2048kB/"
                                    "nr_hugepages), or pass --no-huge to the EAL"});

    // Timestamps: the TSC when the kernel keeps time with it (not an afxdp requirement).
    const auto& tsc = stats::tsc_rate();
    j["timestamps"] = {{"source", stats::clock_source_name()}, {"tsc", tsc.usable}};
    checks.push_back({"timestamps", tsc.usable,
                      tsc.usable ? fmt::format("TSC at {:.3f} GHz, re-anchored to CLOCK_MONOTONIC every 1 ms",
                                               static_cast<double>(tsc.anchor_ticks) / 1e6)
                                 : "CLOCK_MONOTONIC per burst (" + tsc.why + "): correct, ~13 ns a burst slower"});

    for (auto& c : checks)
        if (c.name == "dpdk" || c.name == "bpffs" || c.name == "timestamps") c.needed_by_afxdp = false;
    auto arr = nlohmann::json::array();
    for (const auto& c : checks) arr.push_back({{"check", c.name}, {"ok", c.ok}, {"detail", c.detail}});
    j["checks"] = arr;
    rep.iface = nd.name;
    rep.kernel = u.release;
    rep.driver = nd.driver;
    rep.rx_queues = nd.rx_queues;
    rep.tx_queues = nd.tx_queues;
    rep.mtu = nd.mtu;
    rep.checks = std::move(checks);
    j["afxdp_usable"] = rep.afxdp_usable();
    rep.json = std::move(j);
    return rep;
}

}  // namespace lr::host
