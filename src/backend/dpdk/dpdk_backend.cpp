#include "backend/dpdk/dpdk_backend.h"

#include <algorithm>
#include <chrono>
#include <cstring>
#include <deque>
#include <fmt/format.h>
#include <fstream>
#include <sched.h>
#include <thread>

#include <rte_eal.h>
#include <rte_errno.h>
#include <rte_ethdev.h>
#include <rte_lcore.h>
#include <rte_mbuf.h>
#include <rte_eth_ring.h>
#include <rte_mempool.h>
#include <rte_ring.h>
#include <rte_version.h>

#include "backend/dpdk/dpdk_worker.h"
#include "util/error.h"

namespace lr::dpdk {
namespace {

bool has_arg(const std::vector<std::string>& v, std::initializer_list<const char*> names) {
    for (const auto& a : v)
        for (const char* n : names) {
            const size_t len = std::strlen(n);
            // "--lcores", "--lcores=..", and short forms glued to their value ("-l0-3").
            if (a.compare(0, len, n) == 0 && (a.size() == len || a[len] == '=' || n[1] != '-')) return true;
        }
    return false;
}

uint64_t free_hugepages() {
    uint64_t total = 0;
    for (const char* sz : {"hugepages-2048kB", "hugepages-1048576kB"}) {
        std::ifstream f(fmt::format("/sys/kernel/mm/hugepages/{}/free_hugepages", sz));
        uint64_t n = 0;
        if (f >> n) total += n;
    }
    return total;
}

std::string errstr(int err) { return rte_strerror(err < 0 ? -err : err); }

struct Port {
    engine::PortInfo info;
    uint16_t ntx = 0, nrx = 0;    // queues with workers
    uint16_t conf_tx = 0, conf_rx = 0;  // queues configured (some PMDs, e.g. net_af_xdp,
                                        // pair each TX queue with an RX queue)
    bool started = false;
    rte_mempool* spare_pool = nullptr;  // for RX queues without a worker
};

class DpdkBackend final : public engine::Backend {
public:
    ~DpdkBackend() override { close(); }
    std::string name() const override { return "dpdk"; }
    void open(const spec::RunSpec& spec) override;
    const std::vector<engine::PortInfo>& ports() const override { return infos_; }
    unsigned port_index(const std::string& name) const override;
    void launch(const std::vector<engine::WorkerPlan>& plans, engine::RunControl& ctl) override;
    void join() override;
    stats::PortSample port_sample(unsigned i) const override;
    nlohmann::json environment() const override;
    void close() override;

private:
    uint16_t resolve(const std::string& name) const;
    void make_ring_pair(const std::string& a, const std::string& b);
    rte_mempool* make_pool(const std::string& name, uint32_t n, uint32_t data_room, int socket);
    void start_ports();

    const spec::RunSpec* spec_ = nullptr;
    std::vector<std::string> eal_args_;
    bool eal_up_ = false;
    bool launched_ = false;
    unsigned ring_pairs_made_ = 0;
    std::vector<std::pair<std::string, uint16_t>> aliases_;
    std::vector<Port> ports_;
    std::vector<engine::PortInfo> infos_;
    std::vector<rte_mempool*> pools_;
    std::deque<WorkerCtx> workers_;  // stable addresses for remote launch
    std::vector<std::pair<unsigned, int>> lcore_map_;  // (lcore, cpu)
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
        // rte_ring names are limited to 29 characters: index the pair, not the port names.
        const auto n1 = fmt::format("lrp{}_{}_ab{}", ring_pairs_made_, a.size(), q);
        const auto n2 = fmt::format("lrp{}_{}_ba{}", ring_pairs_made_, b.size(), q);
        ab[q] = rte_ring_create(n1.c_str(), kRingSize, SOCKET_ID_ANY, RING_F_SP_ENQ | RING_F_SC_DEQ);
        ba[q] = rte_ring_create(n2.c_str(), kRingSize, SOCKET_ID_ANY, RING_F_SP_ENQ | RING_F_SC_DEQ);
        if (!ab[q] || !ba[q])
            throw EnvError(fmt::format("--ring-pair {},{}: couldn't create rings: {}", a, b, errstr(rte_errno)));
    }
    ++ring_pairs_made_;
    const int pa = rte_eth_from_rings(a.c_str(), ba, kQueues, ab, kQueues, SOCKET_ID_ANY);
    const int pb = pa < 0 ? -1 : rte_eth_from_rings(b.c_str(), ab, kQueues, ba, kQueues, SOCKET_ID_ANY);
    if (pa < 0 || pb < 0)
        throw EnvError(fmt::format("--ring-pair {},{}: couldn't create the ring ports: {}", a, b,
                                   errstr(rte_errno)));
    // The PMD names them net_ring_<name>; the user knows them by <name>.
    aliases_.emplace_back(a, static_cast<uint16_t>(pa));
    aliases_.emplace_back(b, static_cast<uint16_t>(pb));
}

unsigned DpdkBackend::port_index(const std::string& name) const {
    for (unsigned i = 0; i < infos_.size(); ++i)
        if (infos_[i].name == name) return i;
    throw UsageError(fmt::format("port \"{}\" was not opened", name));
}

void DpdkBackend::open(const spec::RunSpec& spec) {
    spec_ = &spec;
    // Request/response and reflector runs serve a queue's TX and RX with one worker.
    const bool paired = spec.outstanding || spec.reflect;
    const unsigned workers = spec.tx_queue_total() + (paired ? 0 : spec.rx_queue_total());
    const auto cpus = engine::allowed_cpus();
    eal_args_ = effective_eal_args(spec.eal_args, workers, cpus);
    if (!has_arg(eal_args_, {"--no-huge"}) && free_hugepages() == 0)
        throw EnvError(
            "no free hugepages: reserve some (echo 512 > /sys/kernel/mm/hugepages/hugepages-2048kB/nr_hugepages, "
            "or scripts/testbed.sh up) or add --no-huge to the EAL arguments");

    std::vector<char*> argv;
    std::vector<std::string> store = eal_args_;
    store.insert(store.begin(), "linerate");
    for (auto& s : store) argv.push_back(s.data());
    argv.push_back(nullptr);
    const int rc = rte_eal_init(static_cast<int>(store.size()), argv.data());
    if (rc < 0)
        throw EnvError(fmt::format("DPDK EAL initialisation failed: {} (EAL arguments: {})", errstr(rte_errno),
                                   fmt::join(eal_args_, " ")));
    eal_up_ = true;
    if (rte_lcore_count() < workers + 1)
        throw EnvError(fmt::format("{} workers need {} worker lcores but EAL has {} (check -l/--lcores)", workers,
                                   workers, rte_lcore_count() - 1));
    unsigned lc;
    RTE_LCORE_FOREACH_WORKER(lc) lcore_map_.push_back({lc, rte_lcore_to_cpu_id(static_cast<int>(lc))});

    for (const auto& [a, b] : spec.ring_pairs) make_ring_pair(a, b);

    auto add = [&](const spec::PortQueues& pq, bool tx) {
        const uint16_t pid = resolve(pq.port);
        auto it = std::find_if(ports_.begin(), ports_.end(), [&](const Port& p) { return p.info.id == pid; });
        if (it == ports_.end()) {
            ports_.push_back({});
            it = ports_.end() - 1;
            it->info.id = pid;
            it->info.name = pq.port;
        }
        (tx ? it->ntx : it->nrx) = pq.queues;
    };
    for (const auto& pq : spec.tx) add(pq, true);
    for (const auto& pq : spec.rx) add(pq, false);

    const auto& f = spec.frame;
    const uint32_t l3 = f.frame_size - 18 - (f.vlan ? 4 : 0);
    for (auto& p : ports_) {
        rte_eth_dev_info di{};
        int r = rte_eth_dev_info_get(p.info.id, &di);
        if (r != 0) throw EnvError(fmt::format("port {}: can't read device info: {}", p.info.name, errstr(r)));
        p.info.driver = di.driver_name ? di.driver_name : "?";
        const uint16_t nq = std::max<uint16_t>({p.ntx, p.nrx, 1});
        if (p.ntx > di.max_tx_queues || p.nrx > di.max_rx_queues)
            throw UsageError(fmt::format("port {} ({}) supports at most {} TX and {} RX queues; {} and {} requested",
                                         p.info.name, p.info.driver, di.max_tx_queues, di.max_rx_queues, p.ntx,
                                         p.nrx));
        p.conf_tx = std::min(nq, di.max_tx_queues);
        p.conf_rx = std::min(nq, di.max_rx_queues);
        if (l3 > di.max_mtu)
            throw UsageError(fmt::format("frame size {} needs MTU {} but port {} allows at most {}", f.frame_size, l3,
                                         p.info.name, di.max_mtu));
        rte_eth_conf conf{};
        if (p.conf_rx > 1 && di.flow_type_rss_offloads) {
            conf.rxmode.mq_mode = RTE_ETH_MQ_RX_RSS;
            conf.rx_adv_conf.rss_conf.rss_hf =
                (RTE_ETH_RSS_IP | RTE_ETH_RSS_UDP | RTE_ETH_RSS_TCP) & di.flow_type_rss_offloads;
        }
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
        infos_.push_back(p.info);
    }
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

struct TemplateInit {
    const std::vector<std::vector<uint8_t>>* frames;
    bool layout_ok = true;  // frame data at mbuf + sizeof(rte_mbuf) + headroom (the TX loop relies on it)
};

void init_tx_mbuf(rte_mempool*, void* opaque, void* obj, unsigned idx) {
    const auto& frames = *static_cast<TemplateInit*>(opaque)->frames;
    auto* m = static_cast<rte_mbuf*>(obj);
    auto* ti = static_cast<TemplateInit*>(opaque);
    if (rte_pktmbuf_mtod(m, uint8_t*) != reinterpret_cast<uint8_t*>(m) + sizeof(rte_mbuf) + RTE_PKTMBUF_HEADROOM)
        ti->layout_ok = false;
    const auto& f = frames[idx % frames.size()];
    std::memcpy(rte_pktmbuf_mtod(m, uint8_t*), f.data(), f.size());
    m->data_len = static_cast<uint16_t>(f.size());
    m->pkt_len = static_cast<uint32_t>(f.size());
    m->nb_segs = 1;
    m->next = nullptr;
}

void DpdkBackend::launch(const std::vector<engine::WorkerPlan>& plans, engine::RunControl& ctl) {
    const auto& spec = *spec_;
    const uint32_t frame_len = spec.frame.frame_size - packet::kFcsLen;
    const uint32_t rx_room = std::max<uint32_t>(RTE_MBUF_DEFAULT_DATAROOM, spec.frame.frame_size);
    const bool oversubscribed = engine::allowed_cpus().size() < plans.size() + 1;
    const size_t needed = spec.outstanding || spec.reflect ? spec.tx_queue_total() : plans.size();
    if (needed > lcore_map_.size())
        throw EnvError(fmt::format("{} workers but only {} worker lcores", needed, lcore_map_.size()));

    for (size_t i = 0; i < plans.size(); ++i) {
        const auto& pl = plans[i];
        auto& port = ports_[pl.id.port_index];
        const int socket = rte_eth_dev_socket_id(port.info.id);
        WorkerCtx w;
        static_cast<engine::LoopConfig&>(w) = engine::make_loop_config(spec, pl, ctl, oversubscribed);
        w.dir = pl.id.dir;
        w.port = port.info.id;
        w.queue = pl.id.queue;
        const auto pname = fmt::format("lr{}_{}{}", port.info.id, stats::dir_str(pl.id.dir), pl.id.queue);
        int r;
        if (pl.id.dir == stats::Dir::tx) {
            const auto& frames = w.templates;
            w.pool = make_pool(pname, spec.effective_mbufs(), frame_len, socket);
            TemplateInit ti{&frames};
            rte_mempool_obj_iter(w.pool, init_tx_mbuf, &ti);
            if (!ti.layout_ok)
                throw EnvError("unexpected mbuf layout in this DPDK build (frame data not right after the header)");
            r = rte_eth_tx_queue_setup(port.info.id, pl.id.queue, static_cast<uint16_t>(spec.ring_size()), socket,
                                       nullptr);
        } else {
            w.pool = make_pool(pname, spec.effective_mbufs(), rx_room, socket);
            r = rte_eth_rx_queue_setup(port.info.id, pl.id.queue, static_cast<uint16_t>(spec.ring_size()), socket,
                                       nullptr, w.pool);
        }
        if (r != 0)
            throw EnvError(fmt::format("couldn't set up {} queue {} on port {}: {}", stats::dir_str(pl.id.dir),
                                       pl.id.queue, port.info.name, errstr(r)));
        workers_.push_back(w);
    }
    // Queues without a worker still need setting up before the port can start.
    for (auto& p : ports_) {
        const int socket = rte_eth_dev_socket_id(p.info.id);
        for (uint16_t q = p.ntx; q < p.conf_tx; ++q) {
            const int r = rte_eth_tx_queue_setup(p.info.id, q, static_cast<uint16_t>(spec.ring_size()), socket, nullptr);
            if (r != 0) throw EnvError(fmt::format("couldn't set up tx queue {} on port {}: {}", q, p.info.name, errstr(r)));
        }
        if (p.nrx < p.conf_rx) {
            p.spare_pool = make_pool(fmt::format("lr{}_spare", p.info.id),
                                     2 * spec.ring_size() * (p.conf_rx - p.nrx) + 512, rx_room, socket);
            for (uint16_t q = p.nrx; q < p.conf_rx; ++q) {
                const int r = rte_eth_rx_queue_setup(p.info.id, q, static_cast<uint16_t>(spec.ring_size()), socket,
                                                     nullptr, p.spare_pool);
                if (r != 0)
                    throw EnvError(fmt::format("couldn't set up rx queue {} on port {}: {}", q, p.info.name, errstr(r)));
            }
        }
    }
    start_ports();

    if (spec.outstanding || spec.reflect) {
        // Request/response and reflector: one worker serves the TX and RX queue of a port.
        for (auto& t : workers_) {
            if (t.dir != stats::Dir::tx) continue;
            for (auto& x : workers_)
                if (x.dir == stats::Dir::rx && x.port == t.port && x.queue == t.queue) {
                    t.rr_rx = &x;
                    x.launched_by_pair = true;
                }
            t.outstanding = spec.outstanding;
            t.reflect = spec.reflect;
            t.response_timeout_s = spec.response_timeout_s;
        }
    }
    size_t li = 0;
    for (auto& w : workers_) {
        if (w.launched_by_pair) continue;
        const int r = rte_eal_remote_launch(worker_main, &w, lcore_map_[li++].first);
        if (r != 0) {
            ctl.stop_tx.store(true);
            ctl.stop_rx.store(true);
            rte_eal_mp_wait_lcore();
            throw EnvError(fmt::format("couldn't launch a worker on lcore {}: {}", lcore_map_[li - 1].first, errstr(r)));
        }
    }
    launched_ = true;
}

void DpdkBackend::start_ports() {
    for (auto& p : ports_) {
        const int r = rte_eth_dev_start(p.info.id);
        if (r != 0) throw EnvError(fmt::format("couldn't start port {}: {}", p.info.name, errstr(r)));
        p.started = true;
        if (p.nrx) rte_eth_promiscuous_enable(p.info.id);  // ENOTSUP on some PMDs: harmless
    }
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
    for (size_t i = 0; i < ports_.size(); ++i) {
        auto& p = ports_[i];
        rte_eth_link link{};
        for (;;) {
            rte_eth_link_get_nowait(p.info.id, &link);
            if (link.link_status == RTE_ETH_LINK_UP || std::chrono::steady_clock::now() > deadline) break;
            std::this_thread::sleep_for(std::chrono::milliseconds(50));
        }
        p.info.link_up = link.link_status == RTE_ETH_LINK_UP;
        p.info.link_speed_mbps = link.link_speed == RTE_ETH_SPEED_NUM_UNKNOWN ? 0 : link.link_speed;
        infos_[i] = p.info;
        if (!p.info.link_up)
            throw EnvError(fmt::format("port {} ({}): link is down after 5s", p.info.name, p.info.driver));
    }
}

void DpdkBackend::join() {
    if (launched_) rte_eal_mp_wait_lcore();
    launched_ = false;
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
        s.oerrors = st.oerrors;
        s.rx_nombuf = st.rx_nombuf;
    }
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
    for (const auto& [lc, cpu] : lcore_map_) lcores.push_back({{"lcore", lc}, {"cpu", cpu}});
    return {{"backend", "dpdk"},
            {"dpdk_version", rte_version()},
            {"eal_args", eal_args_},
            {"main_lcore", eal_up_ ? rte_get_main_lcore() : 0},
            {"worker_lcores", lcores},
            {"ports", ports}};
}

void DpdkBackend::close() {
    join();
    for (auto& p : ports_) {
        if (p.started) rte_eth_dev_stop(p.info.id);
        p.started = false;
        if (eal_up_) rte_eth_dev_close(p.info.id);
    }
    ports_.clear();
    for (auto* mp : pools_) rte_mempool_free(mp);
    pools_.clear();
    if (eal_up_) rte_eal_cleanup();
    eal_up_ = false;
}

}  // namespace

std::vector<std::string> effective_eal_args(const std::vector<std::string>& user, unsigned workers,
                                            const std::vector<int>& cpus) {
    std::vector<std::string> a = user;
    if (!has_arg(a, {"-l", "-c", "--lcores"})) {
        // Main lcore on the first CPU (it mostly sleeps); workers from the second CPU on,
        // wrapping when there are more workers than CPUs.
        std::string m = fmt::format("0@{}", cpus[0]);
        for (unsigned i = 1; i <= workers; ++i) m += fmt::format(",{}@{}", i, cpus[i % cpus.size()]);
        a.push_back("--lcores=" + m);
    }
    if (!has_arg(a, {"--in-memory", "--file-prefix", "--proc-type"})) a.push_back("--in-memory");
    if (!has_arg(a, {"--telemetry", "--no-telemetry"})) a.push_back("--no-telemetry");
    if (!has_arg(a, {"--log-level"})) a.push_back("--log-level=lib.eal:warning");
    return a;
}

std::unique_ptr<engine::Backend> make_dpdk_backend() { return std::make_unique<DpdkBackend>(); }

}  // namespace lr::dpdk
