// What `linerate connect` did on one queue: the handshakes it opened and how each ended,
// counted by the queue's worker (worker/connect_engine.h) and published once per burst for the
// control thread (ConnectCounters).
#pragma once
#include <atomic>
#include <cstdint>
#include <utility>

namespace lr::stats {

// Every SYN ends one way: answered (a SYN-ACK), refused (a RST) or timed out, or is still in
// flight: syns = answered + refused + timeouts + in_flight. With --close fin every answered
// connection then ends closed (the listener's FIN), reset (its RST) or unclosed, or is still
// open: answered = closed + resets + unclosed + open. An answer that comes after its SYN was
// written off is `late`, one that repeats an answer `duplicate`: counted, never twice.
struct ConnectCounts {
    uint64_t syns = 0;        // SYNs handed to the device (connections attempted)
    uint64_t answered = 0;    // SYN-ACKs: handshakes the listener answered (the connections)
    uint64_t refused = 0;     // RSTs: nothing listens there, or the listener refused
    uint64_t timeouts = 0;    // no answer within the response timeout (or by the end)
    uint64_t in_flight = 0;   // SYNs sent, not answered yet
    uint64_t late = 0;        // answers for connections no longer in the window: written off, or ended and slid out
                              // (a repeated SYN-ACK that comes after the window moved on)
    uint64_t duplicate = 0;   // a SYN-ACK again for a connection still in the window (the listener repeated it)
    uint64_t misrouted = 0;   // answers to another queue's SYNs (the device steered them here): replied to, and
                              // counted a timeout by the queue that sent the SYN
    uint64_t replies = 0;     // ACK, RST and FIN segments handed to the device
    uint64_t replies_dropped = 0;  // answers it could not queue (the device took nothing for too long)
    uint64_t closed = 0;      // --close fin: the listener's FIN acknowledged (the connection closed both ways)
    uint64_t resets = 0;      // --close fin: the listener reset an established connection
    uint64_t unclosed = 0;    // --close fin: established, and no FIN from the listener within the timeout
    uint64_t open = 0;        // --close fin: established, waiting for the listener's FIN
    uint64_t other = 0;       // other frames on the queue: not TCP from the listener's port to ours
    uint64_t malformed = 0;   // TCP with a wrong length or checksum
    uint64_t window_full = 0; // times a paced SYN was due with --outstanding handshakes in flight (held back)
    uint64_t first_syn_ns = 0;     // when the first SYN was handed to the device (the worker's clock, ns)
    uint64_t last_answer_ns = 0;   // when the last SYN-ACK was read
    // Answered handshakes per second, from the first SYN to the last answer.
    double per_second() const {
        return last_answer_ns > first_syn_ns && first_syn_ns
                   ? static_cast<double>(answered) * 1e9 / static_cast<double>(last_answer_ns - first_syn_ns)
                   : 0;
    }
};

// The counts as the control thread reads them while the worker runs: relaxed stores by the
// worker alone, once per burst.
struct alignas(64) ConnectCounters {
    std::atomic<uint64_t> syns{0}, answered{0}, refused{0}, timeouts{0}, in_flight{0}, late{0}, duplicate{0},
        misrouted{0}, replies{0}, replies_dropped{0}, closed{0}, resets{0}, unclosed{0}, open{0}, other{0}, malformed{0},
        window_full{0}, first_syn_ns{0}, last_answer_ns{0};

    template <class F>
    static void each(F&& f, auto& counters, auto& counts) {
        f(counters.syns, counts.syns);
        f(counters.answered, counts.answered);
        f(counters.refused, counts.refused);
        f(counters.timeouts, counts.timeouts);
        f(counters.in_flight, counts.in_flight);
        f(counters.late, counts.late);
        f(counters.duplicate, counts.duplicate);
        f(counters.misrouted, counts.misrouted);
        f(counters.replies, counts.replies);
        f(counters.replies_dropped, counts.replies_dropped);
        f(counters.closed, counts.closed);
        f(counters.resets, counts.resets);
        f(counters.unclosed, counts.unclosed);
        f(counters.open, counts.open);
        f(counters.other, counts.other);
        f(counters.malformed, counts.malformed);
        f(counters.window_full, counts.window_full);
        f(counters.first_syn_ns, counts.first_syn_ns);
        f(counters.last_answer_ns, counts.last_answer_ns);
    }
    void publish(const ConnectCounts& c) {
        each([](std::atomic<uint64_t>& a, const uint64_t& v) { a.store(v, std::memory_order_relaxed); }, *this, c);
    }
    ConnectCounts read() const {
        ConnectCounts c;
        each([](const std::atomic<uint64_t>& a, uint64_t& v) { v = a.load(std::memory_order_relaxed); }, *this, c);
        return c;
    }
};

inline ConnectCounts& operator+=(ConnectCounts& a, const ConnectCounts& b) {
    a.syns += b.syns;
    a.answered += b.answered;
    a.refused += b.refused;
    a.timeouts += b.timeouts;
    a.in_flight += b.in_flight;
    a.late += b.late;
    a.duplicate += b.duplicate;
    a.misrouted += b.misrouted;
    a.replies += b.replies;
    a.replies_dropped += b.replies_dropped;
    a.closed += b.closed;
    a.resets += b.resets;
    a.unclosed += b.unclosed;
    a.open += b.open;
    a.other += b.other;
    a.malformed += b.malformed;
    a.window_full += b.window_full;
    if (b.first_syn_ns && (!a.first_syn_ns || b.first_syn_ns < a.first_syn_ns)) a.first_syn_ns = b.first_syn_ns;
    if (b.last_answer_ns > a.last_answer_ns) a.last_answer_ns = b.last_answer_ns;
    return a;
}

}  // namespace lr::stats
