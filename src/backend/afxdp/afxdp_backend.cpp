#include "backend/afxdp/afxdp_backend.h"

#include <algorithm>
#include <bpf/libbpf.h>
#include <linux/capability.h>
#include <fmt/format.h>
#include <sys/resource.h>
#include <thread>

#include "backend/afxdp/afxdp_worker.h"
#include "backend/afxdp/live_tx.h"
#include "backend/afxdp/netdev.h"
#include "backend/afxdp/xdp_prog.h"
#include "backend/afxdp/xdp_sink.h"
#include "backend/afxdp/xsk_socket.h"
#include "util/cpus.h"
#include "util/error.h"
#include "util/kernel_link.h"
#include "util/privileges.h"
#include "worker/engine_common.h"

namespace lr::afxdp {
namespace {

// The port a worker sends on: its own, a forwarder's peer.
unsigned sends_on(const backend::WorkerSlot& w) {
    return w.role == worker::Role::forward ? w.peer_port_index : w.port_index;
}

XdpMode xdp_mode_of(spec::XdpMode m) {
    switch (m) {
        case spec::XdpMode::native: return XdpMode::native;
        case spec::XdpMode::skb: return XdpMode::skb;
        case spec::XdpMode::auto_mode: break;
    }
    return XdpMode::auto_mode;
}

struct Port {
    NetdevInfo nd;
    backend::PortInfo info;
    uint16_t ntx = 0, nrx = 0;
    std::unique_ptr<XdpRxProgram> prog;
    std::unique_ptr<XdpSink> sink;  // --rx-mode xdp: no sockets on this port
    bool live = false;                      // TX queues send XDP live frames, not through sockets
    std::string engine_why;                 // --tx-engine auto: why this engine
    std::unique_ptr<LiveTxProgram> live_prog;  // loaded for the trial's frame layout
    packet::SigLayout live_layout;
    uint32_t live_len = 0;
    std::string sending_peer;  // a veth whose peer is a sending port of this run: the peer's name
};

class AfxdpBackend final : public backend::Backend {
public:
    ~AfxdpBackend() override { close(); }
    std::string name() const override { return "afxdp"; }
    void open(const spec::RunSpec& spec, const backend::SessionLayout& layout) override;
    const std::vector<backend::PortInfo>& ports() const override { return infos_; }
    uint64_t flush_rx() override {
        uint64_t n = 0;
        for_each_socket([&](unsigned, XskSocket& s) {
            if (s.config().rx) n += s.flush_rx();
        });
        return n;
    }
    void start(const std::vector<worker::WorkerConfig>& workers) override;
    void join() override {
        for (auto& t : threads_)
            if (t.joinable()) t.join();
        threads_.clear();
    }
    stats::PortSample port_sample(unsigned i) const override;
    nlohmann::json environment() const override;
    // With sockets, nothing: the programs hang on bpf_links, released by closing them. With live
    // frames, what loading their program per trial (for the trial's frame layout) needs.
    std::vector<int> capabilities_after_setup() const override {
        for (const auto& p : ports_)
            if (p.live) return {CAP_NET_ADMIN, CAP_BPF, CAP_PERFMON};
        return {};
    }
    void close() override {
        join();
        rx_sock_.clear();
        tx_sock_.clear();
        sockets_.clear();  // sockets first, then the programs (their links close: detached)
        ports_.clear();
        infos_.clear();
    }

private:
    void check_port(const Port& p) const;
    void choose_engines(const spec::RunSpec& spec, const backend::SessionLayout& layout);
    std::string cannot_run(const spec::RunSpec& next) const override;
    void set_link(unsigned port_index, bool up) override {
        if (port_index >= ports_.size()) throw UsageError(fmt::format("no port {}", port_index));
        util::set_kernel_link(ports_[port_index].nd.name, up);
    }

    const spec::RunSpec* spec_ = nullptr;
    RxMatch match_;  // what the receive programs steer to the sockets
    backend::SessionLayout layout_;
    std::vector<Port> ports_;
    std::vector<backend::PortInfo> infos_;
    // One socket per (port, queue) that a worker sends or receives on. A queue that both sends
    // and receives (its own worker's, or two workers': a sender's TX and completion rings, a
    // receiver's RX and fill rings) has one socket for both.
    struct QueueSocket {
        unsigned port = 0;
        std::shared_ptr<XskSocket> sock;
    };
    std::vector<QueueSocket> sockets_;
    // Per worker slot: the socket it receives through (its port's), and the one it sends
    // through (its port's; a forwarder's peer port's). Null: none (sink pollers, live frames).
    std::vector<XskSocket*> rx_sock_, tx_sock_;
    template <class F>
    void for_each_socket(F&& f) const {
        for (const auto& q : sockets_) f(q.port, *q.sock);
    }
    std::vector<worker::WorkerConfig> workers_;  // this trial's
    std::vector<lr_sink_qstats> sink_base_;      // per worker: the sink's counts when the trial started
    std::vector<std::thread> threads_;
};

void AfxdpBackend::check_port(const Port& p) const {
    const auto& spec = *spec_;
    const auto& nd = p.nd;
    const unsigned avail = p.ntx ? nd.tx_queues : nd.rx_queues;
    if (std::max(p.ntx, p.nrx) > avail)
        throw UsageError(fmt::format("interface {} has {} {} queues; {} requested", nd.name, avail, p.ntx ? "TX" : "RX",
                                     std::max(p.ntx, p.nrx)));
    if (std::max(p.ntx, p.nrx) > LR_MAX_QUEUES)
        throw UsageError(fmt::format("afxdp supports at most {} queues per interface", LR_MAX_QUEUES));
    if (const auto big = spec.largest_packet(); big.l3 > nd.mtu)
        throw UsageError(fmt::format("{}: frame size {} needs MTU {} but {} has MTU {}", big.source, big.frame, big.l3,
                                     nd.name, nd.mtu));
    if (!spec.force && carries_default_route(nd.name))
        throw UsageError(fmt::format("{} carries the default route; linerate refuses to flood it unless you pass "
                                     "--force",
                                     nd.name));
    if (!nd.up) throw EnvError(fmt::format("interface {} is down (ip link set dev {} up)", nd.name, nd.name));
    if (!nd.carrier)
        throw EnvError(fmt::format("interface {} has no carrier: the link is down (a cable, the far end, or a veth "
                                   "whose peer is down)",
                                   nd.name));
}

// What the receive program steers to the sockets: every stream's protocol and destination
// ports (a replayed capture's frames can be anything: all of them); a reflector takes both
// protocols on its ports and checks the signature's magic itself.
RxMatch rx_match(const spec::RunSpec& spec) {
    RxMatch m;
    if (spec.impair) {  // an emulated link carries everything
        m.all = true;
        return m;
    }
    if (spec.connect) {  // the listener's segments to the connections' ports; ARP and the rest to the kernel
        m.udp = false;
        m.src_port_lo = m.src_port_hi = spec.frame.dst_port;
        m.dst_port_lo = spec.connect->src_port_lo;
        m.dst_port_hi = spec.connect->src_port_hi;
        return m;
    }
    m.udp = m.tcp = false;
    m.dst_port_lo = 65535;
    m.dst_port_hi = 0;
    for (const auto& st : spec.mix()) {
        if (st.replay) return RxMatch{};
        (st.frame.l4 == packet::L4::udp ? m.udp : m.tcp) = true;
        for (const auto& f : spec.stream_flow_frames(st)) {
            m.dst_port_lo = std::min(m.dst_port_lo, f.dst_port);
            m.dst_port_hi = std::max(m.dst_port_hi, f.dst_port);
        }
    }
    if (spec.reflect) m.udp = m.tcp = true;
    return m;
}

std::string AfxdpBackend::cannot_run(const spec::RunSpec& next) const {
    const RxMatch m = rx_match(next);
    const bool covered = match_.all || ((!m.udp || match_.udp) && (!m.tcp || match_.tcp) &&
                                        m.dst_port_lo >= match_.dst_port_lo && m.dst_port_hi <= match_.dst_port_hi &&
                                        m.src_port_lo >= match_.src_port_lo && m.src_port_hi <= match_.src_port_hi);
    for (const auto& p : ports_)
        if (p.nrx && !covered)
            return fmt::format("the receive program on {} was set up for other protocols or ports", p.nd.name);
    return {};
}

// --tx-engine auto: live frames for an unpaced sender-only run where the frames can be seen to
// get through: a veth whose peer runs an XDP program (or is one of this run's receiving
// ports, which will), or a driver that attaches XDP natively. Otherwise sockets, which pace per
// packet, push back instead of dropping and pass through the qdisc and tc egress.
void AfxdpBackend::choose_engines(const spec::RunSpec& spec, const backend::SessionLayout& layout) {
    std::string why_not = live_frames_unsupported();
    if (why_not.empty() && (spec.rate.limited() || spec.procedure.kind != spec::Procedure::run))
        why_not = "paced trials: sockets pace per packet";
    for (const auto& w : layout.workers)
        if (why_not.empty() && worker::sends(w.role) && w.role != worker::Role::tx)
            why_not = "request/response and reflect send through sockets";
    if (why_not.empty() && spec.session_max_frame() > kLiveMaxFrame) why_not = "frames larger than a page";
    if (why_not.empty() && !spec.single_fixed_stream())
        why_not = "streams (several, or sizes that vary): their frames are composed one by one in user space";
    if (why_not.empty() && !spec.capture_path.empty() && spec.captures_sent())
        why_not = "--capture-filter sent: the frames must pass through user space";
    for (auto& p : ports_) {
        if (!p.ntx) continue;
        if (!why_not.empty()) {
            p.engine_why = "auto: " + why_not;
            continue;
        }
        if (p.nd.driver != "veth") {
            p.engine_why = "auto: not a veth; live frames are chosen only where delivery can be checked";
            continue;
        }
        const auto peer = veth_peer(p.nd.name);
        bool receives_here = false;
        for (const auto& q : ports_)
            if (q.nd.name == peer && q.nrx) receives_here = true;
        if (peer.empty()) {
            p.engine_why = "auto: the veth's peer is in another namespace: cannot check it takes XDP frames";
        } else if (receives_here || attached_xdp_prog_id(netdev_info(peer).ifindex)) {
            p.live = true;
            p.engine_why = fmt::format("auto: the veth's peer {} runs an XDP program", peer);
        } else {
            p.engine_why = fmt::format("auto: the veth's peer {} runs no XDP program (it would drop live frames)", peer);
        }
    }
}

void AfxdpBackend::open(const spec::RunSpec& spec, const backend::SessionLayout& layout) {
    spec_ = &spec;
    layout_ = layout;
    util::require_capabilities(afxdp_capabilities(), "the afxdp backend");
    // UMEM pinning counts against RLIMIT_MEMLOCK without CAP_IPC_LOCK; lift it if we may.
    rlimit unlimited{RLIM_INFINITY, RLIM_INFINITY};
    setrlimit(RLIMIT_MEMLOCK, &unlimited);

    for (const auto& name : layout.ports) {
        ports_.emplace_back();
        ports_.back().nd = netdev_info(name);
    }
    for (const auto& w : layout.workers) {
        auto& p = ports_[w.port_index];
        auto& out = ports_[sends_on(w)];
        if (worker::sends(w.role)) out.ntx = std::max<uint16_t>(out.ntx, w.queue + 1);
        if (worker::receives(w.role)) p.nrx = std::max<uint16_t>(p.nrx, w.queue + 1);
    }
    for (const auto& p : ports_) check_port(p);
    // A receiving veth whose peer sends in this run: the peer's refused XDP redirects are its
    // egress drops, not this port's receive path's (stats::PortSample::ipeer_xmit_refused).
    for (auto& p : ports_) {
        if (!p.nrx || p.nd.driver != "veth") continue;
        const auto peer = veth_peer(p.nd.name);
        for (const auto& q : ports_)
            if (!peer.empty() && q.nd.name == peer && q.ntx) p.sending_peer = peer;
    }
    // Live frames send from the kernel: a port whose TX workers only transmit can use them.
    if (spec.afxdp.tx_engine == spec::TxEngine::live) {
        if (const auto why = live_frames_unsupported(); !why.empty()) throw EnvError("--tx-engine live: " + why);
        for (const auto& w : layout.workers)
            if (worker::sends(w.role) && w.role != worker::Role::tx)
                throw UsageError("--tx-engine live sends test traffic only: request/response and reflect need "
                                 "--tx-engine socket");
        if (!spec.capture_path.empty() && spec.captures_sent())
            throw UsageError("--capture-filter sent: live frames never reach user space; use --tx-engine socket");
        if (!spec.single_fixed_stream())
            throw UsageError("--tx-engine live sends copies of one frame: streams (several, or sizes that vary) need "
                             "--tx-engine socket");
        for (auto& p : ports_) p.live = p.ntx > 0;
    } else if (spec.afxdp.tx_engine == spec::TxEngine::auto_mode) {
        choose_engines(spec, layout);
    }

    const XdpMode xmode = xdp_mode_of(spec.afxdp.xdp_mode);
    const RxMatch match = rx_match(spec);
    match_ = match;

    XskConfig xc;
    xc.ring = spec.ring_size();
    xc.frames = std::max<uint32_t>(4096, 4 * spec.ring_size());
    xc.mode = spec.afxdp.xsk_mode;
    rx_sock_.assign(layout.workers.size(), nullptr);
    tx_sock_.assign(layout.workers.size(), nullptr);
    for (unsigned pi = 0; pi < ports_.size(); ++pi) {
        auto& p = ports_[pi];
        if (p.nrx && spec.afxdp.rx_mode == spec::RxMode::xdp) {
            p.sink = std::make_unique<XdpSink>(match, spec.nonce, spec.rx_streams(), p.nd.name, p.nd.ifindex, xmode);
        } else if (p.nrx) {
            p.prog = std::make_unique<XdpRxProgram>(match);
        }
        for (uint16_t q = 0; q < std::max(p.ntx, p.nrx); ++q) {
            // Who sends and who receives on this queue through a socket.
            std::vector<size_t> senders, receivers;
            for (size_t i = 0; i < layout.workers.size(); ++i) {
                const auto& w = layout.workers[i];
                if (w.queue != q) continue;
                if (worker::sends(w.role) && sends_on(w) == pi && !(p.live && w.role == worker::Role::tx))
                    senders.push_back(i);
                if (worker::receives(w.role) && w.port_index == pi && !(p.sink && w.role == worker::Role::rx))
                    receivers.push_back(i);
            }
            if (senders.empty() && receivers.empty()) continue;
            xc.ifname = p.nd.name;
            xc.queue = q;
            xc.tx = !senders.empty();
            xc.rx = !receivers.empty();
            // Sending from the first half of the UMEM and receiving into the other, unless one
            // reflector does both: it sends from the chunks it received into.
            const bool reflects = senders.size() == 1 && layout.workers[senders[0]].role == worker::Role::reflect;
            xc.tx_chunks = !xc.tx || reflects ? 0 : xc.rx ? xc.frames / 2 : xc.frames;
            auto sock = std::make_shared<XskSocket>(xc);
            for (size_t i : senders) tx_sock_[i] = sock.get();
            for (size_t i : receivers) rx_sock_[i] = sock.get();
            if (xc.rx) p.prog->add_socket(q, sock->fd());
            sockets_.push_back({pi, std::move(sock)});
        }
        // Sockets are in the map before traffic flows.
        if (p.prog) p.prog->attach(p.nd.name, p.nd.ifindex, xmode);
        p.info.name = p.nd.name;
        p.info.driver = p.nd.driver;
        p.info.id = static_cast<uint16_t>(p.nd.ifindex);
        p.info.tx_queues = p.ntx;
        p.info.rx_queues = p.nrx;
        p.info.mac = p.nd.mac;
        p.info.link_up = p.nd.up;
        p.info.link_speed_mbps = p.nd.speed_mbps;
        infos_.push_back(p.info);
    }
}

void AfxdpBackend::start(const std::vector<worker::WorkerConfig>& workers) {
    if (workers.size() != layout_.workers.size())
        throw EnvError(fmt::format("internal: {} workers for a session of {}", workers.size(), layout_.workers.size()));
    for (size_t i = 0; i < workers.size(); ++i) {
        auto* s = tx_sock_[i];
        if (s && s->config().tx_chunks) s->load_templates(workers[i].tx.templates);
    }
    for_each_socket([](unsigned, XskSocket& s) { s.next_trial(); });
    // Live frames: the program is loaded for the trial's frame layout (reloaded only when the
    // frame kind or size changed), and each worker's entries start at 0.
    for (size_t i = 0; i < workers.size(); ++i) {
        const auto& w = workers[i];
        auto& p = ports_[w.port_index];
        if (!p.live || w.role != worker::Role::tx) continue;
        const auto& l = w.tx.layout;
        const bool same = p.live_prog && p.live_len == w.tx.frame_len && p.live_layout.level == l.level &&
                          p.live_layout.csum_off == l.csum_off && p.live_layout.seq_off == l.seq_off &&
                          p.live_layout.ts_off == l.ts_off && p.live_layout.id_off == l.id_off &&
                          p.live_prog->signs() == w.tx.sign;
        if (!same) {
            p.live_prog.reset();
            p.live_prog = std::make_unique<LiveTxProgram>(p.nd.ifindex, l, w.tx.sign,
                                                          std::max<uint32_t>(spec_->effective_flows(), 1024),
                                                          w.tx.frame_len);
            p.live_layout = l;
            p.live_len = w.tx.frame_len;
        }
        p.live_prog->set_batch(spec_->burst ? spec_->burst : spec::kLiveBatch);
        p.live_prog->reset(w);
    }
    workers_ = workers;  // the threads read their configuration from here until join()
    // The sink's maps count for the whole session: a trial counts from here.
    sink_base_.assign(workers_.size(), {});
    for (size_t i = 0; i < workers_.size(); ++i)
        if (const auto* sink = ports_[workers_[i].port_index].sink.get(); sink && !rx_sock_[i] && !tx_sock_[i])
            sink_base_[i] = sink->queue_stats(workers_[i].queue);
    for (size_t i = 0; i < workers_.size(); ++i) {
        const auto& w = workers_[i];
        XskSocket* rs = rx_sock_[i];
        XskSocket* ts = tx_sock_[i];
        const XdpSink* sink = ports_[w.port_index].sink.get();
        const lr_sink_qstats& base = sink_base_[i];
        const LiveTxProgram* live = ports_[w.port_index].live_prog.get();
        threads_.emplace_back([&w, rs, ts, sink, live, &base] {
            worker::run_worker(w, [&] {
                if (rs || ts) return run_engine(rs, ts, w);
                if (live && w.role == worker::Role::tx) return run_live_engine(*live, w);
                return run_sink_poller(*sink, base, w);
            });
        });
        util::pin_thread(threads_.back(), w.cpu);
    }
}

stats::PortSample AfxdpBackend::port_sample(unsigned i) const {
    stats::PortSample s;
    if (i >= ports_.size()) return s;
    const auto& p = ports_[i];
    const auto& n = p.nd.name;
    auto stat = [&](const char* name) { return util::kernel_stat(n, name).value_or(0); };
    s.ipackets = stat("rx_packets");
    s.opackets = stat("tx_packets");
    s.ibytes = stat("rx_bytes");
    s.obytes = stat("tx_bytes");
    s.ierrors = stat("rx_errors");
    s.oerrors = stat("tx_errors");
    s.idropped = stat("rx_dropped");
    s.odropped = stat("tx_dropped") + s.oerrors;
    if (!p.sending_peer.empty()) s.ipeer_xmit_refused = veth_xdp_xmit_errors(p.sending_peer).value_or(0);
    s.link = util::kernel_carrier(n).value_or(false) ? 1 : 0;
    // Every queue the device has, not only those with a socket: a frame the device steers to
    // a queue nobody serves is dropped by the program and must be counted.
    const uint32_t all_rx = std::min<uint32_t>(std::max<uint32_t>(p.nd.rx_queues, p.nrx), LR_MAX_QUEUES);
    if (p.sink)
        for (uint32_t q = 0; q < p.nrx; ++q) {
            const auto st = p.sink->queue_stats(q);
            s.xdp_received += st.frames;
            s.xdp_redirected += st.ours;  // counted in the driver
            s.xdp_passed += st.foreign;
        }
    if (p.prog)
        for (uint32_t q = 0; q < all_rx; ++q) {
            const auto st = p.prog->queue_stats(q);
            s.xdp_received += st.received;
            s.xdp_redirected += st.redirected;
            s.xdp_passed += st.passed;
            s.xdp_redirect_failed += st.redirect_failed;
        }
    for_each_socket([&](unsigned port, XskSocket& sock) {
        if (port != i) return;
        const auto x = sock.stats();
        s.xsk_rx_dropped += x.rx_dropped;
        s.xsk_rx_ring_full += x.rx_ring_full;
        s.xsk_rx_fill_empty += x.rx_fill_ring_empty_descs;
        s.xsk_rx_invalid += x.rx_invalid_descs;
        s.xsk_tx_invalid += x.tx_invalid_descs;
        s.xsk_tx_ring_empty += x.tx_ring_empty_descs;
    });
    return s;
}

nlohmann::json AfxdpBackend::environment() const {
    const auto& spec = *spec_;
    auto ports = nlohmann::json::array();
    std::vector<int> cpus;
    for (const auto& w : layout_.workers) cpus.push_back(w.cpu);
    for (unsigned pi = 0; pi < ports_.size(); ++pi) {
        const auto& p = ports_[pi];
        auto socks = nlohmann::json::array();
        for_each_socket([&](unsigned port, XskSocket& q) {
            if (port != pi) return;
            socks.push_back({{"queue", q.config().queue},
                             {"dir", q.config().rx ? (q.config().tx ? "tx+rx" : "rx") : "tx"},
                             {"requested", spec::to_string(q.config().mode)},
                             {"obtained", q.zero_copy() ? "zero-copy" : "copy"}});
        });
        auto prog_json = [&](auto& prog) {
            return nlohmann::json{{"requested", spec::to_string(spec.afxdp.xdp_mode)},
                                  {"obtained", xdp_mode_str(prog->attached_mode())},
                                  {"prog_id", prog->prog_id()},
                                  {"attach", "bpf_link"}};
        };
        ports.push_back({{"name", p.nd.name},
                         {"ifindex", p.nd.ifindex},
                         {"driver", p.nd.driver},
                         {"mac", p.nd.mac},
                         {"mtu", p.nd.mtu},
                         {"queues_available", {{"rx", p.nd.rx_queues}, {"tx", p.nd.tx_queues}}},
                         {"tx_queues", p.ntx},
                         {"rx_queues", p.nrx},
                         {"rx_mode", p.sink ? "xdp counting sink" : p.nrx ? "socket" : "none"},
                         {"tx_engine", !p.ntx ? "none" : p.live ? "live frames (BPF_PROG_RUN, XDP_REDIRECT)" : "socket"},
                         {"tx_engine_why", p.engine_why.empty() ? nlohmann::json(nullptr) : nlohmann::json(p.engine_why)},
                         {"xdp_mode", p.sink   ? prog_json(p.sink)
                                      : p.prog ? prog_json(p.prog)
                                               : nlohmann::json(nullptr)},
                         {"sockets", socks}});
    }
    return {{"backend", "afxdp"},
            {"libbpf_version", fmt::format("{}.{}", libbpf_major_version(), libbpf_minor_version())},
            {"libxdp_version", LINERATE_LIBXDP_VERSION},
            {"worker_cpus", cpus},
            {"ports", ports}};
}

}  // namespace

std::unique_ptr<backend::Backend> make_afxdp_backend() { return std::make_unique<AfxdpBackend>(); }

std::vector<util::CapNeed> afxdp_capabilities() {
    return {{CAP_NET_ADMIN, "attach XDP programs, set the MTU"},
            {CAP_NET_RAW, "open AF_XDP sockets"},
            {CAP_BPF, "load linerate's XDP programs and maps"},
            {CAP_PERFMON, "the verifier's pointer rules for the live-frames and counting programs"}};
}

}  // namespace lr::afxdp
