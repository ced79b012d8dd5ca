// Per-packet signing on the TX side, shared by every backend's TX loop: each stream (flow)
// of the queue has its own sequence counter; the timestamp is read once per burst.
#pragma once
#include <cstdint>
#include <vector>

#include "packet/signature.h"
#include "stats/counters.h"

namespace lr::engine {

class TxSigner {
public:
    TxSigner(bool enabled, const packet::SigLayout& l, const std::vector<uint16_t>& streams)
        : on_(enabled && l.level != packet::SigLevel::none), l_(l), seqs_(streams.size(), 0) {
        uint16_t top = 0;
        for (auto s : streams) top = std::max(top, s);
        slot_.assign(static_cast<size_t>(top) + 1, 0);
        for (uint32_t i = 0; i < streams.size(); ++i) slot_[streams[i]] = i;
    }
    bool on() const { return on_; }
    void begin_burst() { ts_ = stats::now_ns(); }
    // Writes the next sequence of the frame's stream and the burst timestamp.
    void stamp(uint8_t* f) { packet::sig_stamp(f, l_, seqs_[slot(f)]++, ts_); }
    // A stamped frame that was never sent: its sequence does not count as sent.
    void unsent(const uint8_t* f) { ++unsent_[slot(f)]; }
    // Per stream slot: frames stamped and handed over, minus those never sent.
    std::vector<uint64_t> sent() const {
        std::vector<uint64_t> v(seqs_.size());
        for (size_t i = 0; i < v.size(); ++i) v[i] = seqs_[i] - (unsent_.empty() ? 0 : unsent_[i]);
        return v;
    }
    void prepare_unsent() { unsent_.assign(seqs_.size(), 0); }

private:
    uint32_t slot(const uint8_t* f) const {
        const uint16_t s = packet::sig_stream(f, l_);
        return s < slot_.size() ? slot_[s] : 0;
    }
    bool on_;
    packet::SigLayout l_;
    std::vector<uint64_t> seqs_, unsent_;
    std::vector<uint32_t> slot_;
    uint64_t ts_ = 0;
};

}  // namespace lr::engine
