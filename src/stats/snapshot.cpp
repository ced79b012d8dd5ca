#include "stats/snapshot.h"

#include <algorithm>
#include <fmt/format.h>

namespace lr::stats {

QueueSample read(const QueueCounters& c) {
    constexpr auto r = std::memory_order_relaxed;
    QueueSample s;
    s.packets = c.packets.load(r);
    s.bytes = c.bytes.load(r);
    s.backpressure = c.backpressure.load(r);
    s.no_buffer = c.no_buffer.load(r);
    s.polls = c.polls.load(r);
    s.unsent = c.unsent.load(r);
    s.tx_errors = c.tx_errors.load(r);
    s.timeouts = c.timeouts.load(r);
    s.tx_skipped = c.tx_skipped.load(r);
    s.tx_behind_ns = c.tx_behind_ns.load(r);
    s.tx_stalls = c.tx_stalls.load(r);
    s.tx_longest_stall_ns = c.tx_longest_stall_ns.load(r);
    s.tx_catch_up_max = c.tx_catch_up_max.load(r);
    s.start_ns = c.start_ns.load(r);
    s.end_ns = c.end_ns.load(r);
    s.rx_ours = c.rx_ours.load(r);
    s.rx_unique = c.rx_unique.load(r);
    s.rx_foreign = c.rx_foreign.load(r);
    s.rx_stale = c.rx_stale.load(r);
    s.rx_malformed = c.rx_malformed.load(r);
    s.rx_dup = c.rx_dup.load(r);
    s.rx_reordered = c.rx_reordered.load(r);
    s.rx_late = c.rx_late.load(r);
    s.rx_gaps = c.rx_gaps.load(r);
    s.cpu_wait_ns = c.cpu_wait_ns.load(r);
    s.nice = c.nice.load(r);
    s.nice_errno = c.nice_errno.load(r);
    s.first_pkt_ns = c.first_pkt_ns.load(r);
    s.last_pkt_ns = c.last_pkt_ns.load(r);
    s.state = static_cast<WorkerState>(c.state.load(std::memory_order_acquire));
    return s;
}

Totals total(const std::vector<QueueId>& ids, const Snapshot& s, Dir d) {
    Totals t;
    for (size_t i = 0; i < ids.size() && i < s.queues.size(); ++i) {
        if (ids[i].dir != d) continue;
        const auto& q = s.queues[i];
        t.packets += q.packets;
        t.bytes += q.bytes;
        t.backpressure += q.backpressure;
        t.no_buffer += q.no_buffer;
        t.unsent += q.unsent;
        t.skipped += q.tx_skipped;
        t.behind_ns += q.tx_behind_ns;
        t.stalls += q.tx_stalls;
        t.longest_stall_ns = std::max(t.longest_stall_ns, q.tx_longest_stall_ns);
        t.catch_up_max = std::max(t.catch_up_max, q.tx_catch_up_max);
        add_rx_classes(t, q);
    }
    return t;
}

void add_rx_classes(Totals& t, const QueueSample& q) {
    t.ours += q.rx_ours;
    t.unique += q.rx_unique;
    t.foreign += q.rx_foreign;
    t.stale += q.rx_stale;
    t.malformed += q.rx_malformed;
    t.dup += q.rx_dup;
    t.reordered += q.rx_reordered;
    t.late += q.rx_late;
}

PortSample since(const PortSample& b, const PortSample& c) {
    auto d = [](uint64_t base, uint64_t cur) { return cur >= base ? cur - base : 0; };
    PortSample s;
    s.ipackets = d(b.ipackets, c.ipackets);
    s.opackets = d(b.opackets, c.opackets);
    s.ibytes = d(b.ibytes, c.ibytes);
    s.obytes = d(b.obytes, c.obytes);
    s.imissed = d(b.imissed, c.imissed);
    s.ierrors = d(b.ierrors, c.ierrors);
    s.oerrors = d(b.oerrors, c.oerrors);
    s.rx_nombuf = d(b.rx_nombuf, c.rx_nombuf);
    s.idropped = d(b.idropped, c.idropped);
    s.odropped = d(b.odropped, c.odropped);
    s.ipeer_xmit_refused = d(b.ipeer_xmit_refused, c.ipeer_xmit_refused);
    s.link = c.link;
    s.xdp_received = d(b.xdp_received, c.xdp_received);
    s.xdp_redirected = d(b.xdp_redirected, c.xdp_redirected);
    s.xdp_passed = d(b.xdp_passed, c.xdp_passed);
    s.xdp_redirect_failed = d(b.xdp_redirect_failed, c.xdp_redirect_failed);
    s.xsk_rx_dropped = d(b.xsk_rx_dropped, c.xsk_rx_dropped);
    s.xsk_rx_ring_full = d(b.xsk_rx_ring_full, c.xsk_rx_ring_full);
    s.xsk_rx_fill_empty = d(b.xsk_rx_fill_empty, c.xsk_rx_fill_empty);
    s.xsk_rx_invalid = d(b.xsk_rx_invalid, c.xsk_rx_invalid);
    s.xsk_tx_invalid = d(b.xsk_tx_invalid, c.xsk_tx_invalid);
    s.xsk_tx_ring_empty = d(b.xsk_tx_ring_empty, c.xsk_tx_ring_empty);
    return s;
}

uint64_t port_drops(const Snapshot& s) {
    uint64_t d = 0;
    for (const auto& p : s.ports) d += p.drops();
    return d;
}

namespace {

uint64_t delta(uint64_t prev, uint64_t cur, const char* what, const std::string& where,
               std::vector<std::string>& violations) {
    if (cur < prev) {
        violations.push_back(fmt::format("{} of {} went backwards ({} -> {})", what, where, prev, cur));
        return 0;
    }
    return cur - prev;
}

}  // namespace

IntervalRow interval(const std::vector<QueueId>& ids, const Snapshot& prev, const Snapshot& cur,
                     std::vector<std::string>& violations) {
    IntervalRow row;
    row.t0 = prev.t;
    row.t1 = cur.t;
    const double dt = cur.t - prev.t;
    row.tx.seconds = row.rx.seconds = dt;
    for (size_t i = 0; i < ids.size(); ++i) {
        const auto where = fmt::format("{} {} queue {}", dir_str(ids[i].dir), ids[i].port, ids[i].queue);
        const auto& a = prev.queues[i];
        const auto& b = cur.queues[i];
        Rates& r = ids[i].dir == Dir::tx ? row.tx : row.rx;
        r.packets += delta(a.packets, b.packets, "packets", where, violations);
        r.bytes += delta(a.bytes, b.bytes, "bytes", where, violations);
        row.backpressure += delta(a.backpressure, b.backpressure, "backpressure", where, violations);
        if (ids[i].dir == Dir::rx) {
            row.rx_ours += delta(a.rx_ours, b.rx_ours, "test frames", where, violations);
            row.rx_reordered += delta(a.rx_reordered, b.rx_reordered, "reordered frames", where, violations);
            row.rx_dup += delta(a.rx_dup, b.rx_dup, "duplicates", where, violations);
            row.seq_gaps += b.rx_gaps;  // a level, not a counter: reordered frames fill gaps
        }
    }
    for (size_t p = 0; p < cur.ports.size() && p < prev.ports.size(); ++p)
        row.drops += delta(prev.ports[p].drops(), cur.ports[p].drops(), "drops", fmt::format("port {}", p),
                           violations);
    return row;
}

void check_invariants(const std::vector<QueueId>& ids, const Snapshot& s, bool loopback,
                      std::vector<std::string>& violations) {
    if (!loopback) return;
    const auto tx = total(ids, s, Dir::tx).packets;
    const auto rx = total(ids, s, Dir::rx).unique;
    if (rx > tx)
        violations.push_back(fmt::format(
            "received {} distinct test packets but sent only {} (at t={:.3f}s): a counting error", rx, tx, s.t));
}

}  // namespace lr::stats
