#include "engine/impair_results.h"

#include <fmt/format.h>

#include "engine/aggregate.h"

namespace lr::engine {

void aggregate_impair(result::TrialResult& r, const spec::RunSpec& spec, const stats::Snapshot& fin,
                      const std::vector<worker::WorkerConfig>& workers, const CounterSlots& slots) {
    aggregate_counters(r, spec, fin, false);  // the queues' invariants, each on its own
    for (size_t i = 0; i < workers.size(); ++i) {
        const auto& w = workers[i];
        if (w.role != worker::Role::forward || !w.fwd.impairer) continue;
        const auto& imp = *w.fwd.impairer;
        result::ImpairResult d;
        d.from = w.port;
        d.to = w.fwd.peer_port;
        d.queue = w.queue;
        d.counts = imp.counts();
        const auto& tq = fin.queues[static_cast<size_t>(slots.tx_slot[i])];
        d.sent = tq.packets;
        d.unsent = tq.unsent;
        if (w.port_index < fin.ports.size()) d.ingress_host_dropped = fin.ports[w.port_index].host_rx_drops();
        d.held_time = result::summarize(imp.residence());
        d.held_buckets = result::latency_buckets(imp.residence());
        d.late_time = result::summarize(imp.lateness());
        d.late_buckets = result::latency_buckets(imp.lateness());
        const auto& c = d.counts;
        const auto where = fmt::format("{} -> {} queue {}", d.from, d.to, d.queue);
        if (c.received + c.duplicated != c.dropped + c.oversize + c.overflowed + c.forwarded + c.held)
            r.violations.push_back(fmt::format(
                "{}: the impairer's counts do not add up: {} received and {} duplicated, against {} dropped, {} "
                "oversize, {} overflowed, {} forwarded and {} held",
                where, c.received, c.duplicated, c.dropped, c.oversize, c.overflowed, c.forwarded, c.held));
        if (c.forwarded != d.sent + d.unsent)
            r.violations.push_back(fmt::format("{}: {} frames handed to the egress device, which confirmed {} and left {}",
                                               where, c.forwarded, d.sent, d.unsent));
        if (c.held)
            r.notes.push_back(fmt::format("{}: {} frames were still held (delayed or queued) when the run ended: not "
                                          "sent",
                                          where, c.held));
        if (c.overflowed)
            r.notes.push_back(fmt::format("{}: {} frames arrived with {} frames held (--limit) and were dropped",
                                          where, c.overflowed, spec.impair->plan.limit));
        if (c.oversize)
            r.notes.push_back(fmt::format("{}: {} frames were larger than {} bytes and were dropped", where, c.oversize,
                                          spec.session_max_frame()));
        if (d.ingress_host_dropped && w.queue == 0)
            r.notes.push_back(fmt::format("{}: the host dropped {} frames that reached it before the emulator received "
                                          "them (its socket's ring full, or the device's own drops): the emulator "
                                          "could not keep up, they are not among its counts",
                                          d.from, d.ingress_host_dropped));
        if (d.unsent)
            r.notes.push_back(fmt::format("{}: {} frames handed to the egress device were never confirmed", where,
                                          d.unsent));
        r.impair.push_back(std::move(d));
    }
}

std::vector<result::ImpairLive> impair_live(const std::vector<worker::WorkerConfig>& workers) {
    std::vector<result::ImpairLive> out;
    for (const auto& w : workers)
        if (w.role == worker::Role::forward && w.fwd.counts)
            out.push_back({w.port, w.fwd.peer_port, w.queue, w.fwd.counts->read()});
    return out;
}

}  // namespace lr::engine
