#include "spec/stream_rates.h"

#include <algorithm>
#include <cmath>
#include <fmt/format.h>
#include <numeric>

#include "stream/pcap_source.h"
#include "util/error.h"

namespace lr::spec {
namespace {

double mean_size(const StreamSpec& st) {
    if (!st.replay || !st.replay->frames) return st.size.mean();
    const auto& f = *st.replay->frames;
    return static_cast<double>(f.bytes) / static_cast<double>(f.records.size()) + packet::kFcsLen;
}

// Splits `total` over `parts` in proportion to `w` (largest remainders first): exact.
std::vector<uint64_t> apportion(uint64_t total, const std::vector<double>& w) {
    const double sum = std::accumulate(w.begin(), w.end(), 0.0);
    std::vector<uint64_t> out(w.size(), 0);
    std::vector<std::pair<double, size_t>> rem;
    uint64_t given = 0;
    for (size_t i = 0; i < w.size(); ++i) {
        const double exact = sum > 0 ? static_cast<double>(total) * w[i] / sum : 0;
        out[i] = static_cast<uint64_t>(std::floor(exact));
        given += out[i];
        rem.emplace_back(exact - std::floor(exact), i);
    }
    std::sort(rem.begin(), rem.end(), [](const auto& a, const auto& b) { return a.first > b.first; });
    for (size_t k = 0; given < total && k < rem.size(); ++k, ++given) ++out[rem[k].second];
    return out;
}

}  // namespace

std::vector<StreamRate> stream_rates(const RunSpec& spec, double line_bps) {
    const auto mix = spec.mix();
    std::vector<StreamRate> out(mix.size());
    // The streams that share the run's rate, and their parts of it.
    double shares = 0;
    size_t unspecified = 0;
    for (const auto& st : mix) {
        if (st.rate || (st.replay && !st.share)) continue;
        if (st.share) shares += *st.share;
        else ++unspecified;
    }
    const double rest = unspecified ? std::max(0.0, 1.0 - shares) / static_cast<double>(unspecified) : 0;
    double share_mean = 0, share_sum = 0;  // the sharing streams' mean frame size, by share
    for (size_t i = 0; i < mix.size(); ++i) {
        const auto& st = mix[i];
        out[i].mean_size = mean_size(st);
        if (st.rate || (st.replay && !st.share)) continue;
        out[i].weight = st.share.value_or(rest);
        share_mean += out[i].weight * out[i].mean_size;
        share_sum += out[i].weight;
    }
    // The run's rate in packets/s at the sharing streams' mean size.
    double run_pps = 0;
    if (share_sum > 0 && spec.rate.limited()) {
        // A rate in bits per second counts frames of the sharing streams' mean size.
        run_pps = to_pps(spec.rate, share_mean / share_sum, line_bps);
    }
    double unpaced_weight = 0;
    for (size_t i = 0; i < mix.size(); ++i) {
        const auto& st = mix[i];
        auto& r = out[i];
        if (st.rate) {
            r.pps = to_pps(*st.rate, r.mean_size, line_bps);
            if (!st.rate->limited()) r.weight = 1;
        } else if (st.replay && !st.share) {
            const auto& f = *st.replay->frames;
            const double span_s = static_cast<double>(f.span_ns) * 1e-9 / st.replay->speed;
            // The recorded rate: records per second of the capture (one record: as fast as possible).
            r.pps = f.records.size() > 1 && span_s > 0 ? static_cast<double>(f.records.size() - 1) / span_s : 0;
            if (r.pps == 0) r.weight = 1;
        } else {
            r.pps = spec.rate.limited() ? run_pps * r.weight : 0;
        }
        if (r.pps == 0) unpaced_weight += r.weight;
        if (st.count) r.count = st.count;
        else if (st.replay && st.replay->loops)
            r.count = st.replay->loops * st.replay->frames->records.size();
    }
    for (auto& r : out)
        if (r.pps == 0 && unpaced_weight > 0) r.weight /= unpaced_weight;
    // The run's count over the streams without their own.
    if (spec.count) {
        std::vector<size_t> takers;
        bool paced = false, unpaced = false;
        for (size_t i = 0; i < mix.size(); ++i)
            if (!out[i].count) {
                takers.push_back(i);
                (out[i].pps > 0 ? paced : unpaced) = true;
            }
        if (paced && unpaced)
            throw UsageError("--count over streams some paced and some as fast as possible has no fair split: give "
                             "each stream a count= of its own");
        std::vector<double> w;
        for (size_t i : takers) w.push_back(paced ? out[i].pps : out[i].weight);
        const auto split = apportion(*spec.count, w);
        for (size_t k = 0; k < takers.size(); ++k) out[takers[k]].count = split[k];
    }
    return out;
}

double total_pps(const std::vector<StreamRate>& r) {
    double t = 0;
    for (const auto& x : r) t += x.pps;
    return t;
}

double mix_mean_size(const std::vector<StreamRate>& r) {
    const bool paced = total_pps(r) > 0;
    double sum = 0, weights = 0;
    for (const auto& x : r) {
        const double w = paced ? x.pps : x.weight;
        sum += w * x.mean_size;
        weights += w;
    }
    return weights > 0 ? sum / weights : 0;
}

void rates_to_shares(RunSpec& spec, double line_bps) {
    if (spec.streams.empty()) return;  // one stream: the load is its rate
    const bool any_rate = std::any_of(spec.streams.begin(), spec.streams.end(),
                                      [](const StreamSpec& st) { return st.rate || (st.replay && !st.share); });
    if (!any_rate) return;
    const auto rates = stream_rates(spec, line_bps);
    const double total = total_pps(rates);
    if (total <= 0) return;
    for (size_t i = 0; i < spec.streams.size(); ++i) {
        spec.streams[i].share = rates[i].pps / total;
        spec.streams[i].rate.reset();
    }
}

}  // namespace lr::spec
