#include "engine/stream_live.h"

#include <algorithm>

namespace lr::engine {

StreamLiveCollector::StreamLiveCollector(const spec::RunSpec& spec, TrialOutputs& out) : out_(out) {
    if (spec.single_fixed_stream()) return;
    const auto mix = spec.mix();
    for (uint32_t s = 0; s < mix.size(); ++s) {
        streams_.emplace_back();
        streams_.back().index = s;
        streams_.back().name = mix[s].name;
        stream_of_flow_.insert(stream_of_flow_.end(), spec.stream_flows(mix[s]), s);
    }
    tx_.resize(out.shares_live.size());
    rx_.resize(out.rx_results.size());
    last_tx_.resize(tx_.size());
    last_rx_.resize(rx_.size());
}

const std::vector<result::StreamLive>& StreamLiveCollector::take() {
    // The latest answer of each worker that answered; the others keep their previous one.
    for (size_t k = 0; k < tx_.size(); ++k)
        if (auto* x = out_.shares_live[k].get(); x && tx_[k].ready(*x)) last_tx_[k] = x->buf;
    for (size_t k = 0; k < rx_.size(); ++k)
        if (auto* x = out_.rx_results[k].flows_live.get(); x && rx_[k].ready(*x)) last_rx_[k] = x->buf;
    for (auto& st : streams_) {  // counts from zero
        result::StreamLive fresh;
        fresh.index = st.index;
        fresh.name = std::move(st.name);
        st = std::move(fresh);
    }
    for (size_t k = 0; k < last_tx_.size(); ++k)
        if (const auto& p = out_.programs[k])
            for (size_t s = 0; s < last_tx_[k].size() && s < p->shares.size(); ++s) {
                auto& st = streams_[p->shares[s].stream];
                st.sent += last_tx_[k][s].frames;
                st.sent_bytes += last_tx_[k][s].bytes;
            }
    for (const auto& flows : last_rx_)
        for (size_t f = 0; f < flows.size() && f < stream_of_flow_.size(); ++f) {
            auto& st = streams_[stream_of_flow_[f]];
            const auto& c = flows[f];
            st.received += c.received;
            st.gaps += c.gaps;
            st.reordered += c.reordered;
            st.duplicates += c.duplicates;
            st.late += c.late;
            st.rx.merge(c.totals);
        }
    for (size_t k = 0; k < tx_.size(); ++k)
        if (auto* x = out_.shares_live[k].get()) tx_[k].ask(*x);
    for (size_t k = 0; k < rx_.size(); ++k)
        if (auto* x = out_.rx_results[k].flows_live.get()) rx_[k].ask(*x);
    return streams_;
}

}  // namespace lr::engine
