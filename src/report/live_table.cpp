#include "report/live_table.h"

#include "report/connect_report.h"
#include "report/impair_report.h"

#include <algorithm>
#include <cstdlib>
#include <fmt/format.h>
#include <unistd.h>

#include "spec/rate.h"
#include "spec/stream_spec.h"

namespace lr::report {

bool is_terminal(std::FILE* f) { return isatty(fileno(f)) == 1; }

bool colour_wanted(std::FILE* f) {
    const char* nc = std::getenv("NO_COLOR");
    return is_terminal(f) && (nc == nullptr || *nc == '\0');
}

std::string LiveTableSink::paint(const std::string& s, const char* code) const {
    return colour_ ? fmt::format("\x1b[{}m{}\x1b[0m", code, s) : s;
}

void LiveTableSink::trial_started(const result::TrialStart& t) {
    trial_ = t.index;
    of_ = t.of;
    lines_ = 0;  // a new table below whatever was printed since
    why_ = t.why;
    prev_ = {};
    cur_ = {};
    if (t.spec) {
        frame_size_ = t.spec->frame.frame_size;
        requested_pps_ = t.spec->rate_pps;
        duration_s_ = t.spec->duration_s;
        count_ = t.spec->count ? *t.spec->count : 0;
    }
}

void LiveTableSink::snapshot(const std::vector<stats::QueueId>& ids, const stats::Snapshot& s) {
    ids_ = ids;
    prev_ = cur_;
    cur_ = s;
}

void LiveTableSink::interval(const stats::IntervalRow& row) {
    std::vector<std::string> out;
    const double dt = cur_.t - prev_.t;
    out.push_back(paint(fmt::format("{:<3} {:<14} {:>3} {:>9} {:>9} {:>9} {:>10} {:>9} {:>8} {:>6}", "dir", "port", "q",
                                    "Mpps", "L1 Gb/s", "L2 Gb/s", "packets", "lost", "reord", "dup"),
                        "1"));
    uint64_t tx_total = 0;
    for (size_t i = 0; i < ids_.size() && i < cur_.queues.size(); ++i) {
        const auto& q = cur_.queues[i];
        const auto* p = i < prev_.queues.size() ? &prev_.queues[i] : nullptr;
        const stats::Rates r{q.packets - (p ? p->packets : 0), q.bytes - (p ? p->bytes : 0), dt};
        const bool rx = ids_[i].dir == stats::Dir::rx;
        if (!rx) tx_total += q.packets;
        out.push_back(fmt::format("{:<3} {:<14} {:>3} {:>9.3f} {:>9.3f} {:>9.3f} {:>10} {:>9} {:>8} {:>6}",
                                  rx ? "rx" : "tx", ids_[i].port.substr(0, 14), ids_[i].queue, r.pps() / 1e6,
                                  r.l1_bps() / 1e9, r.l2_bps() / 1e9, q.packets, rx ? std::to_string(q.rx_gaps) : "",
                                  rx ? std::to_string(q.rx_reordered) : "", rx ? std::to_string(q.rx_dup) : ""));
    }
    out.push_back(paint(fmt::format("{:<22} {:>9.3f} {:>9.3f} {:>9.3f}   RX {:.3f} Mpps, {} open sequence gaps",
                                    "all TX", row.tx.pps() / 1e6, row.tx.l1_bps() / 1e9, row.tx.l2_bps() / 1e9,
                                    row.rx.pps() / 1e6, row.seq_gaps),
                        "1"));
    if (row.latency_live)
        out.push_back(row.lat_count ? fmt::format("latency (this interval): p50 {:.2f} us, p99 {:.2f} us, max {:.2f} us",
                                                  row.lat_p50 / 1e3, row.lat_p99 / 1e3, row.lat_max / 1e3)
                                    : std::string("latency (this interval): no timestamped frame"));
    uint64_t bp = 0, ring_full = 0, fill_empty = 0, no_socket = 0, missed = 0, device = 0, egress = 0;
    for (const auto& q : cur_.queues) bp += q.backpressure;
    for (const auto& ps : cur_.ports) {
        ring_full += ps.xsk_rx_ring_full + ps.xsk_rx_dropped;
        fill_empty += ps.xsk_rx_fill_empty;
        no_socket += ps.xdp_redirect_failed;
        missed += ps.imissed + ps.rx_nombuf;
        device += ps.idropped;
        egress += ps.odropped;
    }
    const std::string drops = fmt::format(
        "drops: device back-pressure {}, socket ring full {}, fill ring empty {}, no socket {}, NIC missed {}, "
        "receiving device {}, egress device {}",
        bp, ring_full, fill_empty, no_socket, missed, device, egress);
    out.push_back(ring_full + no_socket + missed + device + egress ? paint(drops, "33") : drops);
    if (!streams_.empty()) {
        auto worst = streams_;
        std::stable_sort(worst.begin(), worst.end(), [](const auto& a, const auto& b) { return a.gaps > b.gaps; });
        out.push_back(paint(fmt::format("{:<16} {:>12} {:>12} {:>10} {:>9} {:>6}  ({} streams, the worst {} by loss so far)",
                                        "stream", "sent", "received", "lost", "reord", "dup", streams_.size(),
                                        std::min(kWorstStreams, worst.size())),
                            "1"));
        for (size_t i = 0; i < worst.size() && i < kWorstStreams; ++i) {
            const auto& st = worst[i];
            const auto line = fmt::format("{:<16} {:>12} {:>12} {:>10} {:>9} {:>6}", spec::name_prefix(st.name, 16),
                                          st.sent, st.received, st.gaps, st.reordered, st.duplicates);
            out.push_back(st.gaps ? paint(line, "33") : line);
        }
    }
    for (auto& l : impair_live_lines(impair_)) out.push_back(std::move(l));
    for (auto& l : connect_live_lines(connect_, connect_prev_, row.t1 - row.t0)) out.push_back(std::move(l));
    if (row.generator_limited)
        out.push_back(paint(fmt::format("generator-limited: asked {}, offered {}", spec::format_pps(row.requested_pps),
                                        spec::format_pps(row.tx.pps())),
                            "31;1"));
    std::string progress = fmt::format("trial {}{}, {} B{}, {:.1f} s", trial_ + 1,
                                       of_ ? fmt::format(" of {}", of_) : std::string(),
                                       frame_size_,
                                       requested_pps_ > 0 ? ", " + spec::format_pps(requested_pps_) : std::string(),
                                       row.t1);
    if (count_ && tx_total)
        progress += fmt::format(", {:.1f} % of {} sent", 100.0 * tx_total / count_, count_);
    else if (duration_s_ > 0 && duration_s_ < 3600)
        progress += fmt::format(" of {:.1f} s, {:.1f} s left", duration_s_, std::max(0.0, duration_s_ - row.t1));
    out.push_back(progress);
    if (!why_.empty()) out.push_back(paint("procedure: " + why_, "36"));  // the search's interval and phase
    std::string s;
    if (lines_) s += fmt::format("\x1b[{}F", lines_);  // back to the table's first line
    for (const auto& l : out) s += "\x1b[2K" + l + "\n";
    for (unsigned i = static_cast<unsigned>(out.size()); i < lines_; ++i) s += "\x1b[2K\n";  // a shorter table
    lines_ = std::max<unsigned>(lines_, static_cast<unsigned>(out.size()));
    std::fputs(s.c_str(), out_);
    std::fflush(out_);
}

void LiveTableSink::trial_finished(const result::TrialResult&) {
    lines_ = 0;
    streams_.clear();
}

}  // namespace lr::report
