#include "engine/stream_results.h"

#include <map>

#include "spec/stream_rates.h"
#include "util/error.h"

namespace lr::engine {

void stream_results(result::TrialResult& r, const spec::RunSpec& spec, const std::vector<TxStreams>& tx,
                    const std::vector<const stats::RxResult*>& rx) {
    for (const auto* x : rx) {
        if (x->sizes.empty()) continue;
        if (r.rx_sizes.empty())
            for (unsigned z = 0; z < x->sizes.size(); ++z) r.rx_sizes.push_back({z, 0});
        for (unsigned z = 0; z < x->sizes.size(); ++z) r.rx_sizes[z].frames += x->sizes[z];
    }
    std::erase_if(r.rx_sizes, [](const result::SizeCount& c) { return c.frames == 0; });
    // A session that only receives has stream results when it knows the streams (an engine
    // counting another engine's flows); without them there is nothing to tell them apart by.
    if (spec.reflect || (!spec.tx_enabled() && spec.streams.empty())) return;
    const auto mix = spec.mix();
    std::vector<spec::StreamRate> rates;
    try {
        rates = spec::stream_rates(spec, spec.line_rate_bps);
    } catch (const UsageError&) {
        rates.assign(mix.size(), {});  // the session refused such a rate before the trial
    }
    const bool single = spec.single_fixed_stream();
    const bool receives = spec.rx_enabled() && !spec.paired();
    uint32_t first = 0;
    for (uint32_t s = 0; s < mix.size(); ++s) {
        result::StreamResult st;
        st.index = s;
        st.name = mix[s].name;
        st.first_flow = first;
        st.flows = spec.stream_flows(mix[s]);
        first += st.flows;
        st.requested_pps = rates[s].pps;
        std::map<unsigned, uint64_t> sizes;
        if (single) {
            st.sent = r.tx.packets;
            st.sent_bytes = r.tx.bytes;
            sizes[spec.frame.frame_size] = r.tx.packets;
        } else {
            for (const auto& t : tx) {
                if (!t.program || !t.shares || t.shares->size() != t.program->shares.size()) continue;
                for (size_t k = 0; k < t.program->shares.size(); ++k) {
                    const auto& share = t.program->shares[k];
                    if (share.stream != s) continue;
                    const auto& sent = (*t.shares)[k];
                    st.sent += sent.frames;
                    st.sent_bytes += sent.bytes;
                    if (spec.signature) st.unsigned_sent += sent.frames - std::min(sent.frames, sent.signed_frames);
                    if (share.replay) continue;  // a capture's frames keep their own sizes
                    for (size_t z = 0; z < share.sizes.size() && z < sent.per_size.size(); ++z)
                        sizes[share.sizes[z]] += sent.per_size[z];
                }
            }
        }
        for (const auto& [size, n] : sizes)
            if (n) st.sizes.push_back({size, n});
        // What arrived: its flows' results (signed), or the whole run's (one stream, plain).
        const bool is_signed = spec.stream_sig_level(mix[s]) != packet::SigLevel::none;
        if (receives && is_signed) {
            st.measured = true;
            for (const auto& f : r.flows) {
                if (f.stream < st.first_flow || f.stream >= st.first_flow + st.flows) continue;
                st.received += f.received;
                st.lost += f.lost;
                st.reordered += f.reordered;
                st.duplicates += f.duplicates;
                st.late += f.late;
                st.jitter_ns = std::max(st.jitter_ns, f.jitter_ns);
                st.rx.merge(f.rx);
            }
            if (mix.size() == 1) {
                st.latency = result::summarize(r.latency);
                st.latency_buckets = result::latency_buckets(r.latency);
            } else {
                stats::StreamLatency h;
                for (const auto* x : rx)
                    if (s < x->stream_latency.size()) h.merge(x->stream_latency[s]);
                st.latency = result::summarize(h);
                st.latency_buckets = result::latency_buckets(h);
            }
        } else if (receives && mix.size() == 1 && r.loopback) {
            st.measured = true;
            st.received = r.rx.unique;
            st.lost = r.lost;
        }
        st.tx_pps = r.tx_seconds > 0 ? static_cast<double>(st.sent) / r.tx_seconds : 0;
        r.streams.push_back(std::move(st));
    }
}

}  // namespace lr::engine
