// The connections one `linerate connect` queue has in flight (worker/connect_engine.h). Each
// queue numbers its connections 0, 1, 2...; connection c's SYN carries c in its initial
// sequence number (kIsnBits of it), so the listener's answer names it again. A ring of slots,
// one per connection in the window [oldest, next), remembers when each SYN left and how far
// its connection got. A SYN may go only while the ring has a free slot: --outstanding.
//
// Single writer (the queue's worker); fixed memory, allocated before the run.
#pragma once
#include <algorithm>
#include <bit>
#include <cstdint>
#include <vector>

namespace lr::worker {

// The initial sequence number: the queue in its top kQueueBits, then the connection number's
// low kIsnBits bits, then a zero bit, so ISN + 1 is odd and ISN + 2 even: an ACK number the
// listener sends is one of the two, and says which.
inline constexpr unsigned kQueueBits = 7, kIsnBits = 24;
inline constexpr uint32_t kIsnMask = (1u << kIsnBits) - 1;
inline constexpr uint32_t isn_of(uint16_t queue, uint64_t c) {
    return uint32_t{queue} << (kIsnBits + 1) | (static_cast<uint32_t>(c) & kIsnMask) << 1;
}
inline constexpr uint16_t queue_of_isn(uint32_t isn) { return static_cast<uint16_t>(isn >> (kIsnBits + 1)); }
inline constexpr uint32_t number_of_isn(uint32_t isn) { return (isn >> 1) & kIsnMask; }
// The ISN an ACK number of the listener acknowledges (ISN + 1: our SYN; ISN + 2: our FIN too).
inline constexpr uint32_t isn_of_ack(uint32_t ack) { return (ack & 1) ? ack - 1 : ack - 2; }
// The most slots a window may have: less than half the numbers the ISN carries, so an answer
// names one connection of the window and no other.
inline constexpr uint32_t kMaxWindow = 1u << 20;

class HandshakeWindow {
public:
    enum class State : uint8_t { free, syn_sent, established, done };
    enum class Found : uint8_t { in_window, gone };

    // `size`: at least the handshakes allowed in flight (rounded up to a power of two).
    explicit HandshakeWindow(uint32_t size)
        : size_(std::bit_ceil(std::clamp<uint32_t>(size, 1, kMaxWindow))), mask_(size_ - 1), sent_(size_),
          state_(size_, State::free) {}

    // SYNs that may go now (the ring's free slots).
    uint32_t room() const { return static_cast<uint32_t>(size_ - (next_ - oldest_)); }
    uint64_t next() const { return next_; }
    // Connection `next()` sent its SYN at `now`.
    uint64_t open(uint64_t now) {
        const uint64_t c = next_++;
        sent_[c & mask_] = now;
        state_[c & mask_] = State::syn_sent;
        ++syn_sent_;
        return c;
    }
    // The connection whose number is `n` (mod 2^kIsnBits) in the window, or gone (written off
    // and slid past, or never sent).
    Found find(uint32_t n, uint64_t& c) const {
        if (next_ == 0) return Found::gone;
        const uint64_t back = ((next_ - 1) - n) & kIsnMask;
        if (back >= next_ - oldest_) return Found::gone;
        c = next_ - 1 - back;
        return Found::in_window;
    }
    State state(uint64_t c) const { return state_[c & mask_]; }
    uint64_t sent_at(uint64_t c) const { return sent_[c & mask_]; }
    void set(uint64_t c, State s) {
        leave(state_[c & mask_]);
        state_[c & mask_] = s;
        syn_sent_ += s == State::syn_sent;
        established_ += s == State::established;
    }

    // Slides the window past connections that ended, and writes off those that waited too long:
    // a SYN unanswered for `syn_timeout` ns (counted in `timeouts`), a connection established
    // and not closed for `close_timeout` ns (`unclosed`; only when closes are awaited). Slots
    // leave in the order their SYNs left, so the first one still waiting ends the sweep.
    void expire(uint64_t now, uint64_t syn_timeout, uint64_t close_timeout, uint64_t& timeouts, uint64_t& unclosed) {
        while (oldest_ < next_) {
            const size_t i = oldest_ & mask_;
            const uint64_t age = now > sent_[i] ? now - sent_[i] : 0;
            switch (state_[i]) {
                case State::syn_sent:
                    if (age < syn_timeout) return;
                    ++timeouts;
                    break;
                case State::established:
                    if (age < close_timeout) return;
                    ++unclosed;
                    break;
                case State::free:
                case State::done: break;
            }
            leave(state_[i]);
            state_[i] = State::free;
            ++oldest_;
        }
    }
    // The end of the run: what still waits is written off.
    void expire_all(uint64_t& timeouts, uint64_t& unclosed) { expire(UINT64_MAX, 0, 0, timeouts, unclosed); }
    // Connections waiting for their SYN-ACK, and established ones waiting for their close.
    uint64_t syn_sent() const { return syn_sent_; }
    uint64_t established() const { return established_; }

private:
    void leave(State s) {
        syn_sent_ -= s == State::syn_sent;
        established_ -= s == State::established;
    }

    uint64_t size_, mask_;
    std::vector<uint64_t> sent_;
    std::vector<State> state_;
    uint64_t oldest_ = 0, next_ = 0;
    uint64_t syn_sent_ = 0, established_ = 0;
};

}  // namespace lr::worker
