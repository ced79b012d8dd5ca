#include "engine/latency_collector.h"

#include <chrono>
#include <thread>

namespace lr::engine {

LatencyCollector::LatencyCollector(std::vector<stats::RxResult>& results)
    : results_(results), takers_(results.size()) {}

bool LatencyCollector::live() const {
    for (const auto& r : results_)
        if (r.live) return true;
    return false;
}

void LatencyCollector::take(stats::IntervalRow& row, bool final) {
    if (!live()) return;
    stats::LatencyHistogram iv;
    if (final) {
        for (size_t i = 0; i < results_.size(); ++i)
            if (auto* x = results_[i].live.get()) takers_[i].final(*x, results_[i].latency, iv);
    } else {
        // Ask every receiver to switch buffers, then take the buffers they leave. A worker
        // that does not answer within 2 ms (descheduled) keeps its request pending: its
        // frames are counted in a later interval, never lost.
        for (size_t i = 0; i < results_.size(); ++i) {
            auto* x = results_[i].live.get();
            if (!x) continue;
            takers_[i].collect(*x, results_[i].latency, iv);  // a request left from the last interval
            takers_[i].request(*x);
        }
        const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(2);
        for (;;) {
            bool waiting = false;
            for (size_t i = 0; i < results_.size(); ++i) {
                auto* x = results_[i].live.get();
                if (x && takers_[i].pending() && !takers_[i].collect(*x, results_[i].latency, iv)) waiting = true;
            }
            if (!waiting || std::chrono::steady_clock::now() > deadline) break;
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

}  // namespace lr::engine
