// The TX loop of a queue that carries streams (a TxProgram): per burst, collect confirmations,
// read the clock, ask the scheduler which frames are due (as many as the device has room for),
// take that many buffers, write each frame (template, size, signature), offer them, publish.
// The same counting rules as the single-template loop (worker/tx_engine.h): only what the
// device confirmed is sent, per stream, flow and size as well as in total.
#pragma once
#include <algorithm>
#include <sched.h>
#include <sys/prctl.h>

#include "stats/tsc_clock.h"
#include "worker/engine_common.h"
#include "worker/frame_composer.h"
#include "worker/queue_ops.h"
#include "worker/stream_scheduler.h"

namespace lr::worker {

// Adds up `per_record(template)` over a replayed share's first `frames` frames: its records in
// turn, whole passes through the file and then the first records of the next.
template <class F>
uint64_t over_replay(const TxProgram& p, const StreamShare& s, uint64_t frames, F per_record) {
    uint64_t file = 0, part = 0;
    const uint64_t rem = frames % s.templates.size();
    for (size_t k = 0; k < s.templates.size(); ++k) {
        const uint64_t v = per_record(p.templates[s.templates[k]]);
        file += v;
        if (k < rem) part += v;
    }
    return frames / s.templates.size() * file + part;
}

// The bytes (FCS included) of a replayed share's first `frames` frames.
inline uint64_t replay_bytes(const TxProgram& p, const StreamShare& s, uint64_t frames) {
    return over_replay(p, s, frames, [](const FrameTemplate& t) { return t.len + uint64_t{packet::kFcsLen}; });
}

// The bytes (FCS included) of the frames a share planned so far (the live views).
inline uint64_t planned_bytes(const TxProgram& p, const StreamScheduler& sched, uint32_t s) {
    const auto& d = p.shares[s];
    if (d.replay) return replay_bytes(p, d, sched.planned(s));
    uint64_t b = 0;
    for (uint32_t z = 0; z < std::max<size_t>(1, d.sizes.size()); ++z) b += sched.planned_size(s, z) * d.sizes[z];
    return b;
}

// A sender under gates sleeps no longer than this between looks at them.
inline constexpr uint64_t kGateLookNs = 1'000'000;

// The signed frames among them (records without room for the signature go unsigned): what
// its signature id's receiver can expect.
inline uint64_t replay_signed(const TxProgram& p, const StreamShare& s, uint64_t frames) {
    return over_replay(p, s, frames,
                       [](const FrameTemplate& t) { return uint64_t{t.layout.level != packet::SigLevel::none}; });
}

template <TxQueueOps Ops>
bool tx_streams_loop(Ops& ops, const WorkerConfig& w) {
    using stats::publish;
    const TxSetup& t = w.tx;
    const TxProgram& prog = *t.program;
    auto& c = *w.tx_counters;
    LoopFrame loop(w.ctl->stop_tx, w.yield_when_idle);
    FlowGates* const gates = w.ctl->gates;
    StreamScheduler sched(prog, t.burst, gates);
    FrameComposer comp(prog, t.sign);
    stats::BurstClock clk;
    PlannedFrame scratch[kMaxBurstFrames];  // on the stack: no allocation
    bool paced = false;
    for (const auto& s : prog.shares) paced |= s.pacing.pps > 0;
    if (paced) prctl(PR_SET_TIMERSLACK, 1UL);  // its sleeps end when asked
    sched.start(clk.now());
    uint64_t backpressure = 0, no_buffer = 0, pacing_seen = ~0ull;
    uint32_t live_seen = 0;
    if (t.shares_live) t.shares_live->buf.assign(prog.shares.size(), {});
    while (loop.running()) {
        loop.poll();
        ops.reclaim();
        const uint64_t now = clk.now();
        uint32_t got = 0;
        const uint32_t room = sched.done() ? 0 : ops.avail(ops.room(t.burst));
        // Paced streams get departure slots only for frames the device can take now: when it
        // has no room, their schedules fall behind and catch up (or skip, counted) like a stall.
        uint32_t n = 0;
        const PlannedFrame* const plan = room ? sched.plan(now, room, scratch, n) : scratch;
        if (n) {
            const Acquired a = ops.acquire(n);
            got = a.got;
            no_buffer += a.no_buffer;
            backpressure += a.ring_full;
            if (got < n) sched.unplan(plan + got, n - got);  // sent later: the device had no buffers for them
            if (got) {
                comp.begin_burst(now);
                const FrameSpan f = ops.fresh();
                comp.write_burst(f, plan, got);
                for (uint32_t i = 0; i < got; ++i) ops.set_frame(f.from + i, plan[i].len, plan[i].tmpl);
                if (t.capture && t.capture->active()) [[unlikely]]  // --capture-filter sent: as they leave
                    for (uint32_t i = 0; i < got && t.capture->active(); ++i)
                        t.capture->take(f.fresh_frame(i), plan[i].len, now, 1);
            }
        }
        const Transmitted x = ops.transmit();
        backpressure += x.partial;
        if (x.taken && t.departures) t.departures->burst(now, x.taken);
        if (t.shares_live && t.shares_live->asked(live_seen)) [[unlikely]] {  // the live views ask
            for (uint32_t s = 0; s < prog.shares.size(); ++s)
                t.shares_live->buf[s] = {sched.planned(s), planned_bytes(prog, sched, s)};
            t.shares_live->answer(live_seen);
        }
        sched.for_each_newly_done([&](uint32_t s) {
            (*prog.progress)[prog.shares[s].stream].done_shares.fetch_add(1, std::memory_order_release);
            if (gates) gates->share_done(prog.shares[s].stream, sched.start_number(s));
        });
        publish(c.packets, ops.confirmed());
        publish(c.bytes, ops.confirmed_bytes());
        publish(c.backpressure, backpressure);
        publish(c.no_buffer, no_buffer);
        publish(c.tx_errors, ops.errors());
        publish(c.polls, loop.polls());
        if (paced && sched.record_version() != pacing_seen) {
            pacing_seen = sched.record_version();
            publish_pacing_record(c, sched.record());
        }
        if (ops.failed()) break;
        if (sched.done() && ops.held() == 0 && ops.confirmed() == ops.issued()) break;  // all sent and confirmed
        if (got == 0 && x.taken == 0) {
            const uint64_t due = sched.next_due(now);
            // With gates a command may come at any time: look again within a millisecond.
            const uint64_t wait = gates ? std::min<uint64_t>(due - now, kGateLookNs) : due - now;
            if (due > now && ops.held() == 0 && !sched.done())
                detail::wait_for_departure(static_cast<int64_t>(wait), w.yield_when_idle);
            else loop.idle();
        }
    }
    ops.finish();
    // Frames taken but never confirmed are not sent: out of their stream's counts.
    ops.for_each_unconfirmed([&](const uint8_t*, uint16_t len, uint32_t tmpl) {
        for (uint32_t s = 0; s < prog.shares.size(); ++s) {
            const auto& ts = prog.shares[s].templates;
            if (std::find(ts.begin(), ts.end(), tmpl) != ts.end()) {
                sched.forget(s, tmpl, len);
                break;
            }
        }
    });
    const uint64_t sent = ops.confirmed(), unconfirmed = ops.issued() - sent;
    ops.drop_held();
    if (t.shares_sent) {
        auto& out = *t.shares_sent;
        out.assign(prog.shares.size(), {});
        for (uint32_t s = 0; s < prog.shares.size(); ++s) {
            const auto& d = prog.shares[s];
            auto& o = out[s];
            o.frames = sched.planned(s);
            for (uint32_t f = 0; f < (d.replay ? 1 : d.flows); ++f) o.per_flow.push_back(sched.planned_flow(s, f));
            for (uint32_t z = 0; z < std::max<size_t>(1, d.sizes.size()); ++z) {
                o.per_size.push_back(sched.planned_size(s, z));
                if (!d.replay) o.bytes += o.per_size.back() * d.sizes[z];
            }
        }
        for (uint32_t s = 0; s < prog.shares.size(); ++s)  // replays: the bytes of the records they sent
            if (prog.shares[s].replay) {
                out[s].bytes = replay_bytes(prog, prog.shares[s], out[s].frames);
                out[s].signed_frames = replay_signed(prog, prog.shares[s], out[s].frames);
            } else {
                out[s].signed_frames = out[s].frames;
            }
    }
    if (t.sent_per_stream) {  // per signed stream id, in the order of t.streams: share by share, flow by flow
        auto& v = *t.sent_per_stream;
        v.clear();
        for (uint32_t s = 0; s < prog.shares.size(); ++s)
            for (uint32_t f = 0; f < prog.shares[s].flows; ++f)
                v.push_back(prog.shares[s].replay ? replay_signed(prog, prog.shares[s], sched.planned_flow(s, f))
                                                  : sched.planned_flow(s, f));
    }
    publish(c.packets, sent);
    publish(c.bytes, ops.confirmed_bytes());
    publish(c.tx_errors, ops.errors());
    publish(c.unsent, unconfirmed);
    if (paced) publish_pacing_record(c, sched.record());
    return !ops.failed();
}

}  // namespace lr::worker
