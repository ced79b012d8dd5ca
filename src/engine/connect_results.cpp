#include "engine/connect_results.h"

#include <fmt/format.h>

#include "engine/aggregate.h"

namespace lr::engine {

void aggregate_connect(result::TrialResult& r, const spec::RunSpec& spec, const stats::Snapshot& fin,
                       const std::vector<worker::WorkerConfig>& workers, const CounterSlots& slots) {
    aggregate_counters(r, spec, fin, false);  // the queues' invariants, each on its own
    for (size_t i = 0; i < workers.size(); ++i) {
        const auto& w = workers[i];
        if (w.role != worker::Role::connect || !w.conn.counts) continue;
        result::ConnectResult q;
        q.port = w.port;
        q.queue = w.queue;
        q.counts = w.conn.counts->read();
        const auto& tq = fin.queues[static_cast<size_t>(slots.tx_slot[i])];
        q.frames_sent = tq.packets;
        q.frames_unsent = tq.unsent;
        q.handshake = result::summarize(*w.conn.handshake);
        q.handshake_buckets = result::latency_buckets(*w.conn.handshake);
        const auto& c = q.counts;
        const auto where = fmt::format("{} queue {}", q.port, q.queue);
        if (c.syns != c.answered + c.refused + c.timeouts + c.in_flight)
            r.violations.push_back(fmt::format("{}: the handshakes do not add up: {} SYNs against {} answered, {} "
                                               "refused, {} timed out and {} in flight",
                                               where, c.syns, c.answered, c.refused, c.timeouts, c.in_flight));
        if (spec.connect->close == spec::CloseMode::fin && c.answered != c.closed + c.resets + c.unclosed + c.open)
            r.violations.push_back(fmt::format("{}: the connections do not add up: {} answered against {} closed, {} "
                                               "reset, {} unclosed and {} open",
                                               where, c.answered, c.closed, c.resets, c.unclosed, c.open));
        if (w.conn.handshake->count() != c.answered)
            r.violations.push_back(fmt::format("{}: {} handshakes answered but {} timed", where, c.answered,
                                               w.conn.handshake->count()));
        if (c.syns + c.replies < q.frames_sent + q.frames_unsent)
            r.violations.push_back(fmt::format("{}: the device confirmed {} frames and left {}, more than the {} SYNs and "
                                               "{} replies handed to it",
                                               where, q.frames_sent, q.frames_unsent, c.syns, c.replies));
        if (c.timeouts)
            r.notes.push_back(fmt::format("{}: {} SYNs were not answered within {}", where, c.timeouts,
                                          spec::format_duration(spec.response_timeout_s)));
        if (c.refused) r.notes.push_back(fmt::format("{}: {} SYNs were refused (RST): is anything listening on port {}?",
                                                     where, c.refused, spec.frame.dst_port));
        if (c.misrouted)
            r.notes.push_back(fmt::format("{}: {} answers arrived for another queue's SYNs (the device steers the "
                                          "listener's answers by its own hash): that queue counted them timed out; "
                                          "run one queue on such a device",
                                          where, c.misrouted));
        if (c.replies_dropped)
            r.notes.push_back(fmt::format("{}: {} replies could not be queued (the device took nothing for a while); "
                                          "the listener retransmits its SYN-ACK and is answered again",
                                          where, c.replies_dropped));
        if (c.malformed)
            r.notes.push_back(fmt::format("{}: {} TCP segments had a wrong length or checksum; a veth's far end leaves "
                                          "the checksums of its own stack's segments to an offload that never "
                                          "happens: turn it off there (ethtool -K IFACE tx off)",
                                          where, c.malformed));
        if (c.unclosed)
            r.notes.push_back(fmt::format("{}: {} connections were not closed by the listener within {}", where,
                                          c.unclosed, spec::format_duration(spec.connect->close_timeout_s)));
        if (c.window_full && spec.rate_pps > 0)
            r.notes.push_back(fmt::format("{}: --outstanding {} handshakes in flight held back due SYNs {} times: the "
                                          "rate asked was not offered",
                                          where, spec.connect->outstanding, c.window_full));
        r.connect.push_back(std::move(q));
    }
}

std::vector<result::ConnectLive> connect_live(const std::vector<worker::WorkerConfig>& workers) {
    std::vector<result::ConnectLive> out;
    for (const auto& w : workers)
        if (w.role == worker::Role::connect && w.conn.counts) out.push_back({w.port, w.queue, w.conn.counts->read()});
    return out;
}

}  // namespace lr::engine
