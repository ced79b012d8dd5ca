#include "worker/stream_scheduler.h"

#include <cmath>
#include <cstring>
#include <numeric>

#include "worker/queue_ops.h"

namespace lr::worker {
namespace {

// The round robin's table: weights to whole numbers at this resolution (0.01 % of the fill).
constexpr double kFillResolution = 10000;
// A share that waits for another stream has no start time yet.
constexpr uint64_t kOnStream = UINT64_MAX;

// A share of one size (not drawn at random), not replayed, whose flows' templates are
// consecutive (as the program builds them): each frame's template is the first plus its flow.
bool one_template_row(const StreamShare& d) {
    if (d.replay || d.random_sizes || d.sizes.size() != 1 || d.size_row.size() != 1) return false;
    const size_t row = size_t{d.size_row[0]} * d.flows;
    if (row + d.flows > d.templates.size()) return false;
    for (uint32_t k = 0; k < d.flows; ++k)
        if (d.templates[row + k] != d.templates[row] + k) return false;
    return true;
}

}  // namespace

StreamScheduler::StreamScheduler(const TxProgram& p, uint32_t, const FlowGates* gates) : p_(p), gates_(gates) {
    st_.reserve(p.shares.size());
    size_t counters = 0;
    for (const auto& d : p.shares) {
        Share sh;
        sh.def = &d;
        sh.pacer = Pacer(d.pacing);
        sh.paced = d.pacing.pps > 0;
        sh.counted = d.count > 0;
        sh.left = d.count;
        sh.rng = d.seed * 0x9E3779B97F4A7C15ull + 1;
        sh.size_at = static_cast<uint32_t>(counters);
        sh.flows = d.flows;
        sh.burst_frames = d.burst_frames;
        if (one_template_row(d)) {
            sh.first_tmpl = d.templates[d.size_row[0] * d.flows];
            sh.len = static_cast<uint16_t>(d.sizes[0] - packet::kFcsLen);
        }
        if (d.random_sizes) counters += d.sizes.size();
        if (sh.counted) ++active_ends_;
        else continuous_ = true;
        st_.push_back(sh);
    }
    counts_.assign(counters, 0);
    paced_.reserve(st_.size());
    quota_.assign(st_.size(), 0);
    waiting_.reserve(st_.size());
    // With gates a share may end once per start: room for a few restarts without allocating.
    done_order_.reserve(st_.size() * (gates ? 4 : 1));
    fill_.reserve(static_cast<size_t>(kFillResolution) + st_.size() + 1);
    fill_scratch_.reserve(fill_.capacity());
    cycle_.reserve(fill_.capacity() + kCycleMin + kMaxBurstFrames);
    cycle_pos_.reserve(cycle_.capacity());
    cycle_cursor_.assign(st_.size(), 0);
}

void StreamScheduler::start(uint64_t now) {
    t0_ = now;
    if (gates_) {  // nothing starts before its gate opens
        for (auto& sh : st_) sh.state = State::held;
        apply_gates(now);
        return;
    }
    for (uint32_t s = 0; s < st_.size(); ++s) {
        Share& sh = st_[s];
        sh.state = State::waiting;
        sh.resume_at = sh.def->after >= 0 ? kOnStream : now + sh.def->delay_ns;
        waiting_.push_back(s);
    }
    activate(now);
}

void StreamScheduler::go(uint32_t s, uint64_t now) {
    Share& sh = st_[s];
    sh.state = State::active;
    if (sh.paced) {
        sh.pacer.start(now);
        paced_.push_back(s);
    }
}

void StreamScheduler::activate(uint64_t now) {
    next_event_ = UINT64_MAX;
    waits_on_streams_ = false;
    bool fill_changed = false;
    size_t keep = 0;
    for (size_t i = 0; i < waiting_.size(); ++i) {
        const uint32_t s = waiting_[i];
        Share& sh = st_[s];
        if (sh.state == State::waiting && sh.resume_at == kOnStream) {  // waits for another stream
            const auto& pr = (*p_.progress)[static_cast<size_t>(sh.def->after)];
            if (pr.done_shares.load(std::memory_order_acquire) < pr.shares) {
                waits_on_streams_ = true;
                waiting_[keep++] = s;
                continue;
            }
            sh.resume_at = now + sh.def->delay_ns;
        }
        if (now < sh.resume_at) {
            next_event_ = std::min(next_event_, sh.resume_at);
            waiting_[keep++] = s;
            continue;
        }
        go(s, now);
        fill_changed |= !sh.paced;
    }
    waiting_.resize(keep);
    if (fill_changed) rebuild_fill();
}

void StreamScheduler::rebuild_next_event() {
    next_event_ = UINT64_MAX;
    for (const uint32_t s : waiting_)
        if (st_[s].resume_at != kOnStream) next_event_ = std::min(next_event_, st_[s].resume_at);
}

void StreamScheduler::rebuild_fill() {
    settle_cycle();
    fill_scratch_.clear();
    uint64_t g = 0;
    uint32_t first = 0, members = 0;
    // Whole-number weights of the sending unpaced shares, over their common divisor.
    for (uint32_t s = 0; s < st_.size(); ++s) {
        const Share& sh = st_[s];
        if (sh.paced || sh.state != State::active) continue;
        const auto w = std::max<uint64_t>(1, static_cast<uint64_t>(std::llround(sh.def->weight * kFillResolution)));
        g = std::gcd(g, w);
        if (!members++) first = s;
    }
    fill_.clear();
    fill_at_ = 0;
    if (members == 1) {
        fill_.push_back(first);
        build_cycle();
        return;
    }
    for (uint32_t s = 0; s < st_.size(); ++s) {
        const Share& sh = st_[s];
        if (sh.paced || sh.state != State::active) continue;
        const auto w = std::max<uint64_t>(1, static_cast<uint64_t>(std::llround(sh.def->weight * kFillResolution))) / g;
        // Spread each share's w slots evenly over the period: slot k at (k + 1/2) / w.
        for (uint64_t k = 0; k < w; ++k) fill_scratch_.emplace_back((static_cast<double>(k) + 0.5) / static_cast<double>(w), s);
    }
    std::sort(fill_scratch_.begin(), fill_scratch_.end());
    for (const auto& e : fill_scratch_) fill_.push_back(e.second);
    build_cycle();
}

void StreamScheduler::build_cycle() {
    for (const uint32_t s : fill_) {
        const Share& sh = st_[s];
        if (sh.first_tmpl == kGeneral || sh.flows != 1 || sh.counted || sh.burst_frames) return;
    }
    const size_t reps = fill_.empty() ? 0 : (kCycleMin + fill_.size() - 1) / fill_.size();
    for (size_t r = 0; r < reps; ++r)
        for (const uint32_t s : fill_) cycle_.push_back({st_[s].first_tmpl, st_[s].len, 0, s});
    cycle_period_ = cycle_.size();
    if (cycle_period_ == 0) return;  // no round robin: no cycle
    // A burst's stretch is contiguous from any position: the period's first frames follow it again.
    for (size_t k = 0; k < kMaxBurstFrames; ++k) cycle_.push_back(cycle_[k % cycle_period_]);
    // Each share's positions, grouped by share, ascending (a counting sort).
    for (const uint32_t s : fill_) st_[s].cycle_slots += static_cast<uint32_t>(reps);
    uint32_t at = 0;
    for (uint32_t s = 0; s < st_.size(); ++s) {
        st_[s].cycle_first = at;
        at += st_[s].cycle_slots;
        cycle_cursor_[s] = 0;
    }
    cycle_pos_.resize(cycle_period_);
    for (uint32_t k = 0; k < cycle_period_; ++k) {
        const uint32_t s = cycle_[k].share;
        cycle_pos_[st_[s].cycle_first + cycle_cursor_[s]++] = k;
    }
}

uint64_t StreamScheduler::from_cycle(uint32_t share) const {
    const Share& sh = st_[share];
    if (sh.cycle_slots == 0) return 0;
    const auto first = cycle_pos_.begin() + sh.cycle_first;
    const auto at = static_cast<uint32_t>(cycle_given_ % cycle_period_);  // the current position
    const auto before = std::lower_bound(first, first + sh.cycle_slots, at) - first;
    return cycle_given_ / cycle_period_ * sh.cycle_slots + static_cast<uint64_t>(before);
}

void StreamScheduler::settle_cycle() {
    if (cycle_.empty()) return;
    for (const uint32_t s : fill_) {
        Share& sh = st_[s];
        sh.planned += from_cycle(s);
        sh.cycle_slots = 0;
    }
    cycle_.clear();
    cycle_pos_.clear();
    cycle_given_ = 0;
    cycle_period_ = 0;
}

const PlannedFrame* StreamScheduler::take_cycle(uint32_t n) {
    const PlannedFrame* f = cycle_.data() + cycle_given_ % cycle_period_;
    cycle_given_ += n;
    return f;
}

void StreamScheduler::leave_lists(uint32_t s) {
    if (const auto it = std::find(paced_.begin(), paced_.end(), s); it != paced_.end()) paced_.erase(it);
    if (const auto it = std::find(waiting_.begin(), waiting_.end(), s); it != waiting_.end()) {
        waiting_.erase(it);
        rebuild_next_event();
    }
    if (std::find(fill_.begin(), fill_.end(), s) != fill_.end()) {
        st_[s].state = State::held;  // out of the round robin's table before it is rebuilt
        rebuild_fill();
    }
}

void StreamScheduler::apply_gates(uint64_t now) {
    // With gates done() is never true: active_ends_ is not kept here.
    gates_seen_ = gates_->generation();
    for (uint32_t s = 0; s < st_.size(); ++s) {
        Share& sh = st_[s];
        const uint32_t stream = sh.def->stream;
        const uint32_t start = gates_->start_of(stream);
        const GateState want = gates_->state_of(stream);
        if (start != sh.start_no) {  // a new start: the stream from its beginning, after its delay
            leave_lists(s);
            sh.start_no = start;
            sh.left = sh.def->count;
            sh.in_burst = 0;
            sh.state = State::waiting;
            sh.resume_at = now + sh.def->delay_ns;
            waiting_.push_back(s);
            next_event_ = std::min(next_event_, sh.resume_at);
        }
        const State was = sh.state;
        switch (want) {
            case GateState::held: break;
            case GateState::open:
                if (was != State::paused) break;
                // Resumed where it was, with no catch-up for the time paused.
                if (sh.resume_state == State::active) {
                    go(s, now);
                    if (!sh.paced) rebuild_fill();
                } else {  // still waiting for its start or in a burst gap: the time that was left
                    sh.state = sh.resume_state;
                    sh.resume_at = now + sh.pause_left_ns;
                    waiting_.push_back(s);
                    next_event_ = std::min(next_event_, sh.resume_at);
                }
                break;
            case GateState::paused:
                if (was != State::active && was != State::waiting && was != State::gap) break;
                leave_lists(s);
                sh.resume_state = was;
                sh.pause_left_ns = was == State::active ? 0 : std::max(sh.resume_at, now) - now;
                sh.state = State::paused;
                break;
            case GateState::stopped:
                if (was == State::done || was == State::held) break;
                leave_lists(s);
                sh.state = State::done;
                break;
        }
    }
    activate(now);
}

uint32_t StreamScheduler::next(uint64_t now, uint32_t room, PlannedFrame* out) {
    uint32_t n = 0;
    const PlannedFrame* f = plan(now, room, out, n);
    if (f != out) std::memcpy(out, f, n * sizeof(PlannedFrame));
    return n;
}

const PlannedFrame* StreamScheduler::plan(uint64_t now, uint32_t room, PlannedFrame* out, uint32_t& planned) {
    if (gates_ && gates_->generation() != gates_seen_) [[unlikely]]
        apply_gates(now);
    if (now >= next_event_ || waits_on_streams_) activate(now);
    uint32_t n = 0;
    // The paced shares: what each has due, at most what is left of its count or burst.
    const size_t np = paced_.size();
    uint32_t due = 0;
    for (size_t k = 0; k < np; ++k) {
        Share& sh = st_[paced_[k]];
        uint64_t want = room - due;
        if (sh.counted) want = std::min(want, sh.left);
        if (sh.burst_frames) want = std::min<uint64_t>(want, sh.burst_frames - sh.in_burst);
        quota_[k] = want ? sh.pacer.due(now, static_cast<uint32_t>(want)) : 0;
        due += quota_[k];
    }
    if (due) {
        // A frame of each due share in turn, so that no stream leaves in a train.
        while (n < due)
            for (size_t k = 0; k < np; ++k)
                if (quota_[k]) {
                    --quota_[k];
                    emit(paced_[k], out[n++]);
                }
        size_t keep = 0;
        for (size_t k = 0; k < np; ++k)
            if (!after_emit(paced_[k], now)) paced_[keep++] = paced_[k];
        paced_.resize(keep);
    }
    if (!cycle_.empty()) {
        planned = room;
        if (n == 0 && room <= kMaxBurstFrames) return take_cycle(room);  // a stretch of the cycle: no copy
        for (uint32_t k = n; k < room;) {  // after paced frames (or beyond a burst): copied
            const uint32_t m = std::min(room - k, kMaxBurstFrames);
            std::memcpy(out + k, take_cycle(m), m * sizeof(PlannedFrame));
            k += m;
        }
        return out;
    }
    // The unpaced shares fill the rest of the room. With many, a share's line is out of cache
    // when its turn comes: the share kFetchAhead turns later is asked for first.
    while (n < room && !fill_.empty()) {
        if (fill_.size() > kFetchSharesAbove) {
            size_t ahead = fill_at_ + kFetchAhead;
            if (ahead >= fill_.size()) ahead -= fill_.size();
            __builtin_prefetch(&st_[fill_[ahead]], 1);
        }
        const uint32_t s = fill_[fill_at_];
        if (++fill_at_ == fill_.size()) fill_at_ = 0;
        emit(s, out[n++]);
        if (after_emit(s, now)) rebuild_fill();
    }
    planned = n;
    return out;
}

void StreamScheduler::revive(uint32_t s) {
    Share& sh = st_[s];
    if (sh.state == State::done) {
        for (size_t i = done_order_.size(); i-- > reported_done_;)
            if (done_order_[i] == s) {
                done_order_.erase(done_order_.begin() + static_cast<std::ptrdiff_t>(i));
                break;
            }
        ++active_ends_;
    } else if (sh.state == State::gap) {
        waiting_.erase(std::find(waiting_.begin(), waiting_.end(), s));
        rebuild_next_event();
        sh.in_burst = sh.def->burst_frames;
    }
    sh.state = State::active;
    if (sh.paced) {
        if (std::find(paced_.begin(), paced_.end(), s) == paced_.end()) paced_.push_back(s);
    } else {
        rebuild_fill();
    }
}

void StreamScheduler::unplan(const PlannedFrame* f, uint32_t n) {
    for (uint32_t i = n; i-- > 0;) {
        const uint32_t s = f[i].share;
        Share& sh = st_[s];
        if (sh.cycle_slots) {  // the cycle's last frame (unplanned in reverse order)
            --cycle_given_;
            continue;
        }
        const auto& d = *sh.def;
        if (sh.state == State::done || sh.state == State::gap) revive(s);
        --sh.planned;
        if (sh.counted) ++sh.left;
        if (sh.burst_frames) --sh.in_burst;
        if (d.replay) {
            sh.record = (sh.record == 0 ? static_cast<uint32_t>(d.templates.size()) : sh.record) - 1;
        } else {
            sh.flow = (sh.flow == 0 ? d.flows : sh.flow) - 1;
            if (!d.period.empty()) sh.size_pos = (sh.size_pos == 0 ? static_cast<uint32_t>(d.period.size()) : sh.size_pos) - 1;
        }
        if (d.random_sizes) --counts_[sh.size_at + f[i].size_idx];
    }
}

void StreamScheduler::forget(uint32_t share, uint32_t, uint16_t len) {
    // Confirmations come in order: the frames never confirmed are each share's last planned.
    Share& sh = st_[share];
    const auto& d = *sh.def;
    --sh.planned;
    if (d.random_sizes) {
        const auto sz = std::lower_bound(d.sizes.begin(), d.sizes.end(), static_cast<uint16_t>(len + packet::kFcsLen));
        --counts_[sh.size_at + static_cast<uint32_t>(sz - d.sizes.begin())];
    }
}

uint64_t StreamScheduler::planned_flow(uint32_t share, uint32_t flow) const {
    const auto& sh = st_[share];
    const uint64_t f = sh.def->replay ? 1 : sh.def->flows, planned = this->planned(share);
    return planned / f + (flow < planned % f ? 1 : 0);
}

uint64_t StreamScheduler::planned_size(uint32_t share, uint32_t size) const {
    const auto& sh = st_[share];
    const auto& d = *sh.def;
    if (d.random_sizes) return counts_[sh.size_at + size];
    const uint64_t planned = this->planned(share);
    if (d.period.empty()) return size == 0 ? planned : 0;
    const uint64_t p = d.period.size(), full = planned / p, part = planned % p;
    uint64_t n = 0;
    for (uint64_t k = 0; k < p; ++k)
        if (d.period[k] == size) n += full + (k < part ? 1 : 0);
    return n;
}

uint64_t StreamScheduler::next_due(uint64_t now) const {
    if (!fill_.empty()) return now;
    uint64_t m = next_event_;
    if (waits_on_streams_) m = std::min(m, now + 100'000);  // look at the streams it waits for again soon
    for (const uint32_t s : paced_) m = std::min(m, st_[s].pacer.next_due());
    return m;
}

PacingRecord StreamScheduler::record() const {
    PacingRecord r;
    for (const auto& sh : st_) {
        if (!sh.paced) continue;
        const auto& x = sh.pacer.record();
        r.skipped += x.skipped;
        r.behind_ns += x.behind_ns;
        r.stalls += x.stalls;
        r.longest_stall_ns = std::max(r.longest_stall_ns, x.longest_stall_ns);
        r.largest_catch_up = std::max(r.largest_catch_up, x.largest_catch_up);
    }
    return r;
}

uint64_t StreamScheduler::record_version() const {
    // Only a sending paced share's record changes; a share that stops changes the sum too,
    // which costs one publication more.
    uint64_t v = paced_.size();
    for (const uint32_t s : paced_) v += st_[s].pacer.record_version() << 8;
    return v;
}

}  // namespace lr::worker
