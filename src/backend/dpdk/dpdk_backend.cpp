#include "backend/dpdk/dpdk_backend.h"

#include <linux/capability.h>
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstring>
#include <deque>
#include <fmt/format.h>
#include <thread>

#include <rte_bus_vdev.h>
#include <rte_errno.h>
#include <rte_eth_ring.h>
#include <rte_ethdev.h>
#include <rte_lcore.h>
#include <rte_mbuf.h>
#include <rte_mempool.h>
#include <rte_ring.h>
#include <rte_version.h>

#include "backend/dpdk/dpdk_eal.h"
#include "backend/dpdk/dpdk_worker.h"
#include "util/cpus.h"
#include "util/error.h"
#include "util/kernel_link.h"

namespace lr::dpdk {
namespace {

std::string errstr(int err) { return rte_strerror(err < 0 ? -err : err); }

// Names of DPDK objects (rings, pools) must be unique in the process; sessions number theirs.
std::atomic<unsigned> g_session_seq{0};

struct Port {
    backend::PortInfo info;
    uint16_t ntx = 0, nrx = 0;          // queues with workers
    uint16_t conf_tx = 0, conf_rx = 0;  // queues configured (some PMDs, e.g. net_af_xdp, pair each
                                        // TX queue with an RX queue)
    bool started = false;
    rte_mempool* spare_pool = nullptr;  // for RX queues without a worker
    unsigned kernel_ifindex = 0;        // the kernel interface under the PMD (net_af_xdp, net_af_packet), if any
};

// The link as the PMD reports it and, for a PMD over a kernel interface (whose own link
// status says "up" regardless), as the kernel does.
bool link_up(const Port& p) {
    rte_eth_link link{};
    if (rte_eth_link_get_nowait(p.info.id, &link) != 0 || link.link_status != RTE_ETH_LINK_UP) return false;
    return util::kernel_carrier(p.kernel_ifindex).value_or(true);
}

// A sending worker's pool and the frames its mbufs hold.
struct TxPool {
    rte_mempool* pool = nullptr;
    std::vector<std::vector<uint8_t>> loaded;
};

struct TemplateInit {
    const std::vector<std::vector<uint8_t>>* frames;
    bool layout_ok = true;  // frame data at mbuf + sizeof(rte_mbuf) + headroom (the TX path relies on it)
};

void init_tx_mbuf(rte_mempool*, void* opaque, void* obj, unsigned idx) {
    auto* ti = static_cast<TemplateInit*>(opaque);
    const auto& frames = *ti->frames;
    auto* m = static_cast<rte_mbuf*>(obj);
    if (rte_pktmbuf_mtod(m, uint8_t*) != reinterpret_cast<uint8_t*>(m) + kDataOffset) ti->layout_ok = false;
    const auto& f = frames[idx % frames.size()];
    std::memcpy(rte_pktmbuf_mtod(m, uint8_t*), f.data(), f.size());
    m->data_len = static_cast<uint16_t>(f.size());
    m->pkt_len = static_cast<uint32_t>(f.size());
    m->nb_segs = 1;
    m->next = nullptr;
}

void size_tx_mbuf(rte_mempool*, void* opaque, void* obj, unsigned) {
    auto* m = static_cast<rte_mbuf*>(obj);
    m->data_len = *static_cast<const uint16_t*>(opaque);
    m->pkt_len = m->data_len;
}

class DpdkBackend final : public backend::Backend {
public:
    ~DpdkBackend() override { close(); }
    std::string name() const override { return "dpdk"; }
    void open(const spec::RunSpec& spec, const backend::SessionLayout& layout) override;
    const std::vector<backend::PortInfo>& ports() const override { return infos_; }
    uint64_t flush_rx() override;
    void start(const std::vector<worker::WorkerConfig>& workers) override;
    void join() override;
    stats::PortSample port_sample(unsigned i) const override;
    nlohmann::json environment() const override;
    // A PMD over a kernel interface (net_af_xdp) detaches its XDP program when it closes.
    std::vector<int> capabilities_after_setup() const override { return {CAP_NET_ADMIN}; }
    void set_link(unsigned port_index, bool up) override;
    void close() override;

private:
    uint16_t resolve(const std::string& name) const;
    void make_ring_pair(const std::string& a, const std::string& b);
    rte_mempool* make_pool(const std::string& name, uint32_t n, uint32_t data_room, int socket);
    void configure(Port& p);
    void setup_queues();
    void start_ports();

    const spec::RunSpec* spec_ = nullptr;
    backend::SessionLayout layout_;
    unsigned session_ = 0;
    std::vector<std::string> eal_args_;
    bool launched_ = false;
    std::vector<std::pair<std::string, uint16_t>> aliases_;
    std::vector<Port> ports_;
    std::vector<backend::PortInfo> infos_;
    std::vector<rte_mempool*> pools_;
    std::vector<rte_ring*> rings_;     // of --ring-pair ports
    std::vector<TxPool> tx_pools_;     // per worker slot (null pool for receive-only roles)
    std::deque<DpdkWorker> workers_;   // this trial's; stable addresses for remote launch
    std::vector<std::pair<unsigned, int>> lcores_;  // (lcore, cpu) of the workers, in order
};

uint16_t DpdkBackend::resolve(const std::string& name) const {
    for (const auto& [alias, id] : aliases_)
        if (alias == name) return id;
    uint16_t pid = 0;
    if (rte_eth_dev_get_port_by_name(name.c_str(), &pid) == 0) return pid;
    if (!name.empty() && std::all_of(name.begin(), name.end(), ::isdigit) && name.size() < 6) {
        const unsigned long id = std::stoul(name);
        if (id < RTE_MAX_ETHPORTS && rte_eth_dev_is_valid_port(static_cast<uint16_t>(id)))
            return static_cast<uint16_t>(id);
    }
    std::string avail;
    uint16_t p;
    RTE_ETH_FOREACH_DEV(p) {
        char nm[RTE_ETH_NAME_MAX_LEN] = {};
        rte_eth_dev_get_name_by_port(p, nm);
        avail += fmt::format("{}{} (id {})", avail.empty() ? "" : ", ", nm, p);
    }
    throw UsageError(fmt::format(
        "unknown port \"{}\": DPDK has {}. Create virtual ports with EAL arguments after --, "
        "e.g. -- --vdev=net_null0",
        name, avail.empty() ? "no ports at all" : "ports " + avail));
}

void DpdkBackend::make_ring_pair(const std::string& a, const std::string& b) {
    constexpr unsigned kQueues = 16, kRingSize = 1024;
    rte_ring* ab[kQueues];
    rte_ring* ba[kQueues];
    for (unsigned q = 0; q < kQueues; ++q) {
        // rte_ring names are limited to 29 characters: number the pair, not the port names.
        const auto n1 = fmt::format("lr{}p{}_ab{}", session_, aliases_.size() / 2, q);
        const auto n2 = fmt::format("lr{}p{}_ba{}", session_, aliases_.size() / 2, q);
        ab[q] = rte_ring_create(n1.c_str(), kRingSize, SOCKET_ID_ANY, RING_F_SP_ENQ | RING_F_SC_DEQ);
        ba[q] = rte_ring_create(n2.c_str(), kRingSize, SOCKET_ID_ANY, RING_F_SP_ENQ | RING_F_SC_DEQ);
        if (!ab[q] || !ba[q])
            throw EnvError(fmt::format("--ring-pair {},{}: couldn't create rings: {}", a, b, errstr(rte_errno)));
    }
    for (unsigned q = 0; q < kQueues; ++q) rings_.insert(rings_.end(), {ab[q], ba[q]});
    const int pa = rte_eth_from_rings(a.c_str(), ba, kQueues, ab, kQueues, SOCKET_ID_ANY);
    const int pb = pa < 0 ? -1 : rte_eth_from_rings(b.c_str(), ab, kQueues, ba, kQueues, SOCKET_ID_ANY);
    if (pa < 0 || pb < 0)
        throw EnvError(fmt::format("--ring-pair {},{}: couldn't create the ring ports: {}", a, b,
                                   errstr(rte_errno)));
    // The PMD names them net_ring_<name>; the user knows them by <name>.
    aliases_.emplace_back(a, static_cast<uint16_t>(pa));
    aliases_.emplace_back(b, static_cast<uint16_t>(pb));
}

rte_mempool* DpdkBackend::make_pool(const std::string& name, uint32_t n, uint32_t data_room, int socket) {
    const uint16_t room = static_cast<uint16_t>(RTE_PKTMBUF_HEADROOM + data_room);
    rte_mempool* mp = rte_pktmbuf_pool_create(name.c_str(), n, std::min<uint32_t>(256, n / 2), 0, room,
                                              socket < 0 ? SOCKET_ID_ANY : socket);
    if (!mp)
        throw EnvError(fmt::format("couldn't create mempool {} ({} mbufs of {} bytes): {}", name, n, room,
                                   errstr(rte_errno)));
    pools_.push_back(mp);
    return mp;
}

void DpdkBackend::open(const spec::RunSpec& spec, const backend::SessionLayout& layout) {
    spec_ = &spec;
    layout_ = layout;
    session_ = g_session_seq++;
    std::vector<int> cpus;
    for (const auto& w : layout.workers) cpus.push_back(w.cpu);
    if (!spec.cpus.empty() && sets_lcores(spec.dpdk.eal_args))
        throw UsageError("--cpus and an lcore option in the EAL arguments (-l, -c, --lcores) both place the "
                         "workers: give one of them");
    eal_args_ = effective_eal_args(spec.dpdk.eal_args, util::allowed_cpus().front(), cpus);
    eal_open(eal_args_);
    const auto lcores = worker_lcores();
    if (lcores.size() < layout.workers.size())
        throw EnvError(fmt::format("{} workers need {} worker lcores but EAL has {} (check -l/--lcores)",
                                   layout.workers.size(), layout.workers.size(), lcores.size()));
    lcores_.assign(lcores.begin(), lcores.begin() + static_cast<long>(layout.workers.size()));

    for (const auto& [a, b] : spec.dpdk.ring_pairs) make_ring_pair(a, b);
    for (const auto& name : layout.ports) {
        Port p;
        p.info.id = resolve(name);
        p.info.name = name;
        ports_.push_back(p);
    }
    for (const auto& w : layout.workers) {
        auto& p = ports_[w.port_index];
        // A forwarder sends on its peer port.
        auto& out = ports_[w.role == worker::Role::forward ? w.peer_port_index : w.port_index];
        if (worker::sends(w.role)) out.ntx = std::max<uint16_t>(out.ntx, w.queue + 1);
        if (worker::receives(w.role)) p.nrx = std::max<uint16_t>(p.nrx, w.queue + 1);
    }
    for (auto& p : ports_) configure(p);
    setup_queues();
    start_ports();
}

void DpdkBackend::configure(Port& p) {
    const auto& spec = *spec_;
    const auto big = spec.largest_packet();
    const uint32_t l3 = big.l3;
    rte_eth_dev_info di{};
    int r = rte_eth_dev_info_get(p.info.id, &di);
    if (r != 0) throw EnvError(fmt::format("port {}: can't read device info: {}", p.info.name, errstr(r)));
    p.info.driver = di.driver_name ? di.driver_name : "?";
    p.kernel_ifindex = di.if_index;
    if (p.ntx > di.max_tx_queues || p.nrx > di.max_rx_queues)
        throw UsageError(fmt::format("port {} ({}) supports at most {} TX and {} RX queues; {} and {} requested",
                                     p.info.name, p.info.driver, di.max_tx_queues, di.max_rx_queues, p.ntx, p.nrx));
    const uint16_t nq = std::max<uint16_t>({p.ntx, p.nrx, 1});
    p.conf_tx = std::min(nq, di.max_tx_queues);
    p.conf_rx = std::min(nq, di.max_rx_queues);
    if (l3 > di.max_mtu)
        throw UsageError(fmt::format("{}: frame size {} needs MTU {} but port {} allows at most {}", big.source,
                                     big.frame, l3, p.info.name, di.max_mtu));
    rte_eth_conf conf{};
    if (p.conf_rx > 1 && di.flow_type_rss_offloads) {
        conf.rxmode.mq_mode = RTE_ETH_MQ_RX_RSS;
        conf.rx_adv_conf.rss_conf.rss_hf =
            (RTE_ETH_RSS_IP | RTE_ETH_RSS_UDP | RTE_ETH_RSS_TCP) & di.flow_type_rss_offloads;
    }
    // The device's checksum verdict saves the receiver a software check where it gives one.
    conf.rxmode.offloads |= di.rx_offload_capa & (RTE_ETH_RX_OFFLOAD_UDP_CKSUM | RTE_ETH_RX_OFFLOAD_TCP_CKSUM);
    if (l3 > RTE_ETHER_MTU) conf.rxmode.mtu = l3;
    r = rte_eth_dev_configure(p.info.id, p.conf_rx, p.conf_tx, &conf);
    if (r != 0)
        throw EnvError(fmt::format("couldn't configure port {} with {} RX and {} TX queues: {}", p.info.name,
                                   p.conf_rx, p.conf_tx, errstr(r)));
    p.info.tx_queues = p.ntx;
    p.info.rx_queues = p.nrx;
    rte_ether_addr mac{};
    if (rte_eth_macaddr_get(p.info.id, &mac) == 0) {
        char buf[RTE_ETHER_ADDR_FMT_SIZE];
        rte_ether_format_addr(buf, sizeof buf, &mac);
        p.info.mac = buf;
    }
}

void DpdkBackend::setup_queues() {
    const auto& spec = *spec_;
    const uint32_t room = std::max<uint32_t>(RTE_MBUF_DEFAULT_DATAROOM, spec.session_max_frame());
    // Sending pools hold only the session's largest frame: small mbufs keep the pool, which
    // the driver walks to free every frame it sent, dense in the cache.
    const uint32_t tx_room = spec.session_max_frame();
    const auto ring = static_cast<uint16_t>(spec.ring_size());
    tx_pools_.assign(layout_.workers.size(), {});
    for (size_t i = 0; i < layout_.workers.size(); ++i) {
        const auto& w = layout_.workers[i];
        auto& port = ports_[w.port_index];
        const int socket = rte_eth_dev_socket_id(port.info.id);
        if (worker::sends(w.role)) {
            auto& out = ports_[w.role == worker::Role::forward ? w.peer_port_index : w.port_index];
            if (w.role != worker::Role::reflect)  // a reflector sends the mbufs it received
                tx_pools_[i].pool = make_pool(fmt::format("lr{}_{}_tx{}", session_, out.info.id, w.queue),
                                              spec.effective_mbufs(), tx_room, socket);
            if (const int r = rte_eth_tx_queue_setup(out.info.id, w.queue, ring, socket, nullptr); r != 0)
                throw EnvError(fmt::format("couldn't set up TX queue {} on port {}: {}", w.queue, out.info.name,
                                           errstr(r)));
        }
        if (worker::receives(w.role)) {
            auto* pool = make_pool(fmt::format("lr{}_{}_rx{}", session_, port.info.id, w.queue),
                                   spec.effective_mbufs(), room, socket);
            if (const int r = rte_eth_rx_queue_setup(port.info.id, w.queue, ring, socket, nullptr, pool); r != 0)
                throw EnvError(fmt::format("couldn't set up RX queue {} on port {}: {}", w.queue, port.info.name,
                                           errstr(r)));
        }
    }
    // Queues without a worker still need setting up before the port can start.
    for (auto& p : ports_) {
        const int socket = rte_eth_dev_socket_id(p.info.id);
        for (uint16_t q = p.ntx; q < p.conf_tx; ++q)
            if (const int r = rte_eth_tx_queue_setup(p.info.id, q, ring, socket, nullptr); r != 0)
                throw EnvError(fmt::format("couldn't set up TX queue {} on port {}: {}", q, p.info.name, errstr(r)));
        if (p.nrx < p.conf_rx) {
            p.spare_pool = make_pool(fmt::format("lr{}_{}_spare", session_, p.info.id),
                                     2 * ring * (p.conf_rx - p.nrx) + 512, room, socket);
            for (uint16_t q = p.nrx; q < p.conf_rx; ++q)
                if (const int r = rte_eth_rx_queue_setup(p.info.id, q, ring, socket, nullptr, p.spare_pool); r != 0)
                    throw EnvError(fmt::format("couldn't set up RX queue {} on port {}: {}", q, p.info.name, errstr(r)));
        }
    }
}

void DpdkBackend::start_ports() {
    for (auto& p : ports_) {
        const int r = rte_eth_dev_start(p.info.id);
        if (r != 0) throw EnvError(fmt::format("couldn't start port {}: {}", p.info.name, errstr(r)));
        p.started = true;
        if (p.nrx) rte_eth_promiscuous_enable(p.info.id);  // ENOTSUP on some PMDs: harmless
        rte_eth_stats_reset(p.info.id);
    }
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
    for (auto& p : ports_) {
        rte_eth_link link{};
        for (;;) {
            p.info.link_up = link_up(p);
            if (p.info.link_up || std::chrono::steady_clock::now() > deadline) break;
            std::this_thread::sleep_for(std::chrono::milliseconds(50));
        }
        rte_eth_link_get_nowait(p.info.id, &link);
        // Virtual devices report a made-up speed (net_null and net_ring say 10G): unknown.
        const bool virt = p.info.driver == "net_null" || p.info.driver == "net_ring" || p.info.driver == "net_pcap";
        p.info.link_speed_mbps = virt || link.link_speed == RTE_ETH_SPEED_NUM_UNKNOWN ? 0 : link.link_speed;
        infos_.push_back(p.info);
        if (!p.info.link_up)
            throw EnvError(fmt::format("port {} ({}): link is down after 5s", p.info.name, p.info.driver));
    }
}

uint64_t DpdkBackend::flush_rx() {
    uint64_t n = 0;
    rte_mbuf* bufs[kMaxBurst];
    for (const auto& w : layout_.workers) {
        if (!worker::receives(w.role)) continue;
        const uint16_t pid = ports_[w.port_index].info.id;
        for (uint16_t k; (k = rte_eth_rx_burst(pid, w.queue, bufs, kMaxBurst)) > 0;) {
            rte_pktmbuf_free_bulk(bufs, k);
            n += k;
        }
    }
    return n;
}

void DpdkBackend::start(const std::vector<worker::WorkerConfig>& workers) {
    if (workers.size() != layout_.workers.size())
        throw EnvError(fmt::format("internal: {} workers for a session of {}", workers.size(), layout_.workers.size()));
    workers_.clear();
    for (size_t i = 0; i < workers.size(); ++i) {
        auto& tp = tx_pools_[i];
        const auto& w = workers[i];
        if (tp.pool && tp.loaded != w.tx.templates) {
            // New frames (the first trial, or another size): written once into every mbuf.
            for (const auto& f : w.tx.templates)
                if (f.size() > tp.pool->elt_size - sizeof(rte_mbuf) - RTE_PKTMBUF_HEADROOM)
                    throw EnvError(fmt::format("a {}-byte frame does not fit the mbufs of port {} (made for the "
                                               "session's largest frame)",
                                               f.size() + packet::kFcsLen, w.port));
            TemplateInit ti{&w.tx.templates};
            rte_mempool_obj_iter(tp.pool, init_tx_mbuf, &ti);
            if (!ti.layout_ok)
                throw EnvError("unexpected mbuf layout in this DPDK build (frame data not right after the header)");
            tp.loaded = w.tx.templates;
        } else if (tp.pool && w.tx.program && w.tx.templates.size() == 1) {
            // The same frames, but a queue that carries streams sizes its buffers as it sends
            // them: every buffer back at the slot's length, whatever an earlier trial left (its
            // ops rely on it when all its frames have that length; a rewrite above sets it too).
            uint16_t len = static_cast<uint16_t>(w.tx.templates[0].size());
            rte_mempool_obj_iter(tp.pool, size_tx_mbuf, &len);
        }
        workers_.push_back({w, ports_[w.port_index].info.id, tp.pool,
                            ports_[w.role == worker::Role::forward ? w.fwd.peer_port_index : w.port_index].info.id});
    }
    for (size_t i = 0; i < workers_.size(); ++i) {
        const int r = rte_eal_remote_launch(worker_main, &workers_[i], lcores_[i].first);
        if (r != 0) {
            // Stop those already running before reporting.
            auto* ctl = const_cast<worker::RunControl*>(workers[i].ctl);
            ctl->stop_tx.store(true);
            ctl->stop_rx.store(true);
            rte_eal_mp_wait_lcore();
            throw EnvError(fmt::format("couldn't launch a worker on lcore {}: {}", lcores_[i].first, errstr(r)));
        }
    }
    launched_ = true;
}

void DpdkBackend::join() {
    if (launched_) rte_eal_mp_wait_lcore();
    launched_ = false;
}

void DpdkBackend::set_link(unsigned i, bool up) {
    if (i >= ports_.size()) throw UsageError(fmt::format("no port {}", i));
    const auto& p = ports_[i].info;
    const int r = up ? rte_eth_dev_set_link_up(p.id) : rte_eth_dev_set_link_down(p.id);
    if (r == -ENOTSUP)
        throw UsageError(fmt::format("port {} ({}) cannot set its link {}: its driver does not support it", p.name,
                                     p.driver, up ? "up" : "down"));
    if (r != 0) throw EnvError(fmt::format("couldn't set port {} {}: {}", p.name, up ? "up" : "down", errstr(r)));
}

stats::PortSample DpdkBackend::port_sample(unsigned i) const {
    stats::PortSample s;
    rte_eth_stats st{};
    if (i < ports_.size() && rte_eth_stats_get(ports_[i].info.id, &st) == 0) {
        s.ipackets = st.ipackets;
        s.opackets = st.opackets;
        s.ibytes = st.ibytes;
        s.obytes = st.obytes;
        s.imissed = st.imissed;
        s.ierrors = st.ierrors;
        // net_af_xdp: imissed is its socket's "no fill buffer" count, and the kernel device's
        // rx_dropped is the fuller count (redirects into a full socket, a veth's ring overflow;
        // host_rx_drops takes the larger). Other PMDs over a kernel interface (net_af_packet)
        // tap a device whose stack drops frames linerate never needed: not counted.
        if (ports_[i].info.driver == "net_af_xdp") {
            s.xsk_rx_dropped = st.imissed;
            s.imissed = 0;
            s.idropped = util::kernel_stat(ports_[i].kernel_ifindex, "rx_dropped").value_or(0);
        }
        s.oerrors = st.oerrors;
        s.rx_nombuf = st.rx_nombuf;
    }
    if (i < ports_.size()) s.link = link_up(ports_[i]) ? 1 : 0;
    return s;
}

nlohmann::json DpdkBackend::environment() const {
    auto ports = nlohmann::json::array();
    for (const auto& p : infos_)
        ports.push_back({{"name", p.name},
                         {"id", p.id},
                         {"driver", p.driver},
                         {"mac", p.mac},
                         {"tx_queues", p.tx_queues},
                         {"rx_queues", p.rx_queues},
                         {"link_up", p.link_up},
                         {"link_speed_mbps", p.link_speed_mbps}});
    auto lcores = nlohmann::json::array();
    for (const auto& [lc, cpu] : lcores_) lcores.push_back({{"lcore", lc}, {"cpu", cpu}});
    return {{"backend", "dpdk"},
            {"dpdk_version", rte_version()},
            {"eal_args", eal_args_},
            {"main_lcore", rte_get_main_lcore()},
            {"worker_lcores", lcores},
            {"ports", ports}};
}

void DpdkBackend::close() {
    join();
    // Closing releases the queues (and the mbufs they hold) before their pools are freed; a
    // later session in this process re-creates virtual devices (dpdk_eal.cpp).
    for (auto& p : ports_) {
        if (p.started) rte_eth_dev_stop(p.info.id);
        p.started = false;
        rte_eth_dev_close(p.info.id);
    }
    // The ring ports' devices go too: a later session (the OTG server's next configuration)
    // creates them again under the same names.
    for (size_t i = 0; i < aliases_.size(); ++i) {
        const auto& [alias, id] = aliases_[i];
        if (std::none_of(ports_.begin(), ports_.end(), [id = id](const Port& p) { return p.info.id == id; }))
            rte_eth_dev_close(id);  // a ring port the session did not use
        rte_vdev_uninit(("net_ring_" + alias).c_str());
    }
    ports_.clear();
    infos_.clear();
    for (auto* mp : pools_) rte_mempool_free(mp);
    pools_.clear();
    for (auto* r : rings_) rte_ring_free(r);
    rings_.clear();
    aliases_.clear();
    tx_pools_.clear();
    workers_.clear();
}

}  // namespace

std::unique_ptr<backend::Backend> make_dpdk_backend() { return std::make_unique<DpdkBackend>(); }

}  // namespace lr::dpdk
