#include "engine/planner.h"

#include "engine/program_builder.h"

#include <algorithm>
#include <fmt/format.h>

#include "flow/flows.h"
#include "packet/frame.h"
#include "packet/signature.h"
#include "packet/tcp_segment.h"
#include "util/cpus.h"
#include "util/error.h"

namespace lr::engine {

using worker::Role;

backend::SessionLayout plan_layout(const spec::RunSpec& spec) {
    backend::SessionLayout l;
    auto port_index = [&](const std::string& name) {
        const auto it = std::find(l.ports.begin(), l.ports.end(), name);
        if (it != l.ports.end()) return static_cast<unsigned>(it - l.ports.begin());
        l.ports.push_back(name);
        return static_cast<unsigned>(l.ports.size() - 1);
    };
    for (const auto& pq : spec.tx) port_index(pq.port);
    for (const auto& pq : spec.rx) port_index(pq.port);
    auto add = [&](Role r, const spec::PortQueues& pq) {
        for (uint16_t q = 0; q < pq.queues; ++q) l.workers.push_back({r, port_index(pq.port), pq.port, q, -1, 0, {}});
    };
    if (spec.impair) {
        // One forwarding worker per direction and queue: it receives on its port, sends on the other.
        const auto& im = *spec.impair;
        const unsigned a = port_index(im.a), b = port_index(im.b);
        for (uint16_t q = 0; q < im.queues; ++q) {
            if (im.direction != spec::ImpairDirection::b_to_a)
                l.workers.push_back({Role::forward, a, im.a, q, -1, b, im.b});
            if (im.direction != spec::ImpairDirection::a_to_b)
                l.workers.push_back({Role::forward, b, im.b, q, -1, a, im.a});
        }
    } else if (spec.connect) {
        for (const auto& pq : spec.tx) add(Role::connect, pq);  // each queue sends SYNs and reads the answers
    } else if (spec.paired()) {
        // One worker per queue sends and receives (the spec checked that --rx matches --tx).
        for (const auto& pq : spec.tx) add(spec.reflect ? Role::reflect : Role::request_response, pq);
    } else {
        for (const auto& pq : spec.tx) add(Role::tx, pq);
        for (const auto& pq : spec.rx) add(Role::rx, pq);
    }
    const auto allowed = util::allowed_cpus();
    for (int c : spec.cpus)
        if (std::find(allowed.begin(), allowed.end(), c) == allowed.end())
            throw UsageError(fmt::format("--cpus: CPU {} is not available to this process (allowed: {})", c,
                                         fmt::join(allowed, ",")));
    for (size_t i = 0; i < l.workers.size(); ++i)
        l.workers[i].cpu = spec.cpus.empty() ? allowed[(i + 1) % allowed.size()] : spec.cpus[i % spec.cpus.size()];
    return l;
}

CounterSlots plan_counters(const backend::SessionLayout& layout) {
    CounterSlots s;
    s.tx_slot.assign(layout.workers.size(), -1);
    s.rx_slot.assign(layout.workers.size(), -1);
    for (size_t i = 0; i < layout.workers.size(); ++i) {
        const auto& w = layout.workers[i];
        if (!worker::sends(w.role)) continue;
        s.tx_slot[i] = static_cast<int>(s.ids.size());
        if (w.role == Role::forward) s.ids.push_back({stats::Dir::tx, w.peer_port_index, w.peer_port, w.queue});
        else s.ids.push_back({stats::Dir::tx, w.port_index, w.port, w.queue});
    }
    for (size_t i = 0; i < layout.workers.size(); ++i) {
        const auto& w = layout.workers[i];
        if (!worker::receives(w.role)) continue;
        s.rx_slot[i] = static_cast<int>(s.ids.size());
        s.ids.push_back({stats::Dir::rx, w.port_index, w.port, w.queue});
    }
    return s;
}

TrialOutputs::TrialOutputs(size_t slots)
    : counters(new stats::QueueCounters[slots]), tx_sent(slots), rx_results(slots), departures(slots),
      tx_captures(slots), shares_sent(slots), programs(slots), tx_pps(slots, 0),
      impair_counts(new stats::ImpairCounters[slots]), connect_counts(new stats::ConnectCounters[slots]),
      shares_live(slots) {}

namespace {

// A forwarding worker (linerate impair): its impairer and counts, from the spec's plan for its
// direction (a seed of its own per direction and queue), its buffers as large as the largest
// frame it may carry.
void plan_forwarder(const spec::RunSpec& spec, const backend::WorkerSlot& slot, const CounterSlots& slots, size_t i,
                    TrialOutputs& out, worker::WorkerConfig& w) {
    auto plan = spec.impair->plan;
    const bool reverse = slot.port != spec.impair->a;
    plan.seed = plan.seed + (reverse ? 1000003u : 0u) + slot.queue;
    plan.slot_bytes = spec.session_max_frame() - packet::kFcsLen;
    out.impairers.resize(std::max(out.impairers.size(), i + 1));
    out.impairers[i] = std::make_unique<worker::Impairer>(plan);
    w.fwd.impairer = out.impairers[i].get();
    w.fwd.counts = &out.impair_counts[static_cast<size_t>(slots.tx_slot[i])];
    w.fwd.peer_port_index = slot.peer_port_index;
    w.fwd.peer_port = slot.peer_port;
    w.tx.burst = w.rx.burst = spec.burst_size();
    w.tx.frame_len = plan.slot_bytes;
    w.tx.wire_bytes = spec.session_max_frame();
    w.tx.templates = {std::vector<uint8_t>(plan.slot_bytes, 0)};  // every frame is written as it leaves
    w.tx_counters = &out.counters[static_cast<size_t>(slots.tx_slot[i])];
    w.rx_counters = &out.counters[static_cast<size_t>(slots.rx_slot[i])];
}

// A connecting worker (linerate connect): its window of handshakes, its latency histogram and
// counts, the SYN template (built once per trial, shared), its share of the rate and count.
void plan_connector(const spec::RunSpec& spec, const backend::WorkerSlot& slot, const CounterSlots& slots, size_t i,
                    TrialOutputs& out, worker::WorkerConfig& w) {
    const auto& c = *spec.connect;
    if (!out.syn) out.syn = std::make_unique<packet::SynTemplate>(packet::build_syn(spec.frame, c.mss));
    out.windows.resize(std::max(out.windows.size(), i + 1));
    out.handshakes.resize(std::max(out.handshakes.size(), i + 1));
    out.windows[i] = std::make_unique<worker::HandshakeWindow>(c.outstanding);
    out.handshakes[i] = std::make_unique<stats::LatencyHistogram>();
    auto& k = w.conn;
    k.window = out.windows[i].get();
    k.handshake = out.handshakes[i].get();
    k.counts = &out.connect_counts[static_cast<size_t>(slots.tx_slot[i])];
    k.syn = out.syn.get();
    k.close = c.close;
    k.listen_port = spec.frame.dst_port;
    k.src_port_lo = c.src_port_lo;
    k.src_port_hi = c.src_port_hi;
    k.queues = c.queues;
    k.ttl = spec.frame.ttl;
    k.syn_timeout_ns = static_cast<uint64_t>(spec.response_timeout_s * 1e9);
    k.close_timeout_ns = static_cast<uint64_t>(c.close_timeout_s * 1e9);
    auto& t = w.tx;
    t.burst = w.rx.burst = spec.burst_size();
    t.frame_len = std::max<uint32_t>(static_cast<uint32_t>(out.syn->frame.size()), packet::kMaxReplyLen);
    t.wire_bytes = t.frame_len + packet::kFcsLen;
    t.templates = {std::vector<uint8_t>(t.frame_len, 0)};  // every frame is written as it leaves
    if (spec.count) t.count = *spec.count / c.queues + (slot.queue < *spec.count % c.queues ? 1 : 0);
    t.pacing.pps = spec.rate_pps / c.queues;
    t.pacing.max_burst = t.burst;
    t.pacing.catch_up_ns = static_cast<uint64_t>(spec.catch_up_s * 1e9);
    out.tx_pps[static_cast<size_t>(slots.tx_slot[i])] = t.pacing.pps;
    w.tx_counters = &out.counters[static_cast<size_t>(slots.tx_slot[i])];
    w.rx_counters = &out.counters[static_cast<size_t>(slots.rx_slot[i])];
}

}  // namespace

std::vector<worker::WorkerConfig> plan_workers(const spec::RunSpec& spec, const backend::SessionLayout& layout,
                                               const CounterSlots& slots, TrialOutputs& out,
                                               const worker::RunControl& ctl) {
    const uint32_t nflows = spec.effective_flows();
    const auto flows = flow::make_flows(spec.frame, nflows, nflows > 1 ? spec.vary : 0);
    const auto layout_sig = packet::sig_layout(spec.frame);
    const bool sign = spec.signed_frames();
    const uint32_t ntxq = spec.tx_queue_total();
    const bool oversubscribed = util::allowed_cpus().size() < layout.workers.size() + 1;
    const bool live = spec.live_latency();
    // Streams: every sending queue gets a program unless one fixed-size stream (the frames
    // written into the buffers once) is all the run sends.
    TxPrograms progs;
    if (!spec.single_fixed_stream()) {
        std::vector<SendingQueue> q;
        for (size_t i = 0; i < layout.workers.size(); ++i)
            if (slots.tx_slot[i] >= 0 && layout.workers[i].role == Role::tx)
                q.push_back({layout.workers[i].port, layout.workers[i].queue});
        progs = build_programs(spec, q);
        out.first_flow = progs.first_flow;
    }
    size_t prog_at = 0;
    // Receivers of a mix keep latency per stream (through each signed stream id's stream) and,
    // when sizes vary, the frames of each size.
    const auto mix = spec.mix();
    std::vector<uint16_t> stream_of;
    if (mix.size() > 1 && spec.signed_frames())
        for (uint16_t s = 0; s < mix.size(); ++s) stream_of.insert(stream_of.end(), spec.stream_flows(mix[s]), s);
    // Streams another host stamps: each signed stream id's shift to this host's clock.
    std::vector<uint64_t> tx_clock_shift;
    if (spec.signed_frames() &&
        std::any_of(mix.begin(), mix.end(), [](const spec::StreamSpec& st) { return st.tx_clock_shift_ns != 0; }))
        for (const auto& st : mix)
            tx_clock_shift.insert(tx_clock_shift.end(), spec.stream_flows(st),
                                  static_cast<uint64_t>(st.tx_clock_shift_ns) & LR_SIG48_MASK);
    bool sizes_vary = false;
    for (const auto& st : mix) sizes_vary |= st.replay || st.size.varies() || st.size.lo != mix[0].size.lo;
    std::vector<worker::WorkerConfig> ws;
    uint32_t txi = 0;  // index among the sending queues: flows and the count are split over them
    for (size_t i = 0; i < layout.workers.size(); ++i) {
        const auto& slot = layout.workers[i];
        worker::WorkerConfig w;
        w.role = slot.role;
        w.port_index = slot.port_index;
        w.port = slot.port;
        w.queue = slot.queue;
        w.cpu = slot.cpu;
        w.ctl = &ctl;
        w.yield_when_idle = oversubscribed;
        w.outstanding = spec.outstanding;
        w.response_timeout_s = spec.response_timeout_s;
        if (slot.role == Role::forward || slot.role == Role::connect) {
            if (slot.role == Role::forward) plan_forwarder(spec, slot, slots, i, out, w);
            else plan_connector(spec, slot, slots, i, out, w);
            ws.push_back(std::move(w));
            continue;
        }
        if (slots.tx_slot[i] >= 0) {
            auto& t = w.tx;
            t.burst = spec.burst_size();
            t.frame_len = spec.frame.frame_size - packet::kFcsLen;
            t.wire_bytes = spec.frame.frame_size;
            t.sign = sign;
            t.layout = layout_sig;
            if (slot.role == Role::tx && !progs.queues.empty()) {
                const size_t k = static_cast<size_t>(slots.tx_slot[i]);
                t.program = progs.queues[prog_at];
                out.programs[k] = t.program;
                out.tx_pps[k] = progs.queue_pps[prog_at++];
                t.shares_sent = &out.shares_sent[k];
                out.shares_live[k] = std::make_unique<stats::CountsExchange<stats::ShareLive>>();
                t.shares_live = out.shares_live[k].get();
                // The buffers start zeroed; every frame then writes its template's bytes.
                t.templates = {std::vector<uint8_t>(progs.max_len, 0)};
                t.frame_len = progs.max_len;
                t.wire_bytes = progs.max_len + packet::kFcsLen;
                for (const auto& sh : t.program->shares)
                    for (uint32_t f = 0; f < sh.flows; ++f)
                        t.streams.push_back(t.program->templates[sh.templates[f]].sig_id);
                if (std::any_of(t.program->shares.begin(), t.program->shares.end(),
                                [](const worker::StreamShare& sh) { return sh.pacing.pps > 0; }))
                    w.nice = spec.sender_nice;
            } else if (slot.role != Role::reflect) {  // a reflector sends only what it received
                for (uint32_t f : flow::flows_for_queue(nflows, txi, ntxq)) {
                    t.streams.push_back(static_cast<uint16_t>(f));
                    t.templates.push_back(packet::build_frame(flows[f]));
                    if (sign) packet::sig_init(t.templates.back(), layout_sig, spec.nonce, static_cast<uint16_t>(f));
                }
                if (spec.count) t.count = *spec.count / ntxq + (txi < *spec.count % ntxq ? 1 : 0);
                t.pacing.pps = spec.rate_pps / ntxq;
                t.pacing.kind = spec.pattern.kind == spec::Pattern::Kind::burst     ? worker::PacingPlan::Kind::burst
                                : spec.pattern.kind == spec::Pattern::Kind::poisson ? worker::PacingPlan::Kind::poisson
                                                                                    : worker::PacingPlan::Kind::cbr;
                t.pacing.burst = spec.pattern.burst;
                t.pacing.seed = spec.seed + txi;  // each queue its own sequence, reproducible
                t.pacing.max_burst = t.burst;
                t.pacing.catch_up_ns = static_cast<uint64_t>(spec.catch_up_s * 1e9);
                if (t.pacing.pps > 0) w.nice = spec.sender_nice;
                out.tx_pps[static_cast<size_t>(slots.tx_slot[i])] = t.pacing.pps;
            }
            t.sent_per_stream = &out.tx_sent[static_cast<size_t>(slots.tx_slot[i])];
            t.departures = &out.departures[static_cast<size_t>(slots.tx_slot[i])];
            if (spec.capture_remaining && spec.captures_sent() && slot.role == Role::tx) {
                auto& cap = out.tx_captures[static_cast<size_t>(slots.tx_slot[i])];
                cap.configure(spec.capture_remaining, spec.session_max_frame(), stats::CaptureFilter::sent);
                t.capture = &cap;
            }
            w.tx_counters = &out.counters[static_cast<size_t>(slots.tx_slot[i])];
            ++txi;
        }
        if (slots.rx_slot[i] >= 0) {
            auto& r = w.rx;
            auto& res = out.rx_results[static_cast<size_t>(slots.rx_slot[i])];
            if (live) res.live = std::make_unique<stats::LatencyExchange>();
            r.burst = spec.burst_size();
            r.sign = sign && !spec.reflect;
            r.nonce = spec.nonce;
            r.stack_responder = spec.stack_responder;
            r.streams = spec.rx_streams();
            r.flow_totals = ctl.gates != nullptr;  // a controlled trial: the OTG server reports them
            r.result = &res;
            if (spec.capture_remaining && !spec.captures_sent())
                res.capture.configure(spec.capture_remaining, spec.session_max_frame(), spec.capture_filter);
            if (!stream_of.empty() && r.sign && stream_of.size() == r.streams) {
                res.stream_of = stream_of;
                res.stream_latency.assign(mix.size(), {});
                res.stream_buckets.assign(stats::BucketsByStream::table_size(mix.size()), 0);
            }
            // Streams (a mix, or one composed stream): each flow's counts for the live views.
            if (r.sign && !spec.single_fixed_stream())
                res.flows_live = std::make_unique<stats::CountsExchange<stats::FlowLive>>();
            if (sizes_vary) res.sizes.assign(stats::kSizeSlots, 0);
            if (r.flow_totals && r.sign && tx_clock_shift.size() == r.streams) res.tx_clock_shift = tx_clock_shift;
            w.rx_counters = &out.counters[static_cast<size_t>(slots.rx_slot[i])];
        }
        ws.push_back(std::move(w));
    }
    return ws;
}

}  // namespace lr::engine
