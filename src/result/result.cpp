#include "result/result.h"

#include <fmt/format.h>

namespace lr::result {

const char* verdict_str(Verdict v) {
    switch (v) {
        case Verdict::pass: return "pass";
        case Verdict::fail: return "fail";
        case Verdict::invalid: return "invalid";
    }
    return "?";
}

std::string outage_text(const LinkOutage& o) {
    const auto when = o.to < 0 ? fmt::format("down from {:.3f} s to the end of the trial ({:.3f} s)", o.from, o.seconds)
                               : fmt::format("down at {:.3f} s for {:.3f} s", o.from, o.seconds);
    return fmt::format("link {} {}: {} frames handed to its device meanwhile, {} dropped by it, {} received", o.port,
                       when, o.handed, o.egress_dropped, o.received);
}

namespace {
template <class H>
LatencySummary summary_of(const H& h) {
    LatencySummary l;
    l.count = h.count();
    if (!l.count) return l;
    l.min = h.min();
    l.max = h.max();
    l.mean = h.mean();
    l.p50 = h.percentile(0.5);
    l.p90 = h.percentile(0.9);
    l.p99 = h.percentile(0.99);
    l.p999 = h.percentile(0.999);
    return l;
}
}  // namespace

LatencySummary summarize(const stats::LatencyHistogram& h) { return summary_of(h); }
LatencySummary summarize(const stats::StreamLatency& h) { return summary_of(h); }

std::optional<LatencySummary> live_latency(const stats::IntervalRow& row) {
    if (!row.latency_live) return std::nullopt;
    LatencySummary l;
    l.count = row.lat_count;
    l.min = row.lat_min;
    l.p50 = row.lat_p50;
    l.p99 = row.lat_p99;
    l.max = row.lat_max;
    return l;
}

namespace {
template <class H>
std::vector<LatencyBucket> buckets_of(const H& h) {
    std::vector<LatencyBucket> out;
    if (!h.count()) return out;
    for (unsigned b = 0; b < H::kBuckets; ++b)
        if (const uint64_t n = h.bucket_count(b))
            out.push_back({H::bucket_low(b), H::bucket_high(b), n});
    // The last bucket also holds every value beyond the histogram's range.
    if (out.back().upper_ns <= h.max()) out.back().upper_ns = h.max() + 1;
    return out;
}
}  // namespace

std::vector<LatencyBucket> latency_buckets(const stats::LatencyHistogram& h) { return buckets_of(h); }
std::vector<LatencyBucket> latency_buckets(const stats::StreamLatency& h) { return buckets_of(h); }

GapSummary summarize(const stats::GapStats& g) {
    GapSummary s;
    s.measured = g.gaps() > 0;
    if (!s.measured) return s;
    s.gaps = g.gaps();
    s.mean_ns = g.mean_ns();
    s.stddev_ns = g.stddev_ns();
    s.p50_ns = g.percentile_ns(0.5);
    s.p90_ns = g.percentile_ns(0.9);
    s.p99_ns = g.percentile_ns(0.99);
    s.max_ns = g.max_ns();
    s.zero_fraction = g.zero_fraction();
    return s;
}

}  // namespace lr::result
