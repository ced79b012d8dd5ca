// The eight-frame lane of the receive path: eight minimum-size frames of one flow, in order,
// checked and accounted together with AVX-512, where the frame-by-frame path
// (stats::RxMeasure::account_frames) spends some 150 instructions on each. It is the same
// rules, run on eight frames at once: a frame the lane takes is one the known-header lane
// (packet::KnownHeaders::match) would take, and what it records (the sequence window, the
// jitter, the histogram's buckets and totals) is what the frame-by-frame path would have
// recorded. Anything else (a frame of another flow or length, a checksum that does not verify,
// a sequence out of order, a latency out of range, a stream's first frame) makes it decline all
// eight, untouched, for the frame-by-frame path.
#pragma once
#include <cstdint>

#include "packet/known_header.h"
#include "stats/latency.h"

namespace lr::stats {

struct StreamRx;

// Frames the lane takes at once.
inline constexpr uint32_t kRunFrames = 8;

// Whether this CPU has the lane's instructions (AVX-512 F, BW, DQ, CD and VL), and whether the
// lane is to be used (on where it has them; off for a test or a benchmark that compares the two
// paths). Read when a receiver starts.
bool run_lane_supported();
bool run_lane_enabled();
void set_run_lane_enabled(bool on);

// Eight frames `p`, each 60 bytes long (the caller checks the lengths), against `entry`, the
// flow of p[0]; bit i of `verified`: the device checked frame i's L4 checksum. `st`: the
// entry's stream; `hist`: the receiver's histogram; `now48`: the burst's clock, modulo 2^48.
// True: all eight were taken and accounted. False: none was, and nothing changed.
bool account_run8(const uint8_t* const* p, unsigned verified, const packet::KnownHeaders::Run& entry, StreamRx& st,
                  LatencyHistogram& hist, uint64_t now48);

}  // namespace lr::stats
