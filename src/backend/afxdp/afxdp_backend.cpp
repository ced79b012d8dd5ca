#include "backend/afxdp/afxdp_backend.h"

#include <algorithm>
#include <bpf/libbpf.h>
#include <fmt/format.h>
#include <pthread.h>
#include <sched.h>
#include <sys/resource.h>
#include <chrono>
#include <functional>
#include <thread>

#include "backend/afxdp/netdev.h"
#include "backend/afxdp/xdp_prog.h"
#include "backend/afxdp/xdp_sink.h"
#include "backend/afxdp/xsk_queue.h"
#include "util/error.h"

namespace lr::afxdp {
namespace {

struct Port {
    NetdevInfo nd;
    uint64_t base_ipackets = 0, base_opackets = 0, base_ibytes = 0, base_obytes = 0, base_ierrors = 0,
             base_oerrors = 0;  // interface counters when the run opened it: reports are run-relative
    engine::PortInfo info;
    uint16_t ntx = 0, nrx = 0;
    std::unique_ptr<XdpRxProgram> prog;
    std::unique_ptr<XdpSink> sink;  // --rx-mode xdp: no sockets on this port
    std::vector<std::unique_ptr<XskQueue>> txq, rxq;
};

// --rx-mode xdp: the counting happens in the driver; this thread only publishes the sink's
// map counters for its queue into the queue's counters (it is their single writer).
void sink_poller(const XdpSink* sink, engine::WorkerPlan pl, const engine::RunControl* ctl) {
    auto& c = *pl.counters;
    stats::set_state(c, stats::WorkerState::running);
    uint64_t polls = 0, seen = 0, first = 0, last = 0;
    auto publish_all = [&] {
        const auto s = sink->queue_stats(pl.id.queue);
        const uint64_t now = stats::now_ns();
        if (s.ours != seen) {
            if (!first) first = now;
            last = now;
            seen = s.ours;
        }
        stats::publish(c.packets, s.frames);
        stats::publish(c.bytes, s.ours_bytes);
        stats::publish(c.rx_ours, s.ours);
        stats::publish(c.rx_unique, s.ours);  // the sink cannot tell duplicates apart
        stats::publish(c.rx_foreign, s.foreign);
        stats::publish(c.rx_malformed, s.malformed);
        stats::publish(c.polls, ++polls);
    };
    while (!ctl->stop_rx.load(std::memory_order_relaxed)) {
        publish_all();
        std::this_thread::sleep_for(std::chrono::milliseconds(2));
    }
    publish_all();
    if (pl.id.queue == 0 && pl.rx_result) pl.rx_result->sink = sink->streams();  // per port, once
    stats::publish(c.first_pkt_ns, first);
    stats::publish(c.last_pkt_ns, last);
    stats::set_state(c, stats::WorkerState::finished);
}

class AfxdpBackend final : public engine::Backend {
public:
    ~AfxdpBackend() override { close(); }
    std::string name() const override { return "afxdp"; }
    void open(const spec::RunSpec& spec) override;
    const std::vector<engine::PortInfo>& ports() const override { return infos_; }
    unsigned port_index(const std::string& name) const override {
        for (unsigned i = 0; i < infos_.size(); ++i)
            if (infos_[i].name == name) return i;
        throw UsageError(fmt::format("port \"{}\" was not opened", name));
    }
    void launch(const std::vector<engine::WorkerPlan>& plans, engine::RunControl& ctl) override;
    void join() override {
        for (auto& t : threads_)
            if (t.joinable()) t.join();
        threads_.clear();
    }
    stats::PortSample port_sample(unsigned i) const override;
    nlohmann::json environment() const override;
    void close() override {
        join();
        ports_.clear();  // sockets first, then the program (its link closes: detached)
    }

private:
    void spawn(int cpu, std::function<void()> fn);  // a worker thread pinned to `cpu`

    const spec::RunSpec* spec_ = nullptr;
    std::vector<Port> ports_;
    std::vector<engine::PortInfo> infos_;
    std::vector<std::thread> threads_;
    std::vector<int> worker_cpus_;
};

void AfxdpBackend::open(const spec::RunSpec& spec) {
    spec_ = &spec;
    // UMEM pinning counts against RLIMIT_MEMLOCK on older kernels; lift it if we may.
    rlimit unlimited{RLIM_INFINITY, RLIM_INFINITY};
    setrlimit(RLIMIT_MEMLOCK, &unlimited);

    auto add = [&](const spec::PortQueues& pq, bool tx) {
        auto it = std::find_if(ports_.begin(), ports_.end(), [&](const Port& p) { return p.nd.name == pq.port; });
        if (it == ports_.end()) {
            ports_.emplace_back();
            it = ports_.end() - 1;
            it->nd = netdev_info(pq.port);
        }
        (tx ? it->ntx : it->nrx) = pq.queues;
    };
    for (const auto& pq : spec.tx) add(pq, true);
    for (const auto& pq : spec.rx) add(pq, false);

    const auto& f = spec.frame;
    const unsigned l3 = f.frame_size - 18 - (f.vlan ? 4 : 0);
    for (auto& p : ports_) {
        const auto& nd = p.nd;
        if (p.ntx && p.nrx && !spec.reflect && !spec.outstanding)
            throw UsageError(fmt::format("afxdp: {} is named with both --tx and --rx; one AF_XDP socket per queue "
                                         "cannot be shared by two workers yet (use two interfaces, e.g. a veth pair)",
                                         nd.name));
        const unsigned avail = p.ntx ? nd.tx_queues : nd.rx_queues;
        if (std::max(p.ntx, p.nrx) > avail)
            throw UsageError(fmt::format("interface {} has {} {} queues; {} requested", nd.name, avail,
                                         p.ntx ? "TX" : "RX", std::max(p.ntx, p.nrx)));
        if (std::max(p.ntx, p.nrx) > LR_MAX_QUEUES)
            throw UsageError(fmt::format("afxdp supports at most {} queues per interface", LR_MAX_QUEUES));
        if (l3 > nd.mtu)
            throw UsageError(fmt::format("frame size {} needs MTU {} but {} has MTU {}", f.frame_size, l3, nd.name,
                                         nd.mtu));
        if (!spec.force && carries_default_route(nd.name))
            throw UsageError(fmt::format("{} carries the default route; linerate refuses to flood it unless you pass "
                                         "--force",
                                         nd.name));
        if (!nd.up) throw EnvError(fmt::format("interface {} is down (ip link set dev {} up)", nd.name, nd.name));
    }

    const XdpMode xmode = parse_xdp_mode(spec.xdp_mode);
    const CopyMode cmode = parse_copy_mode(spec.xsk_mode);
    RxMatch match;
    match.udp = f.l4 == packet::L4::udp;
    match.tcp = f.l4 == packet::L4::tcp;
    const uint32_t nflows = spec.effective_flows();
    const bool vary_dport = nflows > 1 && (spec.vary & flow::vary_dst_port);
    match.dst_port_lo = f.dst_port;
    match.dst_port_hi = static_cast<uint16_t>(vary_dport ? f.dst_port + nflows - 1 : f.dst_port);
    if (spec.reflect) match.udp = match.tcp = true;  // the reflector checks the signature magic itself

    for (auto& p : ports_) {
        XskConfig xc;
        xc.ifname = p.nd.name;
        xc.ring = spec.ring_size();
        xc.frames = std::max<uint32_t>(4096, 4 * spec.ring_size());
        xc.mode = cmode;
        if (p.nrx && spec.rx_mode == "xdp") {
            p.sink = std::make_unique<XdpSink>(match, spec.nonce, spec.rx_streams(), p.nd.name, p.nd.ifindex, xmode);
        } else if (p.nrx) {
            p.prog = std::make_unique<XdpRxProgram>(match);
            for (uint16_t q = 0; q < p.nrx; ++q) {
                xc.queue = q;
                xc.rx = true;
                xc.tx = spec.reflect || (spec.outstanding && p.ntx);  // one socket sends and receives
                xc.rx_first_chunk = spec.outstanding && p.ntx ? xc.frames / 2 : 0;
                p.rxq.push_back(std::make_unique<XskQueue>(xc));
                p.prog->add_socket(q, p.rxq.back()->fd());
            }
            p.prog->attach(p.nd.name, p.nd.ifindex, xmode);  // sockets are in the map before traffic flows
        }
        for (uint16_t q = 0; q < p.ntx && !spec.reflect && !(spec.outstanding && p.nrx); ++q) {
            xc.queue = q;
            xc.rx = false;
            xc.tx = true;
            p.txq.push_back(std::make_unique<XskQueue>(xc));
        }
        const auto& n = p.nd.name;
        p.base_ipackets = netdev_stat(n, "rx_packets").value_or(0);
        p.base_opackets = netdev_stat(n, "tx_packets").value_or(0);
        p.base_ibytes = netdev_stat(n, "rx_bytes").value_or(0);
        p.base_obytes = netdev_stat(n, "tx_bytes").value_or(0);
        p.base_ierrors = netdev_stat(n, "rx_errors").value_or(0);
        p.base_oerrors = netdev_stat(n, "tx_errors").value_or(0);
        p.info.name = p.nd.name;
        p.info.driver = p.nd.driver;
        p.info.id = static_cast<uint16_t>(p.nd.ifindex);
        p.info.tx_queues = p.ntx;
        p.info.rx_queues = p.nrx;
        p.info.mac = p.nd.mac;
        p.info.link_up = p.nd.up;
        infos_.push_back(p.info);
    }
}

void AfxdpBackend::launch(const std::vector<engine::WorkerPlan>& plans, engine::RunControl& ctl) {
    const auto& spec = *spec_;
    const auto cpus = spec.cpus.empty() ? engine::allowed_cpus() : spec.cpus;
    const bool oversubscribed = engine::allowed_cpus().size() < plans.size() + 1;
    for (size_t i = 0; i < plans.size(); ++i) {
        const auto& pl = plans[i];
        auto& port = ports_[pl.id.port_index];
        // Worker i on CPU list[(i+1) mod n] (automatic: the first CPU is left to the control
        // thread), or exactly the CPUs of --cpus in order.
        const int cpu0 = spec.cpus.empty() ? cpus[(i + 1) % cpus.size()] : cpus[i % cpus.size()];
        if (spec.reflect || (spec.outstanding && port.txq.empty())) {
            // One thread per queue: the TX plan runs the reflector or the request/response
            // loop with the RX plan's counters, on the queue's single socket.
            if (pl.id.dir == stats::Dir::rx) continue;
            const auto rx_plan = std::find_if(plans.begin(), plans.end(), [&](const engine::WorkerPlan& x) {
                return x.id.dir == stats::Dir::rx && x.id.port_index == pl.id.port_index && x.id.queue == pl.id.queue;
            });
            XskQueue* q = port.rxq[pl.id.queue].get();
            XskQueue::LoopCtx c = engine::make_loop_config(spec, pl, ctl, oversubscribed);
            if (spec.outstanding) {
                q->load_templates(c.templates);
                XskQueue::LoopCtx rcfg = engine::make_loop_config(spec, *rx_plan, ctl, oversubscribed);
                spawn(cpu0, [q, c, rcfg, n = spec.outstanding, t = spec.response_timeout_s] {
                    stats::set_state(*c.counters, stats::WorkerState::running);
                    q->rr_loop(c, rcfg, n, t);
                    if (c.counters->state.load() != static_cast<uint32_t>(stats::WorkerState::finished))
                        stats::set_state(*c.counters, stats::WorkerState::finished);
                });
                continue;
            }
            stats::QueueCounters* rxc = rx_plan->counters;
            spawn(cpu0, [q, c, rxc] {
                stats::set_state(*c.counters, stats::WorkerState::running);
                q->reflect_loop(c, *rxc);
                stats::set_state(*c.counters, stats::WorkerState::finished);
            });
            continue;
        }
        if (pl.id.dir == stats::Dir::rx && port.sink) {
            spawn(cpu0, [sink = port.sink.get(), pl, c = &ctl] { sink_poller(sink, pl, c); });
            continue;
        }
        XskQueue* q = (pl.id.dir == stats::Dir::tx ? port.txq : port.rxq)[pl.id.queue].get();
        XskQueue::LoopCtx c = engine::make_loop_config(spec, pl, ctl, oversubscribed);
        if (pl.id.dir == stats::Dir::tx) q->load_templates(c.templates);
        const bool tx = pl.id.dir == stats::Dir::tx;
        spawn(cpu0, [q, c, tx] {
            stats::set_state(*c.counters, stats::WorkerState::running);
            bool ok = true;
            if (tx) ok = q->tx_loop(c);
            else q->rx_loop(c);
            stats::set_state(*c.counters, ok ? stats::WorkerState::finished : stats::WorkerState::failed);
        });
    }
}

void AfxdpBackend::spawn(int cpu, std::function<void()> fn) {
    worker_cpus_.push_back(cpu);
    threads_.emplace_back(std::move(fn));
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(cpu, &set);
    pthread_setaffinity_np(threads_.back().native_handle(), sizeof(set), &set);
}

stats::PortSample AfxdpBackend::port_sample(unsigned i) const {
    stats::PortSample s;
    if (i >= ports_.size()) return s;
    const auto& p = ports_[i];
    const auto& n = p.nd.name;
    auto rel = [&](const char* name, uint64_t base) {
        const uint64_t v = netdev_stat(n, name).value_or(base);
        return v >= base ? v - base : 0;
    };
    s.ipackets = rel("rx_packets", p.base_ipackets);
    s.opackets = rel("tx_packets", p.base_opackets);
    s.ibytes = rel("rx_bytes", p.base_ibytes);
    s.obytes = rel("tx_bytes", p.base_obytes);
    s.ierrors = rel("rx_errors", p.base_ierrors);
    s.oerrors = rel("tx_errors", p.base_oerrors);
    if (p.sink)
        for (uint32_t q = 0; q < p.nrx; ++q) {
            const auto st = p.sink->queue_stats(q);
            s.xdp_received += st.frames;
            s.xdp_redirected += st.ours;  // counted in the driver
            s.xdp_passed += st.foreign;
        }
    if (p.prog)
        for (uint32_t q = 0; q < p.nrx; ++q) {
            const auto st = p.prog->queue_stats(q);
            s.xdp_received += st.received;
            s.xdp_redirected += st.redirected;
            s.xdp_passed += st.passed;
            s.xdp_redirect_failed += st.redirect_failed;
        }
    for (const auto* v : {&p.rxq, &p.txq})
        for (const auto& q : *v) {
            const auto x = q->stats();
            s.xsk_rx_dropped += x.rx_dropped;
            s.xsk_rx_ring_full += x.rx_ring_full;
            s.xsk_rx_fill_empty += x.rx_fill_ring_empty_descs;
            s.xsk_rx_invalid += x.rx_invalid_descs;
            s.xsk_tx_invalid += x.tx_invalid_descs;
            s.xsk_tx_ring_empty += x.tx_ring_empty_descs;
        }
    return s;
}

nlohmann::json AfxdpBackend::environment() const {
    auto ports = nlohmann::json::array();
    for (const auto& p : ports_) {
        auto socks = nlohmann::json::array();
        for (const auto* v : {&p.txq, &p.rxq})
            for (const auto& q : *v)
                socks.push_back({{"queue", q->config().queue},
                                 {"dir", q->config().tx ? "tx" : "rx"},
                                 {"requested", copy_mode_str(q->config().mode)},
                                 {"obtained", q->zero_copy() ? "zero-copy" : "copy"}});
        ports.push_back({{"name", p.nd.name},
                         {"ifindex", p.nd.ifindex},
                         {"driver", p.nd.driver},
                         {"mac", p.nd.mac},
                         {"mtu", p.nd.mtu},
                         {"queues_available", {{"rx", p.nd.rx_queues}, {"tx", p.nd.tx_queues}}},
                         {"tx_queues", p.ntx},
                         {"rx_queues", p.nrx},
                         {"rx_mode", p.sink ? "xdp counting sink" : p.nrx ? "socket" : "none"},
                         {"xdp_mode",
                          p.sink ? nlohmann::json{{"requested", spec_->xdp_mode},
                                                  {"obtained", xdp_mode_str(p.sink->attached_mode())},
                                                  {"prog_id", p.sink->prog_id()},
                                                  {"attach", "bpf_link"}}
                          : p.prog ? nlohmann::json{{"requested", spec_->xdp_mode},
                                                  {"obtained", xdp_mode_str(p.prog->attached_mode())},
                                                  {"prog_id", p.prog->prog_id()},
                                                  {"attach", "bpf_link"}}
                                 : nlohmann::json(nullptr)},
                         {"sockets", socks}});
    }
    return {{"backend", "afxdp"},
            {"libbpf_version", fmt::format("{}.{}", libbpf_major_version(), libbpf_minor_version())},
            {"libxdp_version", LINERATE_LIBXDP_VERSION},
            {"worker_cpus", worker_cpus_},
            {"ports", ports}};
}

}  // namespace

std::unique_ptr<engine::Backend> make_afxdp_backend() { return std::make_unique<AfxdpBackend>(); }

}  // namespace lr::afxdp
