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

void RxMeasure::copy_flows() {
    auto& buf = flows_live_->buf;
    for (size_t f = 0; f < buf.size() && f < out_->streams.size(); ++f) {
        const auto& t = out_->streams[f].seq;
        const auto& c = t.counts();
        buf[f] = {c.received, t.gaps(), c.reordered, c.duplicates, c.late};
    }
    flows_live_->answer(flows_seen_);
}

}  // namespace lr::stats
