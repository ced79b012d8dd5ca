#include "stats/rx_measure.h"

namespace lr::stats {

void RxMeasure::finish() {
    if (!stream_lat_ || finished_) return;
    finished_ = true;
    ended_.apply(by_stream_);
    std::vector<StreamLatency::Totals> totals(out_->stream_latency.size());
    for (uint32_t f = 0; f < nstreams_; ++f) {
        StreamRx& st = streams_[f];
        st.latency.flush(stream_lat_[stream_of_[f]]);
        auto& t = totals[stream_of_[f]];
        t.count += st.latency_count();
        t.sum += st.latency.sum;
        t.min = std::min(t.min, st.latency_min());
        t.max = std::max(t.max, st.latency_max());
    }
    // The buckets' counts lie between those of each stream's extremes.
    by_stream_.add_to_histograms(totals.data());
    for (size_t m = 0; m < totals.size(); ++m) stream_lat_[m].add(totals[m]);
}

void RxMeasure::publish(QueueCounters& c) const {
    stats::publish(c.rx_ours, t_.ours);
    stats::publish(c.rx_unique, t_.unique());
    stats::publish(c.rx_foreign, t_.foreign);
    stats::publish(c.rx_stale, t_.stale);
    stats::publish(c.rx_malformed, t_.malformed);
    stats::publish(c.rx_dup, t_.dup);
    stats::publish(c.rx_reordered, t_.reordered);
    stats::publish(c.rx_late, t_.late);
    stats::publish(c.rx_gaps, t_.gaps);
}

int RxMeasure::classify_general(const uint8_t* p, uint32_t len, bool csum_verified, lr_wire_sig& s) const {
    lr_wire_hdrs h;
    return lr_wire_classify(p, p + len, nonce_, nonce_mode_, nstreams_, csum_verified, &h, &s);
}

void RxMeasure::copy_flows() {
    auto& buf = flows_live_->buf;
    for (size_t f = 0; f < buf.size() && f < out_->streams.size(); ++f) {
        const auto& t = out_->streams[f].seq;
        const auto& c = t.counts();
        buf[f] = {c.received, t.gaps(), c.reordered, c.duplicates, c.late,
                  f < out_->flow_totals.size() ? out_->flow_totals[f] : FlowRxTotals{}};
    }
    flows_live_->answer(flows_seen_);
}

}  // namespace lr::stats
