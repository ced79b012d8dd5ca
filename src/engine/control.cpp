#include "engine/control.h"

#include <chrono>
#include <fmt/format.h>
#include <memory>
#include <thread>

#include "flow/flows.h"
#include "packet/signature.h"

namespace lr::engine {

using stats::Dir;
using stats::WorkerState;

const char* verdict_str(Verdict v) {
    switch (v) {
        case Verdict::pass: return "pass";
        case Verdict::fail: return "fail";
        case Verdict::invalid: return "invalid";
    }
    return "?";
}

std::vector<WorkerPlan> plan_workers(const spec::RunSpec& spec, const Backend& be,
                                     stats::QueueCounters* counters) {
    std::vector<WorkerPlan> plans;
    const uint32_t nflows = spec.effective_flows();
    const auto flows = flow::make_flows(spec.frame, nflows, nflows > 1 ? spec.vary : 0);
    const uint32_t ntxq = spec.tx_queue_total();
    uint32_t txi = 0;
    for (const auto& pq : spec.tx) {
        for (uint16_t q = 0; q < pq.queues; ++q, ++txi) {
            WorkerPlan p;
            p.id = {Dir::tx, be.port_index(pq.port), pq.port, q};
            for (uint32_t f : flow::flows_for_queue(nflows, txi, ntxq)) {
                p.flows.push_back(flows[f]);
                p.streams.push_back(static_cast<uint16_t>(f));
            }
            if (spec.count) p.count = *spec.count / ntxq + (txi < *spec.count % ntxq ? 1 : 0);
            p.rate_pps = spec.rate_pps / ntxq;
            plans.push_back(std::move(p));
        }
    }
    for (const auto& pq : spec.rx)
        for (uint16_t q = 0; q < pq.queues; ++q) {
            WorkerPlan p;
            p.id = {Dir::rx, be.port_index(pq.port), pq.port, q};
            plans.push_back(std::move(p));
        }
    for (size_t i = 0; i < plans.size(); ++i) plans[i].counters = &counters[i];
    return plans;
}

LatencySummary summarize(const stats::LatencyHistogram& h) {
    LatencySummary l;
    l.count = h.count();
    if (!l.count) return l;
    l.min = h.min();
    l.max = h.max();
    l.mean = h.mean();
    l.p50 = h.percentile(0.5);
    l.p90 = h.percentile(0.9);
    l.p99 = h.percentile(0.99);
    l.p999 = h.percentile(0.999);
    return l;
}

std::vector<StreamResult> merge_streams(const std::vector<WorkerPlan>& plans, bool sender_known,
                                        std::vector<std::string>& violations) {
    size_t n = 0;  // stream ids are dense: size everything once
    for (const auto& p : plans) {
        for (auto id : p.streams) n = std::max<size_t>(n, id + 1u);
        if (p.rx_result) n = std::max({n, p.rx_result->streams.size(), p.rx_result->sink.size()});
    }
    std::vector<StreamResult> out(n);
    std::vector<uint64_t> best(n, 0), gaps(n, 0);
    for (uint32_t s = 0; s < n; ++s) out[s].stream = s;
    for (const auto& p : plans)
        if (p.tx_sent && p.tx_sent->size() == p.streams.size())
            for (size_t k = 0; k < p.streams.size(); ++k) {
                auto& r = out[p.streams[k]];
                r.tx_known = true;
                r.sent += (*p.tx_sent)[k];
            }
    for (const auto& p : plans) {
        if (!p.rx_result) continue;
        const auto& sk = p.rx_result->sink;  // XDP sink: frames and highest sequence only
        for (uint32_t s = 0; s < sk.size(); ++s) {
            out[s].received += sk[s].first;
            gaps[s] += sk[s].second > sk[s].first ? sk[s].second - sk[s].first : 0;
        }
        const auto& st = p.rx_result->streams;
        for (uint32_t s = 0; s < st.size(); ++s) {
            const auto& c = st[s].seq.counts();
            if (!c.any) continue;
            auto& r = out[s];
            r.received += c.received;
            r.reordered += c.reordered;
            r.duplicates += c.duplicates;
            r.late += c.late;
            gaps[s] += st[s].seq.gaps();
            if (c.received > best[s]) {  // a stream normally lands on one queue
                best[s] = c.received;
                r.jitter_ns = st[s].jitter.ns();
            }
        }
    }
    for (auto& r : out) {
        if (sender_known && r.tx_known) {
            if (r.received > r.sent)
                violations.push_back(fmt::format("stream {}: received {} distinct packets but sent {}", r.stream,
                                                 r.received, r.sent));
            else
                r.lost = r.sent - r.received;
        } else {
            r.lost = gaps[r.stream];
        }
    }
    // Only streams that exist: sent something or received something.
    std::vector<StreamResult> used;
    for (const auto& r : out)
        if (r.tx_known || r.received || r.late || r.duplicates) used.push_back(r);
    return used;
}

namespace {

std::atomic<bool> g_stop_requested{false};
static_assert(std::atomic<bool>::is_always_lock_free);

}  // namespace

void request_stop() noexcept { g_stop_requested.store(true, std::memory_order_relaxed); }
bool stop_requested() noexcept { return g_stop_requested.load(std::memory_order_relaxed); }

namespace {

using Clock = std::chrono::steady_clock;

class Controller {
public:
    Controller(Backend& be, const spec::RunSpec& spec, const IntervalSink& sink)
        : be_(be), spec_(spec), sink_(sink) {}

    RunResult run();

private:
    stats::Snapshot snap() const {
        stats::Snapshot s;
        s.t = std::chrono::duration<double>(Clock::now() - t0_).count();
        s.queues.reserve(n_);
        for (size_t i = 0; i < n_; ++i) s.queues.push_back(stats::read(counters_[i]));
        for (unsigned p = 0; p < be_.ports().size(); ++p) s.ports.push_back(be_.port_sample(p));
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
        auto row = stats::interval(res_.ids, last_, cur, res_.violations);
        take_latency(row, final);
        res_.intervals.push_back(row);
        if (sink_) sink_(row);
        last_ = cur;
    }
    void watchdog(const stats::Snapshot& s);
    void take_latency(stats::IntervalRow& row, bool final);
    void finish(const stats::Snapshot& fin);

    Backend& be_;
    const spec::RunSpec& spec_;
    const IntervalSink& sink_;
    RunControl ctl_;
    std::unique_ptr<stats::QueueCounters[]> counters_;
    std::vector<WorkerPlan> plans_;
    std::vector<std::vector<uint64_t>> tx_sent_;
    std::vector<stats::RxResult> rx_results_;
    std::vector<stats::LatencyTaker> lat_;  // live latency, per plan (RX plans with `live`)
    bool lat_live_ = false;
    size_t n_ = 0;
    RunResult res_;
    Clock::time_point t0_;
    stats::Snapshot last_;
    // Watchdog state: the control thread's own copies of previous values.
    std::vector<uint64_t> wd_polls_, wd_packets_;
    std::vector<double> wd_polls_t_, wd_packets_t_;
    bool aborted_ = false;
};

void Controller::watchdog(const stats::Snapshot& s) {
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
        if (q.polls != wd_polls_[i]) {
            wd_polls_[i] = q.polls;
            wd_polls_t_[i] = s.t;
        } else if (s.t - wd_polls_t_[i] > spec_.stall_s) {
            res_.violations.push_back(
                fmt::format("worker {} made no progress for {:.1f}s (stuck or dead)", where, spec_.stall_s));
            aborted_ = true;
        }
        // A reflector sends only what arrives: an idle TX queue is not a stuck one.
        if (id.dir != Dir::tx || spec_.reflect || ctl_.stop_tx.load(std::memory_order_relaxed)) continue;
        if (q.packets != wd_packets_[i]) {
            wd_packets_[i] = q.packets;
            wd_packets_t_[i] = s.t;
        } else if (s.t - wd_packets_t_[i] > spec_.stall_s) {
            res_.violations.push_back(fmt::format(
                "{}: the device accepted no packet for {:.1f}s (link down or stuck queue)", where, spec_.stall_s));
            aborted_ = true;
        }
    }
}

RunResult Controller::run() {
    n_ = spec_.tx_queue_total() + spec_.rx_queue_total();
    counters_.reset(new stats::QueueCounters[n_]);
    plans_ = plan_workers(spec_, be_, counters_.get());
    auto& plans = plans_;
    tx_sent_.resize(plans.size());
    rx_results_.resize(plans.size());
    // Receivers that measure latency hand over a histogram per interval (user-space RX of
    // signed frames; the XDP sink and the reflector measure none).
    lat_live_ = spec_.live_latency();
    lat_.assign(plans.size(), {});
    for (size_t i = 0; i < plans.size(); ++i) {
        if (plans[i].id.dir == Dir::tx) {
            plans[i].tx_sent = &tx_sent_[i];
        } else {
            plans[i].rx_result = &rx_results_[i];
            if (lat_live_) rx_results_[i].live = std::make_unique<stats::LatencyExchange>();
        }
    }
    for (const auto& p : plans) res_.ids.push_back(p.id);
    res_.loopback = spec_.tx_enabled() && spec_.rx_enabled() && !spec_.reflect;
    wd_polls_.assign(n_, 0);
    wd_packets_.assign(n_, 0);
    wd_polls_t_.assign(n_, 0);
    wd_packets_t_.assign(n_, 0);

    t0_ = Clock::now();
    last_ = snap();
    last_.t = 0;
    be_.launch(plans, ctl_);

    const double tick = std::min(0.01, spec_.interval_s / 4);
    double next_report = spec_.interval_s;
    double tx_end = -1, drain_start = -1, rx_last_change = 0;
    uint64_t rx_prev = 0;
    bool traffic_seen = false, interrupted = false;
    const bool tx = spec_.tx_enabled();
    stats::Snapshot s;
    for (;;) {
        std::this_thread::sleep_for(std::chrono::duration<double>(tick));
        s = snap();
        watchdog(s);
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
        if (aborted_) break;
        if (g_stop_requested.load(std::memory_order_relaxed) && !interrupted) {
            interrupted = true;
            res_.notes.push_back(fmt::format("interrupted by a signal at {:.3f}s", s.t));
            if (!tx) break;
            ctl_.stop_tx.store(true, std::memory_order_relaxed);
        }
        if (tx) {
            if (tx_end < 0 && (s.t >= spec_.duration_s || (spec_.count && all_finished(Dir::tx, s))))
                ctl_.stop_tx.store(true, std::memory_order_relaxed);
            if (tx_end < 0 && ctl_.stop_tx.load(std::memory_order_relaxed) && all_finished(Dir::tx, s)) {
                tx_end = s.t;
                drain_start = s.t;
            }
            if (tx_end >= 0) {
                if (!spec_.rx_enabled()) break;
                // Drained: nothing new for a quiet period, or everything sent has arrived.
                const bool all_in = stats::total(res_.ids, s, Dir::rx).unique >= stats::total(res_.ids, s, Dir::tx).packets;
                const bool quiet = s.t - std::max(rx_last_change, drain_start) >= std::min(0.1, spec_.drain_s);
                if (all_in || quiet || s.t - drain_start >= spec_.drain_s) break;
            }
        } else {
            if (s.t >= spec_.duration_s) break;
            if (spec_.count && rx_now >= *spec_.count) break;
            if (spec_.stop_when_idle && traffic_seen && s.t - rx_last_change >= spec_.drain_s) break;
        }
    }
    ctl_.stop_tx.store(true, std::memory_order_relaxed);
    ctl_.stop_rx.store(true, std::memory_order_relaxed);
    be_.join();
    auto fin = snap();
    if (tx_end < 0) tx_end = fin.t;
    res_.tx_seconds = tx ? tx_end : fin.t;
    res_.drain_seconds = tx && drain_start >= 0 ? fin.t - drain_start : 0;
    res_.total_seconds = fin.t;
    if (fin.t - last_.t > 1e-6) {
        emit_interval(fin, true);
    } else {
        stats::IntervalRow rest;
        take_latency(rest, true);  // the workers have ended: whatever is left joins the totals
    }
    finish(fin);
    return std::move(res_);
}

void Controller::take_latency(stats::IntervalRow& row, bool final) {
    if (!lat_live_) return;
    stats::LatencyHistogram iv;
    if (final) {
        // The workers have ended (join): both buffers are the control thread's.
        for (size_t i = 0; i < rx_results_.size(); ++i)
            if (auto* x = rx_results_[i].live.get()) lat_[i].final(*x, rx_results_[i].latency, iv);
    } else {
        // Ask every receiver to switch buffers, then take the buffers they leave. A worker
        // that does not answer within 2 ms (descheduled) keeps its request pending: its
        // frames are counted in a later interval, never lost.
        for (size_t i = 0; i < rx_results_.size(); ++i) {
            auto* x = rx_results_[i].live.get();
            if (!x) continue;
            lat_[i].collect(*x, rx_results_[i].latency, iv);  // a request left from the last interval
            lat_[i].request(*x);
        }
        const auto deadline = Clock::now() + std::chrono::milliseconds(2);
        for (;;) {
            bool waiting = false;
            for (size_t i = 0; i < rx_results_.size(); ++i) {
                auto* x = rx_results_[i].live.get();
                if (x && lat_[i].pending() && !lat_[i].collect(*x, rx_results_[i].latency, iv)) waiting = true;
            }
            if (!waiting || Clock::now() > deadline) break;
            std::this_thread::sleep_for(std::chrono::microseconds(20));
        }
    }
    row.latency_live = true;
    row.lat_count = iv.count();
    row.lat_min = iv.min();
    row.lat_p50 = iv.percentile(0.5);
    row.lat_p99 = iv.percentile(0.99);
    row.lat_max = iv.max();
}

void Controller::finish(const stats::Snapshot& fin) {
    stats::check_invariants(res_.ids, fin, res_.loopback, res_.violations);
    res_.ports = fin.ports;
    res_.tx = stats::total(res_.ids, fin, Dir::tx);
    res_.rx = stats::total(res_.ids, fin, Dir::rx);
    for (size_t i = 0; i < n_; ++i) {
        const auto& q = fin.queues[i];
        const bool rx = res_.ids[i].dir == Dir::rx;
        const uint64_t a = rx ? q.first_pkt_ns : q.start_ns, b = rx ? q.last_pkt_ns : q.end_ns;
        const double act = b > a ? (b - a) * 1e-9 : 0;
        QueueResult qr{res_.ids[i], q, act, {}};
        if (rx) {
            qr.latency = summarize(rx_results_[i].latency);
            res_.latency.merge(rx_results_[i].latency);
        }
        res_.queues.push_back(qr);
    }
    res_.sig_level = spec_.sig_level();
    for (const auto& t : spec_.tx)
        for (const auto& r : spec_.rx)
            if (t.port == r.port && !spec_.reflect) res_.round_trip = true;
    for (size_t i = 0; i < n_; ++i) res_.timeouts += fin.queues[i].timeouts;
    if (spec_.outstanding && res_.tx_seconds > 0) res_.transactions_per_s = res_.rx.unique / res_.tx_seconds;
    if (spec_.rx_enabled() && res_.sig_level != packet::SigLevel::none && !spec_.reflect)
        res_.streams = merge_streams(plans_, spec_.tx_enabled(), res_.violations);
    if (spec_.rx_enabled() && spec_.rx_mode == "xdp")
        res_.notes.push_back("RX counted by the XDP sink in the driver: the reduced set (frames, bytes and sequence "
                             "gaps per stream); duplicates count as received, reordering and latency are not "
                             "measured, checksums are not verified");
    // The TX phase as the workers saw it: first TX worker start to last TX worker end.
    uint64_t t_first = UINT64_MAX, t_last = 0;
    for (const auto& q : res_.queues)
        if (q.id.dir == Dir::tx && q.final.start_ns && q.final.end_ns) {
            t_first = std::min(t_first, q.final.start_ns);
            t_last = std::max(t_last, q.final.end_ns);
        }
    if (t_last > t_first) res_.tx_seconds = (t_last - t_first) * 1e-9;
    uint64_t r_first = UINT64_MAX, r_last = 0;
    for (const auto& q : res_.queues)
        if (q.id.dir == Dir::rx && q.final.first_pkt_ns) {
            r_first = std::min(r_first, q.final.first_pkt_ns);
            r_last = std::max(r_last, q.final.last_pkt_ns);
        }
    if (r_last > r_first) res_.rx_seconds = (r_last - r_first) * 1e-9;
    if (spec_.rate_pps > 0 && spec_.tx_enabled() && res_.tx_seconds > 0) {
        const double achieved = res_.tx.packets / res_.tx_seconds;
        if (achieved < 0.99 * spec_.rate_pps) {
            res_.generator_limited = true;
            res_.notes.push_back(fmt::format("generator-limited: achieved {:.0f} pps of the {:.0f} pps requested",
                                             achieved, spec_.rate_pps));
        }
    }
    // Loss counts distinct test frames: foreign and malformed frames, duplicates and late
    // arrivals never make up for a lost one.
    if (res_.loopback && res_.rx.unique <= res_.tx.packets) res_.lost = res_.tx.packets - res_.rx.unique;
    if (spec_.count && spec_.tx_enabled() && res_.tx.packets != *spec_.count && !aborted_ &&
        !g_stop_requested.load(std::memory_order_relaxed))
        res_.violations.push_back(fmt::format("sent {} packets but --count asked for {}", res_.tx.packets,
                                              *spec_.count));
    if (res_.tx.unsent)
        res_.notes.push_back(fmt::format("{} built packets were never accepted by the device when TX stopped "
                                         "(not counted as sent)",
                                         res_.tx.unsent));

    if (!res_.violations.empty()) {
        res_.verdict = Verdict::invalid;
        res_.verdict_reason = res_.violations.front();
    } else if (spec_.max_loss_pct && res_.tx.packets > 0 &&
               100.0 * res_.lost / res_.tx.packets > *spec_.max_loss_pct) {
        res_.verdict = Verdict::fail;
        res_.verdict_reason = fmt::format("loss {:.6f}% exceeds --max-loss {}%",
                                          100.0 * res_.lost / res_.tx.packets, *spec_.max_loss_pct);
    } else {
        res_.verdict = Verdict::pass;
    }
}

}  // namespace

RunResult run_control(Backend& be, const spec::RunSpec& spec, const IntervalSink& on_interval) {
    Controller c(be, spec, on_interval);
    return c.run();
}

}  // namespace lr::engine
