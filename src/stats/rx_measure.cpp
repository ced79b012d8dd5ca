#include "stats/rx_measure.h"

namespace lr::stats {

void RxMeasure::on_ours(const packet::SigInfo& r) {
    ++ours_;
    auto& st = out_->streams[r.stream];
    const uint64_t s = st.seq.extend(r.seq, r.seq_bits);
    const auto& c = st.seq.counts();
    const uint64_t next = c.any ? c.highest + 1 : 0;  // the sequence expected in order
    switch (st.seq.add(s)) {
        case SeqTracker::Arrival::in_order:
            ++unique_;
            gaps_ += s - next;  // sequences skipped (0 when in order)
            break;
        case SeqTracker::Arrival::reordered:
            ++unique_, ++reordered_;
            if (gaps_) --gaps_;  // it fills a gap counted earlier
            break;
        case SeqTracker::Arrival::duplicate: ++dup_; break;
        case SeqTracker::Arrival::late: ++late_; break;
    }
    if (r.has_ts) {
        const uint64_t lat = (now48_ - r.ts_ns) & kTsMask;
        if (lat < (uint64_t(1) << 47)) {  // a timestamp from the future would wrap: ignore it
            lat_->add(lat);
            st.jitter.add(r.ts_ns, r.ts_ns + lat);
        }
    }
}

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
