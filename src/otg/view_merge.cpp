#include "otg/view_merge.h"

#include <algorithm>
#include <fmt/format.h>
#include <map>
#include <stdexcept>

namespace lr::otg {

std::vector<result::LatencyBucket> merge_buckets(const std::vector<std::vector<result::LatencyBucket>>& parts) {
    // Buckets start at the same bounds in every engine; an engine's last one reaches up to its
    // own largest value, so a bucket keeps the highest upper end any engine gave it.
    std::map<uint64_t, result::LatencyBucket> sum;
    for (const auto& p : parts)
        for (const auto& b : p) {
            auto& m = sum[b.lower_ns];
            m.lower_ns = b.lower_ns;
            m.upper_ns = std::max(m.upper_ns, b.upper_ns);
            m.count += b.count;
        }
    std::vector<result::LatencyBucket> out;
    for (const auto& [lower, b] : sum) out.push_back(b);
    return out;
}

uint64_t bucket_quantile(const std::vector<result::LatencyBucket>& buckets, double q) {
    uint64_t total = 0;
    for (const auto& b : buckets) total += b.count;
    if (!total) return 0;
    const auto rank = static_cast<uint64_t>(std::min(1.0, std::max(0.0, q)) * static_cast<double>(total - 1));
    uint64_t seen = 0;
    for (const auto& b : buckets) {
        seen += b.count;
        if (seen > rank) return b.upper_ns - b.lower_ns <= 1 ? b.lower_ns : b.lower_ns + (b.upper_ns - b.lower_ns) / 2;
    }
    return buckets.back().lower_ns;
}

const char* basis_name(LatencyBasis b) {
    switch (b) {
        case LatencyBasis::one_clock: return "one_clock";
        case LatencyBasis::synchronised: return "synchronised";
        case LatencyBasis::indicative: return "indicative";
    }
    return "indicative";
}

void LatencyClock::worsen(const LatencyClock& o) {
    basis = std::max(basis, o.basis);
    bound_ns = basis == LatencyBasis::indicative ? 0 : std::max(bound_ns, o.bound_ns);
}

MergedView merge_views(const MergePlan& plan, const std::vector<EngineView>& engines) {
    MergedView m;
    const size_t flows = plan.flow_tx_engine.size();
    for (size_t e = 0; e < engines.size(); ++e) {
        const auto& v = engines[e].view;
        if (v.flows.size() != flows || v.ports.size() != plan.port_engine.size())
            throw std::runtime_error(fmt::format("engine view {} has {} flows and {} ports, the configuration {} and {}", e,
                                                 v.flows.size(), v.ports.size(), flows, plan.port_engine.size()));
    }
    m.latency_clock.assign(flows, {});
    m.rx_over_tx.assign(flows, false);
    m.buckets.resize(flows);
    for (size_t i = 0; i < flows; ++i) {
        const size_t txe = plan.flow_tx_engine[i];
        const auto& tx = engines.at(txe).view.flows[i];
        FlowView f = tx;
        f.n = {};
        f.n.frames_tx = tx.n.frames_tx;
        f.n.bytes_tx = tx.n.bytes_tx;
        f.rx_pps = f.rx_l2_bps = f.rx_l1_bps = 0;
        bool counting = false;  // another engine still receives it
        std::vector<std::vector<result::LatencyBucket>> parts;
        for (size_t e = 0; e < engines.size(); ++e) {
            const auto& x = engines[e].view.flows[i];
            const auto& n = x.n;
            if (e != txe && x.transmit != Transmit::stopped) counting = true;
            f.n.frames_rx += n.frames_rx;
            f.n.bytes_rx += n.bytes_rx;
            f.n.reordered += n.reordered;
            f.n.duplicates += n.duplicates;
            f.n.late += n.late;
            f.rx_pps += x.rx_pps;
            f.rx_l2_bps += x.rx_l2_bps;
            f.rx_l1_bps += x.rx_l1_bps;
            f.n.jitter_ns = std::max(f.n.jitter_ns, n.jitter_ns);
            const int64_t to_epoch = engines[e].view.realtime_minus_monotonic_ns;
            const auto epoch = [&](uint64_t mono) { return mono ? static_cast<uint64_t>(static_cast<int64_t>(mono) + to_epoch) : 0; };
            if (n.first_rx_ns && (!f.n.first_rx_ns || epoch(n.first_rx_ns) < f.n.first_rx_ns)) f.n.first_rx_ns = epoch(n.first_rx_ns);
            if (n.last_rx_ns) f.n.last_rx_ns = std::max(f.n.last_rx_ns, epoch(n.last_rx_ns));
            if (!n.lat_n) continue;
            const auto& rxc = engines[e].clock;
            const auto& txc = engines[txe].clock;
            if (rxc.boot_id != txc.boot_id) {  // stamped by one host's clock, read by another's
                const bool both = rxc.sync.synchronised && txc.sync.synchronised && rxc.sync.bound_ns && txc.sync.bound_ns;
                m.latency_clock[i].worsen(both ? LatencyClock{LatencyBasis::synchronised, *rxc.sync.bound_ns + *txc.sync.bound_ns}
                                               : LatencyClock{LatencyBasis::indicative, 0});
            }
            f.n.lat_min_ns = f.n.lat_n ? std::min(f.n.lat_min_ns, n.lat_min_ns) : n.lat_min_ns;
            f.n.lat_max_ns = std::max(f.n.lat_max_ns, n.lat_max_ns);
            f.n.lat_n += n.lat_n;
            f.n.lat_sum_ns += n.lat_sum_ns;
            parts.push_back(n.lat_buckets);
        }
        m.buckets[i] = merge_buckets(parts);
        f.n.lat_buckets = m.buckets[i];
        if (f.transmit == Transmit::stopped && counting) f.transmit = Transmit::started;
        m.rx_over_tx[i] = f.n.frames_rx > f.n.frames_tx;
        // While frames are on their way, two engines' views are not of one instant: a receiver
        // read after its sender may have counted frames the sender's view does not yet show.
        if (f.transmit != Transmit::stopped && f.n.frames_rx > f.n.frames_tx) f.n.frames_rx = f.n.frames_tx;
        m.view.flows.push_back(std::move(f));
    }
    for (size_t p = 0; p < plan.port_engine.size(); ++p) {
        PortView pv = engines.at(plan.port_engine[p]).view.ports[p];
        pv.location = plan.port_location[p];
        m.view.ports.push_back(std::move(pv));
    }
    m.view.realtime_minus_monotonic_ns = 0;
    return m;
}

}  // namespace lr::otg
