// Frames kept for a pcap file (--capture): a receive queue copies the first N frames that
// match the filter into storage allocated before the trial, and stops looking once full, so
// a capture costs one predictable branch per frame after that and never changes a count.
// The control thread reads the frames after the workers have joined.
#pragma once
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <vector>

namespace lr::stats {

// Which frames a capture keeps: received ones by class, or (sent) the frames a sender stamped.
enum class CaptureFilter { all, ours, foreign, malformed, sent };

struct CapturedFrame {
    uint64_t ts_ns = 0;     // the receive burst's clock (CLOCK_MONOTONIC ns)
    uint32_t orig_len = 0;  // the frame's length (without FCS)
    std::vector<uint8_t> bytes;
    unsigned port_index = 0;  // the port whose queue kept it (the session's port list)
};

class FrameCapture {
public:
    // Room for `max_frames` frames of up to `snaplen` bytes (allocated here, not per frame).
    void configure(uint32_t max_frames, uint32_t snaplen, CaptureFilter f) {
        max_ = max_frames;
        snap_ = snaplen;
        filter_ = f;
        count_ = 0;
        pool_.assign(size_t(max_frames) * snaplen, 0);
        hdr_.assign(max_frames, {});
    }
    bool active() const { return count_ < max_; }
    bool filters() const { return filter_ != CaptureFilter::all && filter_ != CaptureFilter::sent; }  // needs each frame's class
    // `cls`: the classifier's verdict (lr_wire.h: 0 foreign, 1 ours, 2 malformed, 3 stale).
    void take(const uint8_t* p, uint32_t len, uint64_t ts_ns, int cls) {
        if (filter_ == CaptureFilter::ours && cls != 1) return;
        if (filter_ == CaptureFilter::foreign && cls != 0 && cls != 3) return;
        if (filter_ == CaptureFilter::malformed && cls != 2) return;
        const uint32_t cap = std::min(len, snap_);
        std::memcpy(&pool_[size_t(count_) * snap_], p, cap);
        hdr_[count_] = {ts_ns, len, cap};
        ++count_;
    }
    std::vector<CapturedFrame> frames() const {
        std::vector<CapturedFrame> out;
        out.reserve(count_);
        for (uint32_t i = 0; i < count_; ++i) {
            const uint8_t* p = &pool_[size_t(i) * snap_];
            out.push_back({hdr_[i].ts, hdr_[i].len, std::vector<uint8_t>(p, p + hdr_[i].cap), 0});
        }
        return out;
    }

private:
    struct Hdr {
        uint64_t ts = 0;
        uint32_t len = 0, cap = 0;
    };
    uint32_t max_ = 0, snap_ = 0, count_ = 0;
    CaptureFilter filter_ = CaptureFilter::all;
    std::vector<uint8_t> pool_;
    std::vector<Hdr> hdr_;
};

}  // namespace lr::stats
