#include "report/connect_report.h"

#include <fmt/format.h>

#include "report/result_fields.h"

namespace lr::report {
namespace {

using J = nlohmann::json;

J counts_json(const stats::ConnectCounts& c) {
    return {{"syns", c.syns},           {"answered", c.answered},   {"refused", c.refused},
            {"timeouts", c.timeouts},   {"in_flight", c.in_flight}, {"late", c.late},
            {"duplicate", c.duplicate}, {"misrouted", c.misrouted}, {"replies", c.replies},
            {"replies_dropped", c.replies_dropped}, {"closed", c.closed}, {"resets", c.resets},
            {"unclosed", c.unclosed},   {"open", c.open},           {"other", c.other},
            {"malformed", c.malformed}, {"window_full", c.window_full}};
}

std::string where(const std::string& port, uint16_t queue) { return fmt::format("{} q{}", port, queue); }

}  // namespace

std::vector<std::string> connect_live_lines(const std::vector<result::ConnectLive>& now,
                                            std::vector<result::ConnectLive>& prev, double seconds) {
    std::vector<std::string> out;
    for (size_t i = 0; i < now.size(); ++i) {
        const auto& c = now[i].counts;
        const uint64_t before = i < prev.size() ? prev[i].counts.answered : 0;
        const double cps = seconds > 0 ? static_cast<double>(c.answered - before) / seconds : 0;
        out.push_back(fmt::format("  {}: {:.0f} connections/s; SYNs {}, answered {}, refused {}, timed out {}, in "
                                  "flight {}{}",
                                  where(now[i].port, now[i].queue), cps, c.syns, c.answered, c.refused, c.timeouts,
                                  c.in_flight, c.open ? fmt::format(", open {}, closed {}", c.open, c.closed) : std::string()));
    }
    prev = now;
    return out;
}

void print_connect_live(std::FILE* out, const std::vector<result::ConnectLive>& now,
                        std::vector<result::ConnectLive>& prev, double seconds) {
    for (const auto& l : connect_live_lines(now, prev, seconds)) fmt::print(out, "{}\n", l);
    std::fflush(out);
}

void print_connect_summary(std::FILE* out, const result::TrialResult& r) {
    fmt::print(out, "\n{:<16} {:>12} {:>12} {:>10} {:>10} {:>10} {:>12} {:>10} {:>10} {:>10}\n", "queue", "SYNs",
               "answered", "refused", "timeouts", "late", "conn/s", "p50 us", "p99 us", "max us");
    stats::ConnectCounts all;
    for (const auto& q : r.connect) {
        const auto& c = q.counts;
        all += c;
        fmt::print(out, "{:<16} {:>12} {:>12} {:>10} {:>10} {:>10} {:>12.0f} {:>10.1f} {:>10.1f} {:>10.1f}\n",
                   where(q.port, q.queue), c.syns, c.answered, c.refused, c.timeouts, c.late, c.per_second(),
                   q.handshake.p50 / 1e3, q.handshake.p99 / 1e3, q.handshake.max / 1e3);
    }
    if (r.connect.size() > 1)
        fmt::print(out, "{:<16} {:>12} {:>12} {:>10} {:>10} {:>10} {:>12.0f}\n", "all", all.syns, all.answered,
                   all.refused, all.timeouts, all.late, all.per_second());
    if (all.closed || all.open || all.unclosed || all.resets)
        fmt::print(out, "Closed by the listener: {} (reset {}, not closed in time {}, still open {})\n", all.closed,
                   all.resets, all.unclosed, all.open);
    fmt::print(out, "Replies (ACK, RST, FIN) sent: {}{}\n", all.replies,
               all.replies_dropped ? fmt::format(", {} could not be queued", all.replies_dropped) : std::string());
    for (const auto& n : r.notes) fmt::print(out, "note: {}\n", n);
    for (const auto& v : r.violations) fmt::print(out, "INVALID: {}\n", v);
    fmt::print(out, "Verdict: {}{}\n", result::verdict_str(r.verdict),
               r.verdict_reason.empty() ? "" : " (" + r.verdict_reason + ")");
}

J connect_json(const std::vector<result::ConnectResult>& v) {
    J queues = J::array();
    stats::ConnectCounts all;
    for (const auto& q : v) {
        all += q.counts;
        const J buckets = json_array(latency_bucket_fields(), q.handshake_buckets);
        queues.push_back({{"port", q.port},
                          {"queue", q.queue},
                          {"counts", counts_json(q.counts)},
                          {"connections_per_s", q.counts.per_second()},
                          {"frames_sent", q.frames_sent},
                          {"frames_unsent", q.frames_unsent},
                          {"handshake_ns", latency_json(q.handshake)},
                          {"handshake_buckets", buckets}});
    }
    return {{"queues", queues}, {"total", counts_json(all)}, {"connections_per_s", all.per_second()}};
}

}  // namespace lr::report
