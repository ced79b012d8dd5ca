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
class BucketsByStream;

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

// What classify_run8 compares in a 60-byte frame of the fast lane's layout, for a run's nonce:
// the bytes packet::classify_fast checks against constants (EtherType, version and header
// length, total length 46, the run identity, not a fragment, UDP, UDP length 26, the magic), as
// a value and a bit mask.
struct RunHeader {
    alignas(64) uint8_t value[64] = {};
    alignas(64) uint8_t mask[64] = {};
};
RunHeader run_header(uint32_t nonce);

// The signatures of eight frames classify_run8 took.
struct RunSigs {
    alignas(64) uint64_t seq[kRunFrames];
    alignas(64) uint64_t ts[kRunFrames];
    alignas(64) uint64_t stream[kRunFrames];
};

// Eight frames `p`, each 60 bytes long (the caller checks the lengths), classified as
// packet::classify_fast classifies them, of any of the run's `streams` streams (`verified` as
// for account_run8): true when it takes all eight, their signatures then in `out`; false when it
// would decline any of them.
bool classify_run8(const uint8_t* const* p, unsigned verified, const RunHeader& header, uint32_t streams,
                   RunSigs& out);

// The latency runs account_flows8 ended (a mix's, RxMeasure's EndedRuns to hand them on):
// frame j's flow's when bit j of `mask` is set, its bucket in a StreamLatency and its count.
struct EndedRunsOf8 {
    unsigned mask = 0;
    alignas(64) uint64_t bucket[kRunFrames];
    alignas(64) uint64_t count[kRunFrames];
};

// Eight frames classify_run8 took (`sigs`), each of another of the flows `streams`, accounted
// together as RxMeasure::account_frames accounts them one by one, when each is its flow's next
// sequence, each flow has had a frame with a latency before, and each latency is below
// LatencyRun::kWide ns (none from the future): the flows' first cache lines (their sequence
// tracker's count, highest sequence and word, their jitter and their latency run) are read as
// eight rows, turned into columns, updated a column at a time and turned back. `mix`: the flows'
// latency runs are kept (a mix's), and those that ended are in `ended`; the histogram `hist`
// gets the buckets and totals. `now48`: the burst's clock, modulo 2^48. False: none was taken,
// and nothing changed. `own`: the mix's bucket table where each flow is a stream of its own (flow
// f is stream f), else null; eight runs ended by eight consecutive flows in one bucket are then
// added to their eight counters, which lie side by side, in the lane, and none is in `ended`
// (unless a counter would reach its 16-bit limit: then all eight are).
bool account_flows8(const RunSigs& sigs, StreamRx* streams, bool mix, LatencyHistogram& hist, uint64_t now48,
                    EndedRunsOf8& ended, const BucketsByStream* own = nullptr);

}  // namespace lr::stats
