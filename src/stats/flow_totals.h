// What a flow's received frames brought and when, beside its sequence tracking: bytes, the
// latency sum and extremes of the frames with a timestamp, and the first and last arrival.
// A receiver keeps one per flow when asked (RxMeasure's flow_totals); the live views, the
// trial's results and the OTG server's metrics add them up the same way (merge).
#pragma once
#include <algorithm>
#include <cstdint>

namespace lr::stats {

struct FlowRxTotals {
    uint64_t bytes = 0;                  // FCS included, every frame (duplicates too)
    uint64_t lat_n = 0, lat_sum = 0;     // frames with a timestamp, and their latencies' sum (ns)
    uint64_t lat_min = ~0ull, lat_max = 0;
    uint64_t first_ns = 0, last_ns = 0;  // receive clock (CLOCK_MONOTONIC) of the first and last (0: none)

    // The least latency, 0 when no frame had a timestamp.
    uint64_t min_ns() const { return lat_n ? lat_min : 0; }
    void merge(const FlowRxTotals& o) {
        bytes += o.bytes;
        lat_n += o.lat_n;
        lat_sum += o.lat_sum;
        lat_min = std::min(lat_min, o.lat_min);
        lat_max = std::max(lat_max, o.lat_max);
        if (o.first_ns && (!first_ns || o.first_ns < first_ns)) first_ns = o.first_ns;
        last_ns = std::max(last_ns, o.last_ns);
    }
};

}  // namespace lr::stats
