#include "otg/flow_numbers.h"

#include <algorithm>

namespace lr::otg {

FlowNumbers FlowNumbers::since(const FlowNumbers& base) const {
    const auto minus = [](uint64_t a, uint64_t b) { return a > b ? a - b : 0; };
    FlowNumbers d = *this;
    d.frames_tx = minus(frames_tx, base.frames_tx);
    d.bytes_tx = minus(bytes_tx, base.bytes_tx);
    d.frames_rx = minus(frames_rx, base.frames_rx);
    d.bytes_rx = minus(bytes_rx, base.bytes_rx);
    d.reordered = minus(reordered, base.reordered);
    d.duplicates = minus(duplicates, base.duplicates);
    d.late = minus(late, base.late);
    d.lat_n = minus(lat_n, base.lat_n);
    d.lat_sum_ns = minus(lat_sum_ns, base.lat_sum_ns);
    return d;
}

void FlowNumbers::take_rx(const stats::FlowRxTotals& t) {
    bytes_rx = t.bytes;
    lat_n = t.lat_n;
    lat_sum_ns = t.lat_sum;
    lat_min_ns = t.min_ns();
    lat_max_ns = t.lat_max;
    first_rx_ns = t.first_ns;
    last_rx_ns = t.last_ns;
}

double FlowNumbers::loss_pct() const {
    if (frames_tx == 0) return 0;
    const uint64_t lost = frames_tx > frames_rx ? frames_tx - frames_rx : 0;
    return 100.0 * static_cast<double>(lost) / static_cast<double>(frames_tx);
}

namespace {

// A stream's counts, live (result::StreamLive) or final (result::StreamResult): the same names.
template <class Stream>
FlowNumbers numbers_of(const Stream& s) {
    FlowNumbers n;
    n.frames_tx = s.sent;
    n.bytes_tx = s.sent_bytes;
    n.frames_rx = s.received;
    n.reordered = s.reordered;
    n.duplicates = s.duplicates;
    n.late = s.late;
    n.take_rx(s.rx);
    return n;
}

}  // namespace

FlowNumbers live_numbers(const result::StreamLive& s) { return numbers_of(s); }

FlowNumbers final_numbers(const result::TrialResult& r, size_t stream) {
    if (stream >= r.streams.size()) return {};
    auto n = numbers_of(r.streams[stream]);
    n.jitter_ns = r.streams[stream].jitter_ns;
    n.lat_buckets = r.streams[stream].latency_buckets;
    return n;
}

PortNumbers& PortNumbers::operator+=(const PortNumbers& o) {
    frames_tx += o.frames_tx;
    bytes_tx += o.bytes_tx;
    frames_rx += o.frames_rx;
    bytes_rx += o.bytes_rx;
    return *this;
}

namespace {

void add(PortNumbers& n, const stats::QueueId& id, const stats::QueueSample& q) {
    if (id.dir == stats::Dir::tx) {
        n.frames_tx += q.packets;
        n.bytes_tx += q.bytes;
    } else {
        n.frames_rx += q.packets;
        n.bytes_rx += q.bytes;
    }
}

}  // namespace

PortNumbers port_numbers(const std::vector<stats::QueueId>& ids, const stats::Snapshot& s, const std::string& port) {
    PortNumbers n;
    for (size_t i = 0; i < ids.size() && i < s.queues.size(); ++i)
        if (ids[i].port == port) add(n, ids[i], s.queues[i]);
    return n;
}

PortNumbers port_numbers(const result::TrialResult& r, const std::string& port) {
    PortNumbers n;
    for (const auto& q : r.queues)
        if (q.id.port == port) add(n, q.id, q.final);
    return n;
}

}  // namespace lr::otg
