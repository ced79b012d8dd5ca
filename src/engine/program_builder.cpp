#include "engine/program_builder.h"

#include <algorithm>
#include <fmt/format.h>

#include "flow/flows.h"
#include "packet/sig_frame.h"
#include "spec/stream_rates.h"
#include "stream/pcap_source.h"
#include "util/error.h"

namespace lr::engine {
namespace {

using worker::FrameTemplate;
using worker::StreamShare;

bool carries(const spec::StreamSpec& st, const std::string& port) {
    return st.ports.empty() || std::find(st.ports.begin(), st.ports.end(), port) != st.ports.end();
}

// The last non-zero byte of a frame, plus one: what must be written into a buffer for it.
size_t extent(const std::vector<uint8_t>& f) {
    size_t n = f.size();
    while (n && f[n - 1] == 0) --n;
    return n;
}

uint64_t part_of(uint64_t total, uint32_t i, uint32_t n) { return total / n + (i < total % n ? 1 : 0); }

// Up to this many sizes, a stream has a template per size and flow (no lengthening per frame),
// as long as those are no more than kMaxSizeTemplates.
constexpr size_t kSizesWithTemplates = 16, kMaxSizeTemplates = 4096;

// A built stream's templates on one queue: a row per signature layout its sizes take (the
// layout follows the frame's length), a template per flow in each row.
void synthesized(const spec::RunSpec& spec, const spec::StreamSpec& st, uint32_t first_id,
                 const std::vector<uint32_t>& flows, worker::TxProgram& p, StreamShare& sh) {
    const bool sign = spec.stream_sig_level(st) != packet::SigLevel::none;
    const auto specs = spec.stream_flow_frames(st);
    const auto sizes = st.size.sizes();
    for (auto s : sizes) sh.sizes.push_back(static_cast<uint16_t>(s));
    // Rows: a few sizes (the IMIX family, short weight lists) get a template each, written as
    // they are; many sizes (increments, random ranges) a template per signature layout (the
    // short and the full one), built at the row's smallest size and lengthened frame by frame.
    std::vector<unsigned> row_size;  // the size each row's templates are built at
    const bool each = sizes.size() <= kSizesWithTemplates && sizes.size() * flows.size() <= kMaxSizeTemplates;
    packet::SigLevel last{};
    for (size_t i = 0; i < sizes.size(); ++i) {
        auto f = st.frame;
        f.frame_size = sizes[i];
        const auto lvl = sign ? packet::sig_layout(f).level : packet::SigLevel::none;
        if (i == 0 || each || lvl != last) row_size.push_back(sizes[i]);
        last = lvl;
        sh.size_row.push_back(static_cast<uint16_t>(row_size.size() - 1));
    }
    sh.flows = static_cast<uint32_t>(flows.size());
    for (unsigned rs : row_size)
        for (uint32_t fi : flows) {
            auto f = specs[fi];
            f.frame_size = rs;
            FrameTemplate t;
            t.bytes = packet::build_frame(f);
            t.len = static_cast<uint16_t>(t.bytes.size());
            t.sig_id = static_cast<uint16_t>(first_id + fi);
            t.layout = packet::sig_layout(f);
            if (sign) packet::sig_init(t.bytes, t.layout, spec.nonce, t.sig_id);
            else t.layout.level = packet::SigLevel::none;
            sh.templates.push_back(static_cast<uint32_t>(p.templates.size()));
            p.templates.push_back(std::move(t));
        }
}

// A replayed capture's records, in order, each a template of its own (signed in place when
// the record has room for the signature; sent as recorded otherwise).
void replayed(const spec::RunSpec& spec, const spec::StreamSpec& st, uint16_t sig_id, worker::TxProgram& p,
              StreamShare& sh) {
    const bool sign = spec.stream_sig_level(st) != packet::SigLevel::none;
    sh.replay = true;
    sh.flows = 1;
    for (const auto& rec : st.replay->frames->records) {
        FrameTemplate t;
        t.bytes = rec.bytes;
        t.len = static_cast<uint16_t>(rec.bytes.size());
        t.sig_id = sig_id;
        if (sign) t.layout = packet::sign_frame(t.bytes.data(), t.bytes.size(), spec.nonce, sig_id);
        sh.templates.push_back(static_cast<uint32_t>(p.templates.size()));
        p.templates.push_back(std::move(t));
    }
    sh.sizes.push_back(0);  // one size index: the records' own lengths
    sh.size_row.push_back(0);
}

worker::PacingPlan::Kind pacing_kind(spec::Pattern::Kind k) {
    switch (k) {
        case spec::Pattern::Kind::burst: return worker::PacingPlan::Kind::burst;
        case spec::Pattern::Kind::poisson: return worker::PacingPlan::Kind::poisson;
        case spec::Pattern::Kind::cbr: break;
    }
    return worker::PacingPlan::Kind::cbr;
}

}  // namespace

TxPrograms build_programs(const spec::RunSpec& spec, const std::vector<SendingQueue>& queues) {
    const auto mix = spec.mix();
    const auto rates = spec::stream_rates(spec, spec.line_rate_bps);
    TxPrograms out;
    out.progress = std::make_shared<std::vector<worker::StreamProgress>>(mix.size());
    uint32_t next_id = 0;
    for (const auto& st : mix) {
        out.first_flow.push_back(next_id);
        next_id += spec.stream_flows(st);
    }
    // Which queues carry each stream: all of its ports' queues (a replay: each port's first).
    std::vector<std::vector<size_t>> carriers(mix.size());
    for (size_t s = 0; s < mix.size(); ++s)
        for (size_t q = 0; q < queues.size(); ++q)
            if (carries(mix[s], queues[q].port) && (!mix[s].replay || queues[q].queue == 0)) carriers[s].push_back(q);
    for (size_t s = 0; s < mix.size(); ++s) (*out.progress)[s].shares = static_cast<uint32_t>(carriers[s].size());
    out.queues.resize(queues.size());
    out.queue_pps.assign(queues.size(), 0);
    for (size_t q = 0; q < queues.size(); ++q) {
        auto p = std::make_shared<worker::TxProgram>();
        p->progress = out.progress;
        out.queues[q] = p;
    }
    for (size_t s = 0; s < mix.size(); ++s) {
        const auto& st = mix[s];
        const auto& r = rates[s];
        const auto nq = static_cast<uint32_t>(carriers[s].size());
        int32_t after = -1;
        if (!st.after.empty())
            after = static_cast<int32_t>(std::find_if(mix.begin(), mix.end(), [&](const spec::StreamSpec& o) {
                                             return o.name == st.after;
                                         }) - mix.begin());
        for (uint32_t qi = 0; qi < nq; ++qi) {
            const size_t q = carriers[s][qi];
            auto& p = *out.queues[q];
            StreamShare sh;
            sh.stream = static_cast<uint32_t>(s);
            if (st.replay) {
                replayed(spec, st, static_cast<uint16_t>(out.first_flow[s] + qi), p, sh);
            } else {
                synthesized(spec, st, out.first_flow[s], flow::flows_for_queue(spec.stream_flows(st), qi, nq), p, sh);
                sh.period = st.size.period(st.seed + qi);
                sh.random_sizes = st.size.kind == spec::SizeSpec::Kind::random;
            }
            sh.seed = st.seed + qi;
            // A replay is sent whole on each of its ports (its rate, count and timing per port).
            sh.pacing.pps = st.replay ? r.pps : r.pps / nq;
            sh.pacing.kind = pacing_kind(st.pattern.kind);
            sh.pacing.burst = st.pattern.burst;
            sh.pacing.seed = st.seed + qi;
            sh.pacing.max_burst = spec.burst_size();
            sh.pacing.catch_up_ns = static_cast<uint64_t>(spec.catch_up_s * 1e9);
            if (st.replay && !st.rate && !st.share && r.pps > 0) {  // the recorded timing, sped up
                auto gaps = std::make_shared<std::vector<double>>();
                const auto& recs = st.replay->frames->records;
                for (size_t k = 0; k + 1 < recs.size(); ++k)
                    gaps->push_back(static_cast<double>(recs[k + 1].ts_ns - recs[k].ts_ns) / st.replay->speed);
                gaps->push_back(1e9 / r.pps);  // from the last record to the first again: the mean gap
                sh.pacing.kind = worker::PacingPlan::Kind::recorded;
                sh.pacing.gaps = gaps.get();
                p.gaps.push_back(std::move(gaps));
            }
            sh.weight = r.weight;
            if (r.count) sh.count = st.replay ? *r.count : part_of(*r.count, qi, nq);
            if (st.bursts || st.endless_bursts) {
                sh.burst_frames = static_cast<uint32_t>(part_of(st.burst_frames, qi, nq));
                sh.count = uint64_t{st.bursts} * sh.burst_frames;  // endless: 0, bursts until the trial ends
                sh.burst_gap_ns = static_cast<uint64_t>(st.burst_gap_s * 1e9);
            }
            sh.delay_ns = static_cast<uint64_t>(st.delay_s * 1e9);
            sh.after = after;
            if (st.replay) sh.replay_loops = st.replay->loops;
            out.queue_pps[q] += sh.pacing.pps;
            if ((sh.count == 0 && r.count) || (st.endless_bursts && sh.burst_frames == 0)) {
                // more queues than frames (or than a burst's frames): this one sends none
                --(*out.progress)[s].shares;
                continue;
            }
            p.shares.push_back(std::move(sh));
        }
    }
    // Every frame of a queue writes the same bytes: enough for the longest template's
    // non-zero bytes (a whole replayed record), never more than the session's frames hold.
    for (auto& pp : out.queues) {
        auto& p = *pp;
        size_t copy = 0;
        bool whole = false;
        for (const auto& sh : p.shares) whole |= sh.replay;
        for (const auto& t : p.templates) copy = std::max(copy, whole ? t.bytes.size() : extent(t.bytes));
        const size_t cap = spec.session_max_frame() - packet::kFcsLen;
        p.copy_len = static_cast<uint32_t>(std::min(cap, whole ? copy : (copy + 63) / 64 * 64));
        for (auto& t : p.templates) t.bytes.resize(std::max<size_t>(t.bytes.size(), p.copy_len), 0);
    }
    out.max_len = spec.session_max_frame() - packet::kFcsLen;
    return out;
}

}  // namespace lr::engine
