#include "backend/loop/loop_backend.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstring>
#include <fmt/format.h>
#include <thread>

#include "packet/signature.h"
#include "util/cpus.h"
#include "util/error.h"
#include "worker/engine_common.h"
#include "worker/rr_engine.h"
#include "worker/rx_engine.h"
#include "worker/tx_engine.h"

namespace lr::loop {
namespace {

using spec::kMaxBurst;

// One RX queue's wire: a bounded ring of frame slots, one producer, one consumer.
struct Wire {
    uint32_t cap = 0, slot = 0;
    std::vector<uint8_t> mem;
    std::vector<uint32_t> len;
    std::vector<uint64_t> due;  // steady-clock ns when the receiver may see the frame
    alignas(64) std::atomic<uint64_t> head{0};  // producer
    alignas(64) std::atomic<uint64_t> tail{0};  // consumer
    Wire(uint32_t c, uint32_t s) : cap(c), slot(s), mem(size_t(c) * s), len(c), due(c) {}
    bool push(const uint8_t* f, uint32_t n, uint64_t due_ns) {
        const uint64_t h = head.load(std::memory_order_relaxed);
        if (h - tail.load(std::memory_order_acquire) >= cap) return false;
        const size_t i = h % cap;
        std::memcpy(mem.data() + i * slot, f, n);
        len[i] = n;
        due[i] = due_ns;
        head.store(h + 1, std::memory_order_release);
        return true;
    }
};

// What each worker's wire side did; single writer (the worker), read by the control thread.
struct alignas(64) WireStats {
    std::atomic<uint64_t> sent{0}, delivered{0}, dropped{0}, duplicated{0}, no_queue{0};
};

struct Shared {
    LoopFaults faults;
    std::vector<std::vector<std::unique_ptr<Wire>>> wires;  // [port][queue]
};

class LoopTxOps {
public:
    LoopTxOps(const Shared& sh, Wire* wire, std::vector<uint8_t*>& pool, WireStats& st, bool reflect)
        : f_(sh.faults), wire_(wire), pool_(pool), st_(st), reflect_(reflect), t0_(stats::now_ns()),
          // The wire's counts run for the whole session, like a device's.
          on_wire_(st.sent.load()), delivered_(st.delivered.load()), dropped_(st.dropped.load()),
          duplicated_(st.duplicated.load()), no_queue_(st.no_queue.load()) {}
    void reclaim() {}
    uint32_t room(uint32_t burst) const { return burst > npend_ ? burst - npend_ : 0; }
    uint32_t avail(uint32_t n) const { return static_cast<uint32_t>(std::min<size_t>(n, pool_.size())); }
    void set_frame(uint32_t i, uint16_t len, uint32_t tag) {
        len_[i] = len;
        tag_[i] = tag;
        sized_ = true;
    }
    uint64_t confirmed_bytes() const { return bytes_; }
    worker::Acquired acquire(uint32_t n) {
        worker::Acquired a;
        if (pool_.size() < n) {
            a.no_buffer = true;
            n = static_cast<uint32_t>(pool_.size());
        }
        fresh_ = npend_;
        for (uint32_t i = 0; i < n; ++i) {
            pend_[npend_++] = pool_.back();
            pool_.pop_back();
        }
        a.got = n;
        return a;
    }
    worker::FrameSpan fresh() const { return {reinterpret_cast<void* const*>(pend_), 0, fresh_, npend_}; }
    worker::Transmitted transmit() {
        if (!npend_ || f_.stall_tx) return {0, npend_ > 0};
        const uint64_t now = stats::now_ns();
        if (f_.outage_to_ns && now - t0_ >= f_.outage_from_ns && now - t0_ < f_.outage_to_ns) return {0, true};
        uint32_t k = 0;
        for (; k < npend_; ++k) {
            uint8_t* fr = pend_[k];
            const uint32_t n = sized_ ? len_[k] : frame_len_;
            if (!wire_) {
                ++no_queue_;
            } else if (f_.drop_every && (wire_seq_ + 1) % f_.drop_every == 0) {
                ++dropped_;
            } else {
                if (reflect_) packet::reflect_swap(fr, n);
                const bool dup = f_.dup_every && (wire_seq_ + 1) % f_.dup_every == 0;
                if (wire_->cap - (wire_->head.load(std::memory_order_relaxed) -
                                  wire_->tail.load(std::memory_order_acquire)) < (dup ? 2u : 1u)) {
                    if (reflect_) packet::reflect_swap(fr, n);  // not sent: the frame stays as it was
                    break;  // the ring is full: back-pressure
                }
                wire_->push(fr, n, now + f_.delay_ns);
                ++delivered_;
                if (dup) {
                    wire_->push(fr, n, now + f_.delay_ns);
                    ++delivered_, ++duplicated_;
                }
                if (reflect_) packet::reflect_swap(fr, n);  // the template stays as it was
            }
            ++wire_seq_;
            ++on_wire_;
            bytes_ += n + uint64_t{packet::kFcsLen};
            pool_.push_back(fr);
        }
        const bool partial = k < npend_;
        if (k && partial) {
            std::memmove(pend_, pend_ + k, (npend_ - k) * sizeof(pend_[0]));
            std::memmove(len_, len_ + k, (npend_ - k) * sizeof(len_[0]));
            std::memmove(tag_, tag_ + k, (npend_ - k) * sizeof(tag_[0]));
        }
        npend_ -= k;
        sent_ += k;
        publish();
        return {k, partial};
    }
    uint64_t issued() const { return sent_ + npend_; }
    uint64_t held() const { return npend_; }
    uint64_t confirmed() const { return sent_; }
    uint64_t errors() const { return 0; }
    bool failed() const { return false; }
    void finish() {}
    template <class F>
    void for_each_unconfirmed(F&& f) const {
        for (uint32_t i = 0; i < npend_; ++i) f(pend_[i], sized_ ? len_[i] : uint16_t{0}, sized_ ? tag_[i] : 0u);
    }
    void drop_held() {
        for (uint32_t i = 0; i < npend_; ++i) pool_.push_back(pend_[i]);
        npend_ = 0;
    }
    void set_frame_len(uint32_t n) { frame_len_ = n; }

private:
    void publish() {
        stats::publish(st_.sent, on_wire_);
        stats::publish(st_.delivered, delivered_);
        stats::publish(st_.dropped, dropped_);
        stats::publish(st_.duplicated, duplicated_);
        stats::publish(st_.no_queue, no_queue_);
    }
    const LoopFaults& f_;
    Wire* wire_;
    std::vector<uint8_t*>& pool_;
    WireStats& st_;
    bool reflect_;
    uint64_t t0_;
    uint32_t frame_len_ = 60;
    uint8_t* pend_[kMaxBurst];
    uint16_t len_[kMaxBurst];
    uint32_t tag_[kMaxBurst];
    bool sized_ = false;
    uint32_t npend_ = 0, fresh_ = 0;
    uint64_t sent_ = 0, bytes_ = 0, wire_seq_ = 0, on_wire_, delivered_, dropped_, duplicated_, no_queue_;
};
static_assert(worker::TxQueueOps<LoopTxOps>);

class LoopRxOps {
public:
    LoopRxOps(const Shared& sh, Wire& w, const std::atomic<bool>& stop) : f_(sh.faults), w_(w), stop_(stop) {}
    uint32_t receive(uint32_t burst) {
        if (f_.freeze_rx) {  // a hung worker: no poll until it is told to stop
            while (!stop_.load(std::memory_order_relaxed)) std::this_thread::sleep_for(std::chrono::milliseconds(1));
            return 0;
        }
        const uint64_t t = w_.tail.load(std::memory_order_relaxed);
        const uint64_t avail = w_.head.load(std::memory_order_acquire) - t;
        uint32_t n = static_cast<uint32_t>(std::min<uint64_t>(avail, burst));
        if (f_.delay_ns && n) {
            const uint64_t now = stats::now_ns();
            uint32_t k = 0;
            while (k < n && w_.due[(t + k) % w_.cap] <= now) ++k;
            n = k;
        }
        t_ = t;
        n_ = n;
        return n;
    }
    uint8_t* data(uint32_t i) const { return const_cast<uint8_t*>(w_.mem.data()) + ((t_ + i) % w_.cap) * w_.slot; }
    uint32_t len(uint32_t i) const { return w_.len[(t_ + i) % w_.cap]; }
    uint64_t wire_bytes(uint32_t i) const { return len(i) + uint64_t{packet::kFcsLen}; }
    bool csum_verified(uint32_t) const { return false; }
    void release() { w_.tail.store(t_ + n_, std::memory_order_release); }
    void idle() {}

private:
    const LoopFaults& f_;
    Wire& w_;
    const std::atomic<bool>& stop_;
    uint64_t t_ = 0;
    uint32_t n_ = 0;
};
static_assert(worker::RxQueueOps<LoopRxOps>);

class LoopBackend final : public backend::Backend {
public:
    LoopBackend(const LoopFaults& f, WireCounts* counts) : counts_(counts) { sh_.faults = f; }
    ~LoopBackend() override { close(); }
    std::string name() const override { return "loop"; }
    void open(const spec::RunSpec& spec, const backend::SessionLayout& layout) override;
    const std::vector<backend::PortInfo>& ports() const override { return infos_; }
    uint64_t flush_rx() override;
    void start(const std::vector<worker::WorkerConfig>& workers) override;
    void join() override;
    stats::PortSample port_sample(unsigned i) const override;
    nlohmann::json environment() const override { return {{"backend", "loop"}}; }
    void close() override { join(); }

private:
    // The port frames sent on port p arrive at.
    unsigned peer(unsigned p) const {
        if (sh_.faults.reflect || infos_.size() == 1) return p;
        return p == 0 ? 1 : 0;
    }
    Shared sh_;
    WireCounts* counts_;
    backend::SessionLayout layout_;
    std::vector<backend::PortInfo> infos_;
    uint32_t slot_ = 0;
    std::vector<std::vector<uint8_t>> buffers_;  // per worker: frame buffers of its pool
    std::vector<std::vector<uint8_t*>> pools_;   // per worker: the free ones
    std::vector<std::vector<std::vector<uint8_t>>> loaded_;  // per worker: the frames they hold
    std::unique_ptr<WireStats[]> stats_;
    std::vector<worker::WorkerConfig> workers_;
    std::vector<std::thread> threads_;
    uint64_t started_ns_ = 0;  // when this trial's workers were started
};

void LoopBackend::open(const spec::RunSpec& spec, const backend::SessionLayout& layout) {
    layout_ = layout;
    if (layout.ports.size() > 2) throw UsageError("the loop backend joins at most two ports");
    for (size_t i = 0; i < layout.ports.size(); ++i) {
        backend::PortInfo p;
        p.name = layout.ports[i];
        p.driver = "loop";
        p.id = static_cast<uint16_t>(i);
        p.link_up = true;
        p.link_speed_mbps = sh_.faults.link_speed_mbps;
        infos_.push_back(p);
    }
    slot_ = (spec.session_max_frame() + 63) / 64 * 64;
    sh_.wires.resize(infos_.size());
    for (const auto& w : layout.workers) {
        auto& info = infos_[w.port_index];
        if (worker::sends(w.role)) info.tx_queues = std::max<uint16_t>(info.tx_queues, w.queue + 1);
        if (!worker::receives(w.role)) continue;
        info.rx_queues = std::max<uint16_t>(info.rx_queues, w.queue + 1);
        auto& v = sh_.wires[w.port_index];
        if (v.size() <= w.queue) v.resize(w.queue + 1);
        v[w.queue] = std::make_unique<Wire>(spec.ring_size(), slot_);
    }
    const uint32_t nbuf = 2 * spec.ring_size();
    buffers_.resize(layout.workers.size());
    pools_.resize(layout.workers.size());
    loaded_.resize(layout.workers.size());
    stats_.reset(new WireStats[layout.workers.size()]);
    for (size_t i = 0; i < layout.workers.size(); ++i) {
        if (!worker::sends(layout.workers[i].role)) continue;
        buffers_[i].assign(size_t(nbuf) * slot_, 0);
        pools_[i].reserve(nbuf);
        for (uint32_t k = nbuf; k-- > 0;) pools_[i].push_back(buffers_[i].data() + size_t(k) * slot_);
    }
}

uint64_t LoopBackend::flush_rx() {
    uint64_t n = 0;
    for (auto& port : sh_.wires)
        for (auto& w : port)
            if (w) {
                const uint64_t h = w->head.load(std::memory_order_acquire);
                n += h - w->tail.load(std::memory_order_relaxed);
                w->tail.store(h, std::memory_order_release);
            }
    return n;
}

void LoopBackend::start(const std::vector<worker::WorkerConfig>& workers) {
    if (workers.size() != layout_.workers.size())
        throw EnvError(fmt::format("internal: {} workers for a session of {}", workers.size(), layout_.workers.size()));
    for (const auto& w : workers)
        if (w.role == worker::Role::reflect)
            throw UsageError("the loop backend has no reflector worker (the far end reflects with LoopFaults::reflect)");
        else if (w.role == worker::Role::forward)
            throw UsageError("the loop backend has no forwarder (linerate impair needs two devices)");
        else if (w.role == worker::Role::connect)
            throw UsageError("the loop backend has no TCP listener to connect to (linerate connect needs a device)");
    workers_ = workers;
    started_ns_ = stats::now_ns();
    for (size_t i = 0; i < workers_.size(); ++i) {
        const auto& t = workers_[i].tx;
        if (!worker::sends(workers_[i].role) || t.templates == loaded_[i]) continue;
        // Every buffer holds a frame: buffer k the frame of flow k mod flows.
        const uint32_t nbuf = static_cast<uint32_t>(buffers_[i].size() / slot_);
        for (uint32_t k = 0; k < nbuf; ++k) {
            const auto& f = t.templates[k % t.templates.size()];
            std::memcpy(buffers_[i].data() + size_t(k) * slot_, f.data(), f.size());
        }
        loaded_[i] = t.templates;
    }
    for (size_t i = 0; i < workers_.size(); ++i) {
        const auto& w = workers_[i];
        Wire* out = nullptr;
        if (worker::sends(w.role)) {
            const auto& peer_wires = sh_.wires[peer(w.port_index)];
            if (w.queue < peer_wires.size()) out = peer_wires[w.queue].get();
        }
        Wire* in = worker::receives(w.role) ? sh_.wires[w.port_index][w.queue].get() : nullptr;
        auto& pool = pools_[i];
        auto& st = stats_[i];
        threads_.emplace_back([this, &w, out, in, &pool, &st] {
            worker::run_worker(w, [&] {
                if (sh_.faults.fail_workers) return false;
                LoopTxOps tx(sh_, out, pool, st, sh_.faults.reflect);
                tx.set_frame_len(w.tx.frame_len);
                switch (w.role) {
                    case worker::Role::tx: return worker::tx_engine(tx, w);
                    case worker::Role::rx: {
                        LoopRxOps rx(sh_, *in, w.ctl->stop_rx);
                        return worker::rx_engine(rx, w);
                    }
                    case worker::Role::request_response: {
                        LoopRxOps rx(sh_, *in, w.ctl->stop_rx);
                        return worker::rr_engine(tx, rx, w);
                    }
                    case worker::Role::reflect:
                    case worker::Role::forward:
                    case worker::Role::connect: break;
                }
                return false;
            });
        });
        util::pin_thread(threads_.back(), w.cpu);
    }
}

void LoopBackend::join() {
    for (auto& t : threads_)
        if (t.joinable()) t.join();
    threads_.clear();
    if (!counts_ || !stats_) return;
    *counts_ = {};
    for (size_t i = 0; i < layout_.workers.size(); ++i) {
        counts_->sent += stats_[i].sent.load();
        counts_->delivered += stats_[i].delivered.load();
        counts_->dropped += stats_[i].dropped.load();
        counts_->duplicated += stats_[i].duplicated.load();
        counts_->no_queue += stats_[i].no_queue.load();
    }
}

stats::PortSample LoopBackend::port_sample(unsigned p) const {
    stats::PortSample s;
    for (size_t i = 0; i < layout_.workers.size(); ++i) {
        const auto& w = layout_.workers[i];
        if (!worker::sends(w.role)) continue;
        const auto& st = stats_[i];
        if (w.port_index == p) s.opackets += st.sent.load(std::memory_order_relaxed);
        if (peer(w.port_index) == p) {
            s.ipackets += st.delivered.load(std::memory_order_relaxed);
            s.imissed += st.no_queue.load(std::memory_order_relaxed);
        }
    }
    const auto& f = sh_.faults;
    const uint64_t since = stats::now_ns() - started_ns_;
    const bool out = f.link_down_in_outage && started_ns_ && since >= f.outage_from_ns && since < f.outage_to_ns;
    s.link = out ? 0 : 1;
    return s;
}

}  // namespace

std::unique_ptr<backend::Backend> make_loop_backend(const LoopFaults& f, WireCounts* counts) {
    return std::make_unique<LoopBackend>(f, counts);
}

}  // namespace lr::loop
