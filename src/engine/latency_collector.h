// The control thread's side of live latency: each interval it asks every receiver for the
// histogram of the frames it measured since the last one (stats::LatencyExchange), merges
// them into the interval's row and into each queue's total. No histogram is ever read
// while its worker writes it, and a worker pays nothing per frame for this.
#pragma once
#include <vector>

#include "stats/latency.h"
#include "stats/rx_measure.h"
#include "stats/snapshot.h"

namespace lr::engine {

class LatencyCollector {
public:
    // `results`: the receivers' results (those without a live exchange are skipped).
    explicit LatencyCollector(std::vector<stats::RxResult>& results);
    // True when some receiver measures latency live (its exchange exists once planned).
    bool live() const;
    // Fills the row's latency fields with what arrived since the last call. `final`: the
    // workers have ended (after join), so both buffers of every exchange are the control
    // thread's.
    void take(stats::IntervalRow& row, bool final);

private:
    std::vector<stats::RxResult>& results_;
    std::vector<stats::LatencyTaker> takers_;
};

}  // namespace lr::engine
