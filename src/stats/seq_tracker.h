// Per-stream sequence tracking: received, duplicates, reordering and late arrivals, over a
// sliding window, in a 64-bit sequence space extended from 48- or 32-bit wire values.
// One tracker per (RX queue, stream); only its RX worker writes it.
// What an arrival in order touches (the received count, the highest sequence and the window's
// word that holds it, kept apart from the ring) is the tracker's first 24 bytes: with thousands
// of streams, part of one cache line a frame (stats::StreamRx), not two; the word goes to the
// ring once every 64 sequences. The counts of rarer arrivals (reordered, duplicate, late) follow,
// and then where the ring lies: apart, so that a tracker is 56 bytes, not 1,072, and thousands of
// streams' hot bytes lie close together.
#pragma once
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <utility>

namespace lr::stats {

class SeqTracker {
public:
    static constexpr uint64_t kWindow = 4096;  // sequences remembered below the highest

    struct Counts {
        uint64_t received = 0;    // unique sequences seen (in order or reordered)
        uint64_t reordered = 0;   // arrived after a higher sequence, within the window
        uint64_t duplicates = 0;  // a sequence seen again within the window
        uint64_t late = 0;        // below the window: cannot tell duplicate from reordered;
                                  // counted apart, not as received
        uint64_t highest = 0;     // highest sequence seen (valid when any())
        // Anything arrived (the first arrival is always received).
        bool any() const { return received != 0; }
    };
    // The bytes an arrival in order touches, at the start of the tracker: the received count,
    // the highest sequence and the window's word holding it, 8 bytes each, in that order (for a
    // lane that advances several trackers at once, stats::account_flows8).
    static constexpr size_t kHotBytes = 3 * sizeof(uint64_t);
    static constexpr bool hot_bytes_in_order() {
        return offsetof(SeqTracker, received_) == 0 && offsetof(SeqTracker, highest_) == 8 &&
               offsetof(SeqTracker, word_) == 16;
    }

    // Extends a `bits`-wide wire sequence to 64 bits around the highest seen so far.
    uint64_t extend(uint64_t wire, unsigned bits) const {
        // The common case, the next sequence, without the general arithmetic.
        const uint64_t next = highest_ + 1;
        if (any() && bits < 64 && ((next ^ wire) & ((uint64_t(1) << bits) - 1)) == 0) return next;
        return extend_slow(wire, bits);
    }
    enum class Arrival : uint8_t { in_order, reordered, duplicate, late };
    // Records one arrival of (64-bit) sequence `s` and says what it was.
    Arrival add(uint64_t s) {
        if (any() && s == highest_ + 1) {
            next_in_order();
            return Arrival::in_order;
        }
        return add_slow(s);
    }
    // extend() and add() in one, for the receive path: what the arrival of wire sequence
    // `wire` was, and for an arrival in order the sequences it jumped over (0: the next one).
    // The next sequence, the common case, inline; everything else out of line.
    struct Arrived {
        Arrival kind;
        uint64_t skipped;
    };
    [[gnu::always_inline]] Arrived arrive(uint64_t wire, unsigned bits) {
        const uint64_t next = highest_ + 1;
        if (any() && bits < 64 && ((next ^ wire) & ((uint64_t(1) << bits) - 1)) == 0) [[likely]] {
            next_in_order();
            return {Arrival::in_order, 0};
        }
        return arrive_slow(wire, bits);
    }
    // For a lane that checks a run of arrivals itself (stats::account_run8): whether anything
    // arrived, the next sequence in order, and `k` arrivals of the next sequences in order.
    bool started() const { return any(); }
    uint64_t next() const { return highest_ + 1; }
    [[gnu::always_inline]] void next_in_order(unsigned k) {
        const uint64_t s = highest_ + 1;
        if (s % 64 != 0 && s % 64 + k <= 64) [[likely]] {  // within the highest's word
            word_ |= ((uint64_t(1) << k) - 1) << (s % 64);
            highest_ += k;
            received_ += k;
            return;
        }
        for (unsigned i = 0; i < k; ++i) next_in_order();
    }
    // For such a lane, which has moved the highest sequence on to the first of a new word and
    // started that word: the word it left, `word`, into the ring.
    void keep_word_left(uint64_t word) { bits_[((highest_ - 1) / 64) % kWords] = word; }
    Counts counts() const { return {received_, rare_.reordered, rare_.duplicates, rare_.late, highest_}; }
    // Sequences 0..highest never seen (so far): the receiver-side loss estimate. The sender's
    // count gives the exact loss after the drain.
    uint64_t gaps() const { return any() ? highest_ + 1 - received_ - rare_.late : 0; }

private:
    // The sequence after the highest arrived. Bits above the highest are never read, so a new
    // word starts empty, and stale bits in the ring from a lap ago need no clearing here: a
    // jump clears what it passes.
    [[gnu::always_inline]] void next_in_order() {
        const uint64_t s = highest_ + 1;
        if (s % 64 == 0) [[unlikely]] {
            bits_[(highest_ / 64) % kWords] = word_;
            word_ = 0;
        }
        word_ |= uint64_t(1) << (s % 64);
        highest_ = s;
        ++received_;
    }
    bool any() const { return received_ != 0; }
    // Everything but next_in_order works on the ring: the highest's word goes there first and
    // comes back after.
    void store_word() { bits_[(highest_ / 64) % kWords] = word_; }
    void load_word() { word_ = bits_[(highest_ / 64) % kWords]; }
    bool seen(uint64_t s) const { return bits_[(s / 64) % kWords] >> (s % 64) & 1; }
    void mark(uint64_t s) { bits_[(s / 64) % kWords] |= uint64_t(1) << (s % 64); }
    void clear_range(uint64_t from, uint64_t to);  // [from, to)
    uint64_t extend_slow(uint64_t wire, unsigned bits) const;
    Arrival add_slow(uint64_t s);
    Arrival add_to_ring(uint64_t s);
    [[gnu::noinline]] Arrived arrive_slow(uint64_t wire, unsigned bits);

    static constexpr uint64_t kWords = kWindow / 64 * 2;  // ring of bits, twice the window
    // The ring's words, zero when made, in an allocation of their own (made with the tracker,
    // before any frame); a copy copies them.
    class Ring {
    public:
        Ring() : words_(new uint64_t[kWords]()) {}
        Ring(const Ring& o) : Ring() { std::copy_n(o.words_, kWords, words_); }
        Ring(Ring&& o) noexcept : words_(std::exchange(o.words_, nullptr)) {}
        Ring& operator=(Ring o) noexcept {
            std::swap(words_, o.words_);
            return *this;
        }
        ~Ring() { delete[] words_; }
        uint64_t& operator[](uint64_t i) { return words_[i]; }
        uint64_t operator[](uint64_t i) const { return words_[i]; }
        void clear() { std::fill_n(words_, kWords, uint64_t{0}); }

    private:
        uint64_t* words_;  // kWords (a raw pointer keeps the tracker a standard-layout type)
    };
    // Counts::received and Counts::highest, then the word: the hot bytes.
    uint64_t received_ = 0, highest_ = 0;
    uint64_t word_ = 0;  // the window's word holding the highest sequence (its ring entry is stale)
    struct Rare {
        uint64_t reordered = 0, duplicates = 0, late = 0;
    } rare_;
    Ring bits_;
};

}  // namespace lr::stats
