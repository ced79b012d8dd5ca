#include "engine/controller.h"

#include <algorithm>
#include <chrono>
#include <fmt/format.h>
#include <thread>

#include "engine/aggregate.h"
#include "engine/connect_results.h"
#include "engine/drain_rule.h"
#include "engine/impair_results.h"
#include "engine/interrupt.h"
#include "engine/latency_collector.h"
#include "engine/stream_live.h"

namespace lr::engine {
namespace {

using Clock = std::chrono::steady_clock;
using stats::Dir;
using stats::WorkerState;

// linerate connect's queues: no handshake waits for its answer, no connection for its close.
bool connections_settled(const std::vector<result::ConnectLive>& queues) {
    return std::all_of(queues.begin(), queues.end(),
                       [](const result::ConnectLive& q) { return q.counts.in_flight == 0 && q.counts.open == 0; });
}

// The control thread's own copies of what it saw last: nothing reader-side lives on a
// worker's cache line.
struct Watchdog {
    std::vector<uint64_t> polls, packets;
    std::vector<double> polls_t, packets_t;
    explicit Watchdog(size_t n) : polls(n, 0), packets(n, 0), polls_t(n, 0), packets_t(n, 0) {}
};

class Trial {
public:
    Trial(backend::Backend& be, const spec::RunSpec& spec, const backend::SessionLayout& layout,
          const CounterSlots& slots, result::Sink& sink, TrialControl* control)
        : be_(be), spec_(spec), layout_(layout), slots_(slots), sink_(sink), control_(control),
          out_(slots.ids.size()), n_(slots.ids.size()), wd_(n_), latency_(out_.rx_results) {
        if (control_) ctl_.gates = control_->gates.get();
    }

    result::TrialResult run(unsigned index);

private:
    stats::Snapshot snap() const {
        stats::Snapshot s;
        s.t = std::chrono::duration<double>(Clock::now() - t0_).count();
        s.queues.reserve(n_);
        for (size_t i = 0; i < n_; ++i) s.queues.push_back(stats::read(out_.counters[i]));
        for (unsigned p = 0; p < be_.ports().size(); ++p)
            s.ports.push_back(stats::since(port_base_[p], be_.port_sample(p)));
        return s;
    }
    bool all_finished(Dir d, const stats::Snapshot& s) const {
        for (size_t i = 0; i < n_; ++i)
            if (res_.ids[i].dir == d && s.queues[i].state != WorkerState::finished &&
                s.queues[i].state != WorkerState::failed)
                return false;
        return true;
    }
    void emit_interval(const stats::Snapshot& cur, bool final = false) {
        sink_.snapshot(res_.ids, cur);
        auto row = stats::interval(res_.ids, last_, cur, res_.violations);
        latency_.take(row, final);
        // The senders fell short over a whole interval of the TX phase (the first, which holds
        // the start, excepted).
        row.requested_pps = spec_.rate_pps;
        row.generator_limited = !control_ && spec_.rate_pps > 0 && !final && last_.t > 0 && tx_end_ < 0 &&
                                row.tx.pps() < stats::kGeneratorLimited * spec_.rate_pps;
        if (row.latency_live) max_latency_s_ = std::max(max_latency_s_, row.lat_max * 1e-9);
        res_.intervals.push_back(row);
        if (streams_ && streams_->live() && !final) sink_.streams_live(streams_->take());
        if (spec_.impair && workers_) sink_.impair_live(impair_live(*workers_));
        if (spec_.connect && workers_) sink_.connect_live(connect_live(*workers_));
        sink_.interval(row);
        last_ = cur;
    }
    void watchdog(const stats::Snapshot& s);
    // A controlled trial: the counters and each stream's counts to the sink (Sink::live). The
    // final ones are the trial's result.
    void emit_live(const stats::Snapshot& s) {
        static const std::vector<result::StreamLive> none;
        sink_.live(res_.ids, s, streams_ && streams_->live() ? streams_->take() : none);
    }
    void track_links(const stats::Snapshot& s);
    void close_outage(unsigned port, const stats::Snapshot& s);
    void close_outages(const stats::Snapshot& s);
    void control_loop();

    // A port's link as the control thread last saw it, and the counters when it went down.
    struct LinkWatch {
        int8_t state = -1;
        long open = -1;  // index of the outage in progress in res_.outages
        uint64_t handed = 0, dropped = 0, received = 0;
    };
    uint64_t handed_on(unsigned port, const stats::Snapshot& s) const {
        uint64_t n = 0;
        for (size_t i = 0; i < n_; ++i)
            if (res_.ids[i].dir == Dir::tx && res_.ids[i].port_index == port) n += s.queues[i].packets;
        return n;
    }

    backend::Backend& be_;
    const spec::RunSpec& spec_;
    const backend::SessionLayout& layout_;
    const CounterSlots& slots_;
    result::Sink& sink_;
    TrialControl* control_;
    worker::RunControl ctl_;
    TrialOutputs out_;
    size_t n_;
    Watchdog wd_;
    LatencyCollector latency_;
    std::optional<StreamLiveCollector> streams_;  // a mix: each stream's counts, live
    const std::vector<worker::WorkerConfig>* workers_ = nullptr;  // this trial's (forwarders' counts)
    std::vector<stats::PortSample> port_base_;
    std::vector<LinkWatch> links_;
    result::TrialResult res_;
    Clock::time_point t0_;
    stats::Snapshot last_;
    double tx_end_ = -1, drain_start_ = -1;
    double max_latency_s_ = 0;  // the worst latency the interval rows have shown so far
    bool aborted_ = false;
};

void Trial::watchdog(const stats::Snapshot& s) {
    for (size_t i = 0; i < n_; ++i) {
        const auto& q = s.queues[i];
        const auto& id = res_.ids[i];
        const auto where = fmt::format("{} {} queue {}", stats::dir_str(id.dir), id.port, id.queue);
        if (q.state == WorkerState::failed) {
            res_.violations.push_back(fmt::format("worker {} failed", where));
            aborted_ = true;
            continue;
        }
        if (q.state == WorkerState::finished) continue;
        // Progress is a poll, or a packet counted: the live-frames engine spends a whole unpaced
        // count inside one kernel call while its watcher thread publishes the frames sent.
        const bool moved = q.packets != wd_.packets[i];
        if (moved) {
            wd_.packets[i] = q.packets;
            wd_.packets_t[i] = s.t;
        }
        if (q.polls != wd_.polls[i] || moved) {
            wd_.polls[i] = q.polls;
            wd_.polls_t[i] = s.t;
        } else if (s.t - wd_.polls_t[i] > spec_.stall_s) {
            res_.violations.push_back(
                fmt::format("worker {} made no progress for {:.1f}s (stuck or dead)", where, spec_.stall_s));
            aborted_ = true;
        }
        // A reflector and a forwarder send only what arrives, a connector only while handshakes
        // are not all in flight, and a controlled trial's streams may all be paused or not
        // started yet: an idle TX queue is not a stuck one then.
        if (id.dir != Dir::tx || spec_.reflect || spec_.impair || spec_.connect || control_ ||
            ctl_.stop_tx.load(std::memory_order_relaxed))
            continue;
        if (!moved && s.t - wd_.packets_t[i] > spec_.stall_s) {
            res_.violations.push_back(fmt::format(
                "{}: the device accepted no packet for {:.1f}s (link down or stuck queue)", where, spec_.stall_s));
            aborted_ = true;
        }
    }
}

void Trial::track_links(const stats::Snapshot& s) {
    for (unsigned p = 0; p < s.ports.size(); ++p) {
        auto& w = links_[p];
        const auto& ps = s.ports[p];
        const int8_t now = ps.link;
        if (now < 0 || now == w.state) continue;
        const bool first = w.state < 0;
        w.state = now;
        const auto& name = be_.ports()[p].name;
        if (first && now == 1) continue;  // up from the start: no event
        res_.link_events.push_back({name, s.t, now == 1});
        if (now == 0) {
            w.open = static_cast<long>(res_.outages.size());
            w.handed = handed_on(p, s);
            w.dropped = ps.egress_drops();
            w.received = ps.ipackets;
            res_.outages.push_back({.port = name, .from = s.t});
        } else if (w.open >= 0) {
            res_.outages[static_cast<size_t>(w.open)].to = s.t;
            close_outage(p, s);
        }
    }
}

// The port's outage in progress, counted up to `s` (its `to` stays -1 when the trial ends
// with the link still down).
void Trial::close_outage(unsigned p, const stats::Snapshot& s) {
    auto& w = links_[p];
    auto& o = res_.outages[static_cast<size_t>(w.open)];
    const auto& ps = s.ports[p];
    o.seconds = s.t - o.from;
    o.handed = handed_on(p, s) - w.handed;
    o.egress_dropped = ps.egress_drops() - w.dropped;
    o.received = ps.ipackets - w.received;
    w.open = -1;
}

void Trial::close_outages(const stats::Snapshot& s) {
    for (unsigned p = 0; p < links_.size(); ++p)
        if (links_[p].open >= 0) close_outage(p, s);
}

void Trial::control_loop() {
    const double tick = std::min(0.01, spec_.interval_s / 4);
    double next_report = spec_.interval_s, rx_last_change = 0;
    double next_live = 0;
    uint64_t rx_prev = 0;
    bool traffic_seen = false;
    unsigned settled_reads = 0;
    const bool tx = spec_.tx_enabled();
    for (;;) {
        std::this_thread::sleep_for(std::chrono::duration<double>(tick));
        const auto s = snap();
        watchdog(s);
        track_links(s);
        if (control_ && s.t >= next_live) {
            emit_live(s);
            next_live = s.t + control_->live_period_s;
        }
        if (s.t >= next_report) {
            emit_interval(s);
            next_report += spec_.interval_s;
        }
        const uint64_t rx_now = stats::total(res_.ids, s, Dir::rx).packets;
        if (rx_now != rx_prev) {
            rx_prev = rx_now;
            rx_last_change = s.t;
            traffic_seen = true;
        }
        if (aborted_) return;
        if (interrupt_requested() && !res_.interrupted) {
            res_.interrupted = true;
            // linerate impair runs until stopped: a signal is how it ends, not an interruption.
            res_.notes.push_back(spec_.impair ? fmt::format("stopped by a signal after {:.3f}s", s.t)
                                              : fmt::format("interrupted by a signal at {:.3f}s", s.t));
            if (!tx) return;
            ctl_.stop_tx.store(true, std::memory_order_relaxed);
        }
        if (tx) {
            // Every sender finished its share (a count, streams that all end) or the time is up;
            // a controlled trial's when the controller says.
            const bool over = control_ ? control_->end_tx.load(std::memory_order_acquire)
                                       : s.t >= spec_.duration_s || all_finished(Dir::tx, s);
            if (tx_end_ < 0 && over) ctl_.stop_tx.store(true, std::memory_order_relaxed);
            if (tx_end_ < 0 && ctl_.stop_tx.load(std::memory_order_relaxed) && all_finished(Dir::tx, s)) {
                tx_end_ = s.t;
                drain_start_ = s.t;
            }
            if (tx_end_ >= 0) {
                if (!spec_.rx_enabled()) return;
                const DrainRule drain(drain_start_, spec_.drain_s, max_latency_s_);
                if (drain.expired(s.t)) return;
                // linerate connect: drained once no handshake waits for its answer and no
                // connection for its close; silence says nothing, a listener may be slow to
                // close (its --timeout is the drain).
                // Seen twice in a row: a worker's counts are not published as one, so one read
                // may pair a connection's new state with another count's old one.
                if (spec_.connect) {
                    settled_reads = workers_ && connections_settled(connect_live(*workers_)) ? settled_reads + 1 : 0;
                    if (settled_reads >= 2) return;
                    continue;
                }
                // Drained: everything sent has arrived, or nothing new came for the quiet window.
                // Until a first frame arrived there is no quiet period: frames may still be on
                // their way.
                const bool all_in =
                    stats::total(res_.ids, s, Dir::rx).unique >= stats::total(res_.ids, s, Dir::tx).packets;
                if (all_in || (traffic_seen && drain.quiet(s.t, rx_last_change))) return;
            }
        } else {
            // A controlled trial that only receives (an engine counting another engine's
            // frames) ends when its controller says, once nothing new came for the quiet window.
            if (control_ && control_->end_tx.load(std::memory_order_acquire)) {
                if (drain_start_ < 0) drain_start_ = s.t;
                const DrainRule drain(drain_start_, spec_.drain_s, max_latency_s_);
                if (drain.quiet(s.t, rx_last_change) || drain.expired(s.t)) return;
            }
            if (s.t >= spec_.duration_s) return;
            if (spec_.count && rx_now >= *spec_.count) return;
            if (spec_.stop_when_idle && traffic_seen && s.t - rx_last_change >= spec_.drain_s) return;
        }
    }
}

result::TrialResult Trial::run(unsigned index) {
    res_.index = index;
    res_.trial = spec_.trial();
    res_.ids = slots_.ids;
    res_.loopback = spec_.tx_enabled() && spec_.rx_enabled() && !spec_.reflect && !spec_.impair && !spec_.connect;
    const auto workers = plan_workers(spec_, layout_, slots_, out_, ctl_);
    workers_ = &workers;
    streams_.emplace(spec_, out_);
    // Each later trial starts from drained, idle queues: stragglers of an earlier one are
    // dropped. The first finds the ports as they were opened (a pcap port's frames wait there).
    if (index > 0) res_.flushed_before = be_.flush_rx();
    for (unsigned p = 0; p < be_.ports().size(); ++p) port_base_.push_back(be_.port_sample(p));
    t0_ = Clock::now();
    last_ = snap();
    last_.t = 0;
    links_.assign(be_.ports().size(), LinkWatch{});
    track_links(last_);
    be_.start(workers);

    control_loop();
    ctl_.stop_tx.store(true, std::memory_order_relaxed);
    ctl_.stop_rx.store(true, std::memory_order_relaxed);
    be_.join();
    const auto fin = snap();
    track_links(fin);
    close_outages(fin);
    res_.tx_seconds = spec_.tx_enabled() ? (tx_end_ >= 0 ? tx_end_ : fin.t) : fin.t;
    res_.drain_seconds = spec_.tx_enabled() && drain_start_ >= 0 ? fin.t - drain_start_ : 0;
    res_.total_seconds = fin.t;
    if (fin.t - last_.t > 1e-6) {
        emit_interval(fin, true);
    } else {
        stats::IntervalRow rest;
        latency_.take(rest, true);  // the workers have ended: whatever is left joins the totals
    }
    if (spec_.impair || spec_.connect) {
        if (spec_.impair) aggregate_impair(res_, spec_, fin, workers, slots_);
        else aggregate_connect(res_, spec_, fin, workers, slots_);
        decide(res_, spec_);
        workers_ = nullptr;
        return std::move(res_);
    }
    std::vector<TxStreams> tx;
    std::vector<const stats::RxResult*> rx;
    for (size_t i = 0; i < workers.size(); ++i)
        if (slots_.tx_slot[i] >= 0)
            tx.push_back({&workers[i].tx.streams, workers[i].tx.sent_per_stream, workers[i].tx.departures,
                          workers[i].tx.capture, workers[i].tx.program.get(), workers[i].tx.shares_sent,
                          out_.tx_pps[static_cast<size_t>(slots_.tx_slot[i])]});
    for (size_t i = 0; i < n_; ++i)
        if (res_.ids[i].dir == Dir::rx) rx.push_back(&out_.rx_results[i]);
    aggregate(res_, spec_, fin, tx, rx, aborted_ || res_.interrupted);
    decide(res_, spec_);
    return std::move(res_);
}

}  // namespace

result::TrialResult run_trial(backend::Backend& be, const spec::RunSpec& spec, const backend::SessionLayout& layout,
                              const CounterSlots& slots, unsigned index, result::Sink& sink, TrialControl* control) {
    Trial t(be, spec, layout, slots, sink, control);
    return t.run(index);
}

}  // namespace lr::engine
