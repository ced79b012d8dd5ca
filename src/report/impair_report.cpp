#include "report/impair_report.h"

#include <fmt/format.h>

#include "report/result_fields.h"

namespace lr::report {
namespace {

using J = nlohmann::json;

std::string direction(const std::string& from, const std::string& to, uint16_t queue) {
    return queue ? fmt::format("{} -> {} q{}", from, to, queue) : fmt::format("{} -> {}", from, to);
}

J counts_json(const stats::ImpairCounts& c) {
    return {{"received", c.received},   {"dropped", c.dropped},     {"overflowed", c.overflowed},
            {"oversize", c.oversize},   {"duplicated", c.duplicated}, {"reordered", c.reordered},
            {"early", c.early},         {"corrupted", c.corrupted}, {"shaped", c.shaped},
            {"forwarded", c.forwarded}, {"held", c.held},           {"drop_digest", fmt::format("{:016x}", c.drop_digest)}};
}

}  // namespace

std::vector<std::string> impair_live_lines(const std::vector<result::ImpairLive>& v) {
    std::vector<std::string> out;
    for (const auto& d : v) {
        const auto& c = d.counts;
        out.push_back(fmt::format("  {}: received {}, forwarded {}, held {}, dropped {}, duplicated {}, reordered {} "
                                  "(early {}), corrupted {}, shaped {}, overflowed {}{}",
                                  direction(d.from, d.to, d.queue), c.received, c.forwarded, c.held, c.dropped,
                                  c.duplicated, c.reordered, c.early, c.corrupted, c.shaped, c.overflowed,
                                  c.oversize ? fmt::format(", oversize {}", c.oversize) : std::string()));
    }
    return out;
}

void print_impair_live(std::FILE* out, const std::vector<result::ImpairLive>& v) {
    for (const auto& l : impair_live_lines(v)) fmt::print(out, "{}\n", l);
    std::fflush(out);
}

void print_impair_summary(std::FILE* out, const result::TrialResult& r) {
    fmt::print(out, "\n{:<28} {:>12} {:>12} {:>10} {:>10} {:>10} {:>10} {:>10} {:>10} {:>10} {:>8}\n", "direction",
               "received", "forwarded", "dropped", "dupl", "reord", "early", "corrupt", "shaped", "overflow", "held");
    for (const auto& d : r.impair) {
        const auto& c = d.counts;
        fmt::print(out, "{:<28} {:>12} {:>12} {:>10} {:>10} {:>10} {:>10} {:>10} {:>10} {:>10} {:>8}\n",
                   direction(d.from, d.to, d.queue), c.received, c.forwarded, c.dropped, c.duplicated, c.reordered,
                   c.early, c.corrupted, c.shaped, c.overflowed, c.held);
    }
    for (const auto& d : r.impair) {
        const auto& h = d.held_time;
        const auto& l = d.late_time;
        if (!h.count) continue;
        fmt::print(out,
                   "{}: held min {:.3f} us, p50 {:.3f}, p99 {:.3f}, max {:.3f} us (of which late p50 {:.3f}, p99 {:.3f}, "
                   "max {:.3f} us); the egress device took {} of {}; the ingress host dropped {}\n",
                   direction(d.from, d.to, d.queue), h.min / 1e3, h.p50 / 1e3, h.p99 / 1e3, h.max / 1e3, l.p50 / 1e3,
                   l.p99 / 1e3, l.max / 1e3, d.sent, d.counts.forwarded, d.ingress_host_dropped);
    }
    for (const auto& n : r.notes) fmt::print(out, "note: {}\n", n);
    for (const auto& v : r.violations) fmt::print(out, "INVALID: {}\n", v);
    fmt::print(out, "Verdict: {}{}\n", result::verdict_str(r.verdict),
               r.verdict_reason.empty() ? "" : " (" + r.verdict_reason + ")");
}

J impair_json(const std::vector<result::ImpairResult>& v) {
    J a = J::array();
    for (const auto& d : v) {
        a.push_back({{"from", d.from},
                     {"to", d.to},
                     {"queue", d.queue},
                     {"counts", counts_json(d.counts)},
                     {"sent", d.sent},
                     {"unsent", d.unsent},
                     {"ingress_host_dropped", d.ingress_host_dropped},
                     {"held_time", latency_json(d.held_time)},
                     {"held_time_buckets", json_array(latency_bucket_fields(), d.held_buckets)},
                     {"late_time", latency_json(d.late_time)},
                     {"late_time_buckets", json_array(latency_bucket_fields(), d.late_buckets)}});
    }
    return a;
}

}  // namespace lr::report
