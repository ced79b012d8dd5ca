#include "stats/rx_measure.h"

namespace lr::stats {

void RxMeasure::publish(QueueCounters& c) const {
    stats::publish(c.rx_ours, ours_);
    stats::publish(c.rx_unique, unique_);
    stats::publish(c.rx_foreign, foreign_);
    stats::publish(c.rx_stale, stale_);
    stats::publish(c.rx_malformed, malformed_);
    stats::publish(c.rx_dup, dup_);
    stats::publish(c.rx_reordered, reordered_);
    stats::publish(c.rx_late, late_);
    stats::publish(c.rx_gaps, gaps_);
}

}  // namespace lr::stats
