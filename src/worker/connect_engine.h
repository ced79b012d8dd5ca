// The engine of `linerate connect` (TCP connection rate, netperf TCP_CRR's question asked at
// the packet level), written once for every backend. One worker per queue sends SYNs to a
// listening port of a real TCP stack, paced (--rate) and at most --outstanding in flight, and
// reads the answers on the same queue:
// - a SYN-ACK answers a handshake: timed from its SYN, counted, and answered at once, as
//   --close asks: `rst` ACK then RST (a connection opens, then is reset), `fin` FIN-ACK (it
//   opens and we close it; the listener's own FIN is acknowledged later), `abort` RST alone
//   (the handshake is measured, no connection opens);
// - a RST refuses it (nothing listens there);
// - the listener's FIN (`fin`) is acknowledged, closing the connection both ways.
// The answers leave before new SYNs, so the listener's queues never fill with our handshakes.
// Every SYN ends answered, refused or timed out (stats/connect_counts.h); the replies are
// written from the answer's own headers (packet/tcp_segment.h), the SYNs from one template.
#pragma once
#include <algorithm>
#include <cstring>
#include <memory>
#include <sys/prctl.h>

#include "packet/tcp_segment.h"
#include "stats/tsc_clock.h"
#include "worker/engine_common.h"
#include "worker/handshake_window.h"
#include "worker/pacer.h"
#include "worker/queue_ops.h"

namespace lr::worker {

namespace detail {

// Replies waiting for the device: a burst's answers (two segments each at most), staged so
// the received frames can be released first.
class StagedReplies {
public:
    static constexpr uint32_t kSlots = 2 * kMaxBurstFrames;
    StagedReplies() : buf_(new uint8_t[size_t{kSlots} * packet::kMaxReplyLen]) {}
    bool full() const { return n_ == kSlots; }
    uint32_t size() const { return n_; }
    uint32_t room() const { return kSlots - n_; }
    // Room for one more reply, or nullptr (full).
    uint8_t* push_slot() { return full() ? nullptr : at((head_ + n_) % kSlots); }
    void pushed(uint32_t len) { len_[(head_ + n_++) % kSlots] = static_cast<uint16_t>(len); }
    const uint8_t* front() const { return at(head_); }
    uint32_t front_len() const { return len_[head_]; }
    void pop() {
        head_ = (head_ + 1) % kSlots;
        --n_;
    }

private:
    uint8_t* at(uint32_t i) const { return buf_.get() + size_t{i} * packet::kMaxReplyLen; }
    std::unique_ptr<uint8_t[]> buf_;
    uint16_t len_[kSlots] = {};
    uint32_t head_ = 0, n_ = 0;
};

// One queue's connections: the answers' bookkeeping and the replies they call for.
class Connector {
public:
    explicit Connector(const WorkerConfig& w)
        : k_(w.conn), win_(*k_.window), queue_(w.queue), ports_(k_.src_port_hi - k_.src_port_lo + 1u) {}

    stats::ConnectCounts& counts() { return c_; }
    HandshakeWindow& window() { return win_; }
    StagedReplies& replies() { return staged_; }
    // The source port of connection c: the queues take turns through the range, so no two
    // connections in flight share a port (spec: outstanding x queues < the range).
    uint16_t port_of(uint64_t c) const {
        return static_cast<uint16_t>(k_.src_port_lo + (c * k_.queues + queue_) % ports_);
    }

    // One received frame at `now`.
    void answer(const uint8_t* f, uint32_t len, uint64_t now) {
        packet::TcpSegment s;
        switch (packet::parse_tcp_segment(f, len, s)) {
            case packet::SegmentParse::other: ++c_.other; return;
            case packet::SegmentParse::malformed: ++c_.malformed; return;
            case packet::SegmentParse::tcp: break;
        }
        if (s.sport != k_.listen_port || s.dport < k_.src_port_lo || s.dport > k_.src_port_hi ||
            !(s.flags & packet::kTcpAck)) {
            ++c_.other;  // every answer of the listener acknowledges our SYN
            return;
        }
        const uint32_t isn = isn_of_ack(s.ack);
        if (queue_of_isn(isn) != queue_) {
            ++c_.misrouted;  // its queue times the SYN out; the listener still gets its answer
            if (s.flags & packet::kTcpSyn) reply_to_syn_ack(f, s);
            else if ((s.flags & packet::kTcpFin) && k_.close == CloseMode::fin) reply_to_fin(f, s, isn);
            return;
        }
        uint64_t c = 0;
        const bool known =
            win_.find(number_of_isn(isn), c) == HandshakeWindow::Found::in_window && port_of(c) == s.dport;
        const auto st = known ? win_.state(c) : HandshakeWindow::State::free;
        if (s.flags & packet::kTcpSyn) {
            if (!known || st == HandshakeWindow::State::free) {
                ++c_.late;  // written off already: the listener's half-open connection is reset
                stage(f, s, s.ack, 0, packet::kTcpRst);
                return;
            }
            if (st == HandshakeWindow::State::syn_sent) {
                ++c_.answered;
                c_.last_answer_ns = now;
                k_.handshake->add(now > win_.sent_at(c) ? now - win_.sent_at(c) : 0);
                win_.set(c, k_.close == CloseMode::fin ? HandshakeWindow::State::established
                                                       : HandshakeWindow::State::done);
            } else {
                ++c_.duplicate;  // our answer was lost: answered again
            }
            reply_to_syn_ack(f, s);
        } else if (s.flags & packet::kTcpRst) {
            if (st == HandshakeWindow::State::syn_sent) {
                ++c_.refused;
                win_.set(c, HandshakeWindow::State::done);
            } else if (st == HandshakeWindow::State::established) {
                ++c_.resets;
                win_.set(c, HandshakeWindow::State::done);
            } else {
                ++c_.late;
            }
        } else if ((s.flags & packet::kTcpFin) && k_.close == CloseMode::fin) {
            if (st == HandshakeWindow::State::established) {
                ++c_.closed;
                win_.set(c, HandshakeWindow::State::done);
            } else if (!known) {
                ++c_.late;
            } else {
                ++c_.duplicate;
            }
            reply_to_fin(f, s, isn);
        }
        // A bare ACK (of our FIN), data, or a FIN our RST overtook (--close rst) needs nothing.
    }

private:
    // The answer to a SYN-ACK, by --close. Its ACK number is our ISN + 1: the next sequence
    // number we send.
    void reply_to_syn_ack(const uint8_t* f, const packet::TcpSegment& s) {
        const uint32_t ack = s.seq + 1;
        switch (k_.close) {
            case CloseMode::abort: stage(f, s, s.ack, 0, packet::kTcpRst); break;
            case CloseMode::rst:
                stage(f, s, s.ack, ack, packet::kTcpAck);
                stage(f, s, s.ack, 0, packet::kTcpRst);
                break;
            case CloseMode::fin: stage(f, s, s.ack, ack, packet::kTcpFin | packet::kTcpAck); break;
        }
    }
    // The listener's FIN: acknowledged after our own FIN (sequence ISN + 2).
    void reply_to_fin(const uint8_t* f, const packet::TcpSegment& s, uint32_t isn) {
        stage(f, s, isn + 2, s.seq + s.data + 1, packet::kTcpAck);
    }
    void stage(const uint8_t* f, const packet::TcpSegment& s, uint32_t seq, uint32_t ack, uint8_t flags) {
        uint8_t* out = staged_.push_slot();
        if (!out) {
            ++c_.replies_dropped;
            return;
        }
        staged_.pushed(packet::write_reply(out, f, s, seq, ack, flags, k_.ttl));
    }

    const ConnectSetup& k_;
    HandshakeWindow& win_;
    const uint16_t queue_;
    const uint32_t ports_;
    stats::ConnectCounts c_;
    StagedReplies staged_;
};

// Hands staged replies to the device, as many as it takes now.
template <TxQueueOps Tx>
uint32_t send_replies(Tx& tx, StagedReplies& r, uint32_t burst, uint64_t& no_buffer, uint64_t& backpressure) {
    if (!r.size()) return 0;
    const uint32_t want = tx.avail(tx.room(std::min(r.size(), burst)));
    if (!want) return 0;
    const Acquired a = tx.acquire(want);
    no_buffer += a.no_buffer;
    backpressure += a.ring_full;
    const FrameSpan fs = tx.fresh();
    for (uint32_t i = 0; i < a.got; ++i) {
        std::memcpy(fs.fresh_frame(i), r.front(), r.front_len());
        tx.set_frame(fs.from + i, static_cast<uint16_t>(r.front_len()), 0);
        r.pop();
    }
    return a.got;
}

}  // namespace detail

template <TxQueueOps Tx, RxQueueOps Rx>
bool connect_engine(Tx& tx, Rx& rx, const WorkerConfig& w) {
    using stats::publish;
    const ConnectSetup& k = w.conn;
    const packet::SynTemplate& syn = *k.syn;
    auto& tc = *w.tx_counters;
    auto& rc = *w.rx_counters;
    detail::Connector conn(w);
    auto& c = conn.counts();
    HandshakeWindow& win = conn.window();
    LoopFrame loop(w.ctl->stop_rx, w.yield_when_idle);
    stats::BurstClock clk;
    Pacer pacer(w.tx.pacing);
    if (pacer.limited()) {
        prctl(PR_SET_TIMERSLACK, 1UL);
        pacer.start(clk.now());
    }
    uint64_t packets = 0, bytes = 0, no_buffer = 0, backpressure = 0, first = 0, last = 0;
    bool tx_done = false, window_was_full = false;
    while (loop.running()) {
        loop.poll();
        tx.reclaim();
        // Read no more answers than the staging area can take replies for (two each at most).
        const uint32_t n = rx.receive(std::min<uint32_t>(w.rx.burst, conn.replies().room() / 2));
        uint64_t now = clk.now();
        if (n) {
            for (uint32_t i = 0; i < n; ++i) {
                bytes += rx.wire_bytes(i);
                conn.answer(rx.data(i), rx.len(i), now);
            }
            rx.release();
            packets += n;
            last = now;
            if (!first) first = now;
        } else {
            rx.idle();
        }
        win.expire(now, k.syn_timeout_ns, k.close_timeout_ns, c.timeouts, c.unclosed);
        // The answers first: each frees a half-open connection on the listener.
        const uint32_t replied = detail::send_replies(tx, conn.replies(), 2 * w.tx.burst, no_buffer, backpressure);
        c.replies += replied;
        // Offered now: a queue holds one acquire() until transmit(), and the SYNs take the next.
        Transmitted x{0, false};
        if (replied) x = tx.transmit();
        if (!tx_done && (w.ctl->stop_tx.load(std::memory_order_relaxed) || (w.tx.count && c.syns >= w.tx.count))) {
            tx_done = true;
            stats::set_state(tc, stats::WorkerState::finished);
        }
        uint32_t opened = 0;
        // New SYNs only once every reply has left: a listener's connection is closed before a
        // later SYN may reuse its source port.
        if (!tx_done && !conn.replies().size()) {
            uint32_t room = std::min<uint32_t>(w.tx.burst, win.room());
            if (w.tx.count) room = static_cast<uint32_t>(std::min<uint64_t>(room, w.tx.count - c.syns));
            room = tx.avail(tx.room(room));
            const uint32_t due = pacer.limited() ? pacer.due(now, room) : room;
            // A paced SYN due while the window is full: the rate asked is not offered (counted
            // once per time it happens, not per poll).
            const bool held_back = pacer.limited() && win.room() == 0 && pacer.next_due() <= now;
            if (held_back && !window_was_full) ++c.window_full;
            window_was_full = held_back;
            if (due) {
                const Acquired a = tx.acquire(due);
                no_buffer += a.no_buffer;
                backpressure += a.ring_full;
                const FrameSpan fs = tx.fresh();
                for (uint32_t i = 0; i < a.got; ++i) {
                    uint8_t* f = fs.fresh_frame(i);
                    std::memcpy(f, syn.frame.data(), syn.frame.size());  // the buffer may hold a reply
                    const uint64_t id = win.open(now);
                    packet::stamp_syn(f, syn, conn.port_of(id), isn_of(w.queue, id));
                    tx.set_frame(fs.from + i, static_cast<uint16_t>(syn.frame.size()), 0);
                }
                opened = a.got;
                if (a.got && !c.syns) c.first_syn_ns = now;
                c.syns += a.got;
            }
        }
        if (opened || !replied) {  // also re-offers what the device left and kicks it
            const Transmitted y = tx.transmit();
            x = {x.taken + y.taken, x.partial || y.partial};
        }
        backpressure += x.partial;
        c.in_flight = win.syn_sent();
        c.open = win.established();
        publish(rc.packets, packets);
        publish(rc.bytes, bytes);
        publish(rc.polls, loop.polls());
        publish(tc.packets, tx.confirmed());
        publish(tc.bytes, tx.confirmed_bytes());
        publish(tc.backpressure, backpressure);
        publish(tc.no_buffer, no_buffer);
        publish(tc.tx_errors, tx.errors());
        publish(tc.polls, loop.polls());
        k.counts->publish(c);
        if (tx.failed()) break;
        if (n || replied || opened || x.taken) {
            loop.busy();
        } else if (pacer.limited() && !tx_done && win.room() && !win.syn_sent() && !win.established() &&
                   !conn.replies().size()) {
            // Nothing can arrive (nothing is in flight): sleep until the next SYN is due.
            now = clk.now();
            const uint64_t due_at = pacer.next_due();
            detail::wait_for_departure(due_at > now ? static_cast<int64_t>(due_at - now) : 0, w.yield_when_idle);
        } else {
            loop.idle();  // answers are awaited: poll (the handshake is timed when its answer is read)
        }
    }
    tx.finish();
    // The end: what was never answered is written off (the drain gave it the response timeout).
    win.expire_all(c.timeouts, c.unclosed);
    c.in_flight = win.syn_sent();
    c.open = win.established();
    k.counts->publish(c);
    publish(tc.packets, tx.confirmed());
    publish(tc.bytes, tx.confirmed_bytes());
    publish(tc.unsent, tx.issued() - tx.confirmed());
    tx.drop_held();
    if (first) {
        publish(rc.first_pkt_ns, first);
        publish(rc.last_pkt_ns, last);
    }
    return !tx.failed();
}

}  // namespace lr::worker
