// The eight-frame lane (run_lane.h). Each frame is one masked 64-byte load (its 60 bytes, none
// beyond); a lane of a vector register is then a frame, and every check and measurement but the
// histogram's counters and the jitter's recurrence is one instruction for all eight.
#include "stats/run_lane.h"

// GCC 12's AVX-512 intrinsics start some results from a deliberately undefined value, which
// -Wmaybe-uninitialized takes for a bug when they are inlined here.
#if !defined(__clang__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif
#include <immintrin.h>

#include <atomic>

#include "stats/rx_measure.h"
#include "util/avx512.h"

namespace lr::stats {
namespace {

std::atomic<bool> enabled{true};

// The bytes KnownHeaders::match compares, as a mask: 0xff at each of them.
alignas(64) constexpr std::array<uint8_t, 64> kCompared = [] {
    std::array<uint8_t, 64> m{};
    for (uint32_t i = 0; i < 64; ++i) m[i] = packet::kKnownCompared[i] ? 0xff : 0;
    return m;
}();

constexpr uint64_t kMask48 = (uint64_t{1} << 48) - 1;
// s % 0xffff == 0 (s != 0) as one multiply: s times the inverse of 0xffff modulo 2^64 is at
// most (2^64 - 1) / 0xffff exactly for the multiples of 0xffff (packet::detail::folds_to_ffff).
constexpr uint64_t kInverseOfFfff = 0xfffefffefffeffffULL, kMultipleLimit = 0x0001000100010001ULL;
static_assert(kInverseOfFfff * 0xffffULL == 1);
static_assert(UINT64_MAX / 0xffff == kMultipleLimit);

// Each of the eight frames' 60 bytes (none beyond) into f[j]; true when any of them differs
// from the 64 bytes `expected` in a bit the 64 bytes `mask` have set.
LR_AVX512_TARGET inline bool load_and_differ(const uint8_t* const* p, __m512i* f, const uint8_t* expected,
                                               const uint8_t* mask) {
    constexpr __mmask64 kFrameBytes = (__mmask64{1} << packet::KnownHeaders::kMinLen) - 1;
    const __m512i want = _mm512_load_si512(expected);
    __m512i differ = _mm512_setzero_si512();
    for (uint32_t j = 0; j < kRunFrames; ++j) {
        f[j] = _mm512_maskz_loadu_epi8(kFrameBytes, p[j]);
        differ = _mm512_ternarylogic_epi64(differ, f[j], want, 0xf6);  // differ | (f ^ want)
    }
    return _mm512_test_epi64_mask(differ, _mm512_load_si512(mask)) != 0;
}

// The sum of each lane's two 32-bit halves (2^32 is 1 modulo 0xffff).
LR_AVX512_TARGET inline __m512i halves(__m512i c) {
    return _mm512_add_epi64(_mm512_and_si512(c, _mm512_set1_epi64(0xffffffff)), _mm512_srli_epi64(c, 32));
}
// Lanes whose L4 sum (32-bit halves added, below 2^35) is right: a nonzero multiple of 0xffff.
LR_AVX512_TARGET inline __mmask8 sums_right(__m512i sum) {
    return _mm512_test_epi64_mask(sum, sum) &
           _mm512_cmple_epu64_mask(_mm512_mullo_epi64(sum, _mm512_set1_epi64(static_cast<int64_t>(kInverseOfFfff))),
                                   _mm512_set1_epi64(static_cast<int64_t>(kMultipleLimit)));
}

// Each 8-byte lane's bytes reversed (the signature's fields are big-endian).
LR_AVX512_TARGET inline __m512i reversed(__m512i v) {
    const __m512i order = _mm512_set_epi64(0x08090a0b0c0d0e0f, 0x0001020304050607, 0x08090a0b0c0d0e0f,
                                           0x0001020304050607, 0x08090a0b0c0d0e0f, 0x0001020304050607,
                                           0x08090a0b0c0d0e0f, 0x0001020304050607);
    return _mm512_shuffle_epi8(v, order);
}
// From each frame's bytes 40-47 (`w40`) and 48-55 (`w48`): the sequence (bytes 44-49) and the
// timestamp (bytes 50-55).
LR_AVX512_TARGET inline __m512i sequences(__m512i w40, __m512i w48) {
    return _mm512_srli_epi64(reversed(_mm512_or_si512(_mm512_srli_epi64(w40, 32), _mm512_slli_epi64(w48, 32))), 16);
}
LR_AVX512_TARGET inline __m512i timestamps(__m512i w48) {
    return _mm512_and_si512(reversed(w48), _mm512_set1_epi64(kMask48));
}

// Lane k of v.
template <int k>
LR_AVX512_TARGET inline int64_t lane(__m512i v) {
    return _mm_extract_epi64(_mm512_extracti64x2_epi64(v, k / 2), k % 2);
}

// Histogram<kSubBits>::bucket_of for each lane's value below 2^(kMaxExp + 1) (no lane in the
// last bucket's overflow): the shift is the top bit's index less kSubBits.
template <unsigned kSubBits>
LR_AVX512_TARGET inline __m512i buckets_of(__m512i v) {
    const __m512i zeros = _mm512_lzcnt_epi64(_mm512_or_si512(v, _mm512_set1_epi64(1 << kSubBits)));
    const __m512i shift = _mm512_sub_epi64(_mm512_set1_epi64(63 - kSubBits), zeros);
    return _mm512_add_epi64(_mm512_slli_epi64(shift, kSubBits), _mm512_srlv_epi64(v, shift));
}

// Eight latencies `lat` into the receiver's histogram: their buckets `bucket`, then their totals
// once. Frames stamped in one sending burst and received in one have equal latencies: eight
// equal ones are one add of 8 to their bucket and totals known without reducing the lanes, and
// eight in one bucket one add of 8 (added one by one, each add waited for the one before
// through memory).
LR_AVX512_TARGET inline void add_eight(LatencyHistogram& hist, __m512i bucket, __m512i lat) {
    const __m512i first = _mm512_setzero_si512();  // lane 0, broadcast
    const auto first_bucket = static_cast<unsigned>(lane<0>(bucket));
    if (_mm512_cmpeq_epi64_mask(lat, _mm512_permutexvar_epi64(first, lat)) == 0xff) {
        const auto l = static_cast<uint64_t>(lane<0>(lat));
        hist.add_to_bucket(first_bucket, kRunFrames);
        hist.add(LatencyHistogram::Totals{kRunFrames, kRunFrames * l, l, l});
        return;
    }
    if (_mm512_cmpeq_epi64_mask(bucket, _mm512_permutexvar_epi64(first, bucket)) == 0xff) {
        hist.add_to_bucket(first_bucket, kRunFrames);
    } else {
        alignas(64) uint64_t buckets[kRunFrames];
        _mm512_store_si512(buckets, bucket);
        for (uint32_t j = 0; j < kRunFrames; ++j) hist.add_to_bucket(static_cast<unsigned>(buckets[j]), 1);
    }
    LatencyHistogram::Totals t;
    t.count = kRunFrames;
    t.sum = static_cast<uint64_t>(_mm512_reduce_add_epi64(lat));
    t.min = _mm512_reduce_min_epu64(lat);
    t.max = _mm512_reduce_max_epu64(lat);
    hist.add(t);
}

}  // namespace

bool run_lane_supported() { return util::cpu_has_avx512(); }
bool run_lane_enabled() { return enabled.load(std::memory_order_relaxed) && run_lane_supported(); }
void set_run_lane_enabled(bool on) { enabled.store(on, std::memory_order_relaxed); }

LR_AVX512_TARGET bool account_run8(const uint8_t* const* p, unsigned verified, const packet::KnownHeaders::Run& entry,
                                     StreamRx& st, LatencyHistogram& hist, uint64_t now48) {
    static_assert(kRunFrames == 8, "a frame a 64-bit lane");
    static_assert(packet::KnownHeaders::kMinLen == 60 && LR_UDP_SEQ == 2 && LR_UDP_TS == 8,
                  "the sequence is bytes 44-49, the timestamp 50-55");
    if (!st.seq.started() || !st.jitter.started()) return false;  // a stream's first frames: one by one
    __m512i f[kRunFrames];
    if (load_and_differ(p, f, entry.bytes, kCompared.data())) return false;
    // Each frame's bytes 40-47 and 48-55 (8-byte words 5 and 6), a frame a lane.
    const __m512i pair = _mm512_set_epi64(0, 0, 0, 0, 14, 13, 6, 5);
    const __m512i p01 = _mm512_permutex2var_epi64(f[0], pair, f[1]), p23 = _mm512_permutex2var_epi64(f[2], pair, f[3]);
    const __m512i p45 = _mm512_permutex2var_epi64(f[4], pair, f[5]), p67 = _mm512_permutex2var_epi64(f[6], pair, f[7]);
    const __m512i first_halves = _mm512_set_epi64(11, 10, 9, 8, 3, 2, 1, 0);
    const __m512i q0 = _mm512_permutex2var_epi64(p01, first_halves, p23), q1 = _mm512_permutex2var_epi64(p45, first_halves, p67);
    const __m512i w40 = _mm512_permutex2var_epi64(q0, _mm512_set_epi64(14, 12, 10, 8, 6, 4, 2, 0), q1);
    const __m512i w48 = _mm512_permutex2var_epi64(q0, _mm512_set_epi64(15, 13, 11, 9, 7, 5, 3, 1), q1);
    // The UDP checksum present (bytes 40-41), and the L4 sum (the entry's, with bytes 40-55 in
    // 32-bit halves) a multiple of 0xffff and not 0, unless the device checked it.
    if (_mm512_test_epi64_mask(w40, _mm512_set1_epi64(0xffff)) != 0xff) return false;
    const __m512i sum =
        _mm512_add_epi64(_mm512_set1_epi64(static_cast<int64_t>(entry.sum)), _mm512_add_epi64(halves(w40), halves(w48)));
    if ((sums_right(sum) | verified) != 0xff) return false;
    const __m512i mask48 = _mm512_set1_epi64(kMask48);
    // The sequences: the stream's next eight, in order (modulo 2^48).
    const __m512i seq = sequences(w40, w48);
    const __m512i expected =
        _mm512_add_epi64(_mm512_set1_epi64(static_cast<int64_t>(st.seq.next())), _mm512_set_epi64(7, 6, 5, 4, 3, 2, 1, 0));
    if (_mm512_test_epi64_mask(_mm512_xor_si512(seq, expected), mask48)) return false;
    // The latencies (the timestamps are bytes 50-55), none beyond the histogram's range (2^41
    // ns), which leaves out those from the future too (a wrap: 2^47 or more).
    const __m512i ts = timestamps(w48);
    const __m512i lat = _mm512_and_si512(_mm512_sub_epi64(_mm512_set1_epi64(static_cast<int64_t>(now48)), ts), mask48);
    using H = LatencyHistogram;
    static_assert(H::kMaxExp < 47);
    if (_mm512_cmpge_epu64_mask(lat, _mm512_set1_epi64(int64_t{1} << (H::kMaxExp + 1)))) return false;
    const __m512i bucket = buckets_of<H::kSubBits>(lat);
    // RFC 3550's differences of successive transits, the stream's last one first.
    const int64_t last_before = st.jitter.last();
    const __m512i before = _mm512_alignr_epi64(lat, _mm512_set1_epi64(last_before), 7);
    const __m512i scaled = _mm512_slli_epi64(_mm512_abs_epi64(_mm512_sub_epi64(lat, before)), 12);
    static_assert(Jitter::kScale == 1 << 12);
    // All eight are taken.
    add_eight(hist, bucket, lat);
    // The differences straight from the register: stored and loaded back, the first of them
    // waited for the wide store, and the jitter's recurrence (one frame after another, and on
    // from one eight to the next) with it.
    const int64_t diffs[kRunFrames] = {lane<0>(scaled), lane<1>(scaled), lane<2>(scaled), lane<3>(scaled),
                                       lane<4>(scaled), lane<5>(scaled), lane<6>(scaled), lane<7>(scaled)};
    st.jitter.add_scaled(diffs, kRunFrames, lane<7>(lat));
    st.seq.next_in_order(kRunFrames);
    return true;
}

RunHeader run_header(uint32_t nonce) {
    RunHeader h;
    auto set = [&h](uint32_t at, uint8_t value, uint8_t mask = 0xff) {
        h.value[at] = value;
        h.mask[at] = mask;
    };
    set(12, 0x08);
    set(13, 0x00);
    set(14, 0x45);
    set(16, 0);  // total length: 20 + 8 + 18 = 46
    set(17, 46);
    set(18, static_cast<uint8_t>(nonce >> 24));  // the run identity's high half, the IPv4 id
    set(19, static_cast<uint8_t>(nonce >> 16));
    set(20, 0, 0x3f);  // no fragment offset and no more-fragments flag
    set(21, 0);
    set(23, 17);  // UDP
    set(38, 0);  // UDP length 26
    set(39, 26);
    set(42, static_cast<uint8_t>(LR_SIG_MAGIC >> 8));
    set(43, static_cast<uint8_t>(LR_SIG_MAGIC & 0xff));
    set(56, static_cast<uint8_t>(nonce >> 8));  // the run identity's low half
    set(57, static_cast<uint8_t>(nonce));
    return h;
}

namespace {

// Eight rows of eight 8-byte words (eight frames, or eight flows' first cache lines) as eight
// columns: lane j of c[k] is row j's word k. Its own inverse.
LR_AVX512_TARGET inline void transpose8(const __m512i* r, __m512i* c) {
    __m512i t[8];
    for (int j = 0; j < 8; j += 2) {
        t[j] = _mm512_unpacklo_epi64(r[j], r[j + 1]);      // words 0, 2, 4, 6 of rows j and j + 1
        t[j + 1] = _mm512_unpackhi_epi64(r[j], r[j + 1]);  // words 1, 3, 5, 7
    }
    // Rows 0-3, then 4-7: words 0 and 4 (u[0]), 2 and 6 (u[1]), 1 and 5 (u[2]), 3 and 7 (u[3]).
    __m512i u[8];
    for (int h = 0; h < 2; ++h) {
        u[4 * h + 0] = _mm512_shuffle_i64x2(t[4 * h], t[4 * h + 2], 0x88);
        u[4 * h + 1] = _mm512_shuffle_i64x2(t[4 * h], t[4 * h + 2], 0xdd);
        u[4 * h + 2] = _mm512_shuffle_i64x2(t[4 * h + 1], t[4 * h + 3], 0x88);
        u[4 * h + 3] = _mm512_shuffle_i64x2(t[4 * h + 1], t[4 * h + 3], 0xdd);
    }
    for (int k = 0; k < 4; ++k) {  // words k (the lower halves) and k + 4 (the upper)
        static constexpr int kFrom[4] = {0, 2, 1, 3};
        c[k] = _mm512_shuffle_i64x2(u[kFrom[k]], u[kFrom[k] + 4], 0x88);
        c[k + 4] = _mm512_shuffle_i64x2(u[kFrom[k]], u[kFrom[k] + 4], 0xdd);
    }
}

// Eight runs that ended (every lane's: `same` none) of flows `id`, in buckets `bucket`, of
// `count` frames, into their counters, where each flow is a stream of its own, the eight flows
// are consecutive, the eight runs are in one bucket, and no counter reaches 65,535: their eight
// counters lie side by side, one load, add and store. False: nothing was added. (Taking eights
// where only some runs ended too, adding 0 for the others, was slower on the net_ring pair.)
LR_AVX512_TARGET inline bool end_side_by_side(const BucketsByStream* own, __m512i id, __m512i bucket, __m512i count,
                                              __mmask8 same) {
    if (!own || same) return false;
    const __m512i first = _mm512_setzero_si512();  // lane 0, broadcast
    const __m512i consecutive = _mm512_add_epi64(_mm512_permutexvar_epi64(first, id), _mm512_set_epi64(7, 6, 5, 4, 3, 2, 1, 0));
    if (_mm512_cmpeq_epi64_mask(id, consecutive) != 0xff ||
        _mm512_cmpeq_epi64_mask(bucket, _mm512_permutexvar_epi64(first, bucket)) != 0xff ||
        _mm512_cmpge_epu64_mask(count, _mm512_set1_epi64(0xffff)))
        return false;
    BucketsByStream::Counter* const at =
        own->counter(static_cast<unsigned>(lane<0>(bucket)), static_cast<uint32_t>(lane<0>(id)));
    const __m128i before = _mm_loadu_si128(reinterpret_cast<const __m128i*>(at));
    const __m128i sum = _mm_add_epi16(before, _mm512_cvtepi64_epi16(count));
    // A counter that would reach 65,535 (or wrap) goes to BucketsByStream::add, which spills.
    if (_mm_cmplt_epu16_mask(sum, before) | _mm_cmpeq_epi16_mask(sum, _mm_set1_epi16(-1))) return false;
    _mm_storeu_si128(reinterpret_cast<__m128i*>(at), sum);
    return true;
}

}  // namespace

LR_AVX512_TARGET bool classify_run8(const uint8_t* const* p, unsigned verified, const RunHeader& header,
                                      uint32_t streams, RunSigs& out) {
    __m512i f[kRunFrames];
    if (load_and_differ(p, f, header.value, header.mask)) return false;
    __m512i c[8];  // the frames' 8-byte words (words 0-2 are not used, and never computed)
    transpose8(f, c);
    // The UDP checksum present (bytes 40-41); the stream id (bytes 58-59) one of the run's.
    if (_mm512_test_epi64_mask(c[5], _mm512_set1_epi64(0xffff)) != 0xff) return false;
    const __m512i id = _mm512_and_si512(_mm512_srli_epi64(c[7], 16), _mm512_set1_epi64(0xffff));
    const __m512i stream = _mm512_or_si512(_mm512_and_si512(_mm512_slli_epi64(id, 8), _mm512_set1_epi64(0xff00)),
                                           _mm512_srli_epi64(id, 8));
    if (_mm512_cmpge_epu64_mask(stream, _mm512_set1_epi64(streams))) return false;
    // The L4 sum: the pseudo-header (the addresses, bytes 26-33; UDP and the L4 length 26, as
    // words in memory order) and the L4 bytes 34-59, a multiple of 0xffff and not 0.
    constexpr int64_t kPseudo = 0x1100 + 0x1a00;
    const __m512i sum = _mm512_add_epi64(
        _mm512_add_epi64(_mm512_add_epi64(halves(_mm512_andnot_si512(_mm512_set1_epi64(0xffff), c[3])), halves(c[4])),
                         _mm512_add_epi64(halves(c[5]), halves(c[6]))),
        _mm512_add_epi64(halves(c[7]), _mm512_set1_epi64(kPseudo)));
    if ((sums_right(sum) | verified) != 0xff) return false;
    _mm512_store_si512(out.seq, sequences(c[5], c[6]));
    _mm512_store_si512(out.ts, timestamps(c[6]));
    _mm512_store_si512(out.stream, stream);
    return true;
}

LR_AVX512_TARGET bool account_flows8(const RunSigs& sigs, StreamRx* streams, bool mix, LatencyHistogram& hist,
                                       uint64_t now48, EndedRunsOf8& ended, const BucketsByStream* own) {
    // A flow's first cache line, a word a column: the jitter (J scaled, the last transit), the
    // latency run (its sum, extremes and run), the sequence tracker's hot bytes.
    enum Column { kJitter, kLastTransit, kLatencySum, kLatencyExtremes, kLatencyRun, kReceived, kHighest, kWord };
    static_assert(Jitter::fields_in_order() && SeqTracker::hot_bytes_in_order());
    static_assert(offsetof(StreamRx, jitter) == kJitter * 8 && offsetof(StreamRx, latency) == kLatencySum * 8 &&
                  offsetof(StreamRx, seq) == kReceived * 8);
    static_assert(offsetof(LatencyRun, sum) == 0 && offsetof(LatencyRun, min) == 8 && offsetof(LatencyRun, max) == 12 &&
                  offsetof(LatencyRun, run) == 16);
    static_assert(sizeof(LatencyRun::min) == 4 && sizeof(LatencyRun::max) == 4);
    const __m512i id = _mm512_load_si512(sigs.stream);
    if (_mm512_test_epi64_mask(_mm512_conflict_epi64(id), _mm512_conflict_epi64(id))) return false;  // a flow twice
    const __m512i mask48 = _mm512_set1_epi64(kMask48);
    const __m512i lat =
        _mm512_and_si512(_mm512_sub_epi64(_mm512_set1_epi64(static_cast<int64_t>(now48)), _mm512_load_si512(sigs.ts)), mask48);
    // Below kWide ns: within both histograms' range and a LatencyRun's 32-bit extremes, and
    // not from the future (2^47 ns or more).
    if (_mm512_cmpge_epu64_mask(lat, _mm512_set1_epi64(LatencyRun::kWide))) return false;
    StreamRx* st[kRunFrames];
    __m512i row[kRunFrames], c[kRunFrames];
    for (uint32_t j = 0; j < kRunFrames; ++j) {
        st[j] = &streams[sigs.stream[j]];
        row[j] = _mm512_load_si512(st[j]);
    }
    transpose8(row, c);
    // Each flow started, each frame its flow's next sequence (modulo 2^48).
    const __m512i next = _mm512_add_epi64(c[kHighest], _mm512_set1_epi64(1));
    const __m512i zero = _mm512_setzero_si512();
    if (_mm512_cmpeq_epi64_mask(c[kReceived], zero) ||
        _mm512_cmpeq_epi64_mask(c[kLastTransit], _mm512_set1_epi64(Jitter::kNoTransit)) ||
        _mm512_test_epi64_mask(_mm512_xor_si512(next, _mm512_load_si512(sigs.seq)), mask48))
        return false;
    // Taken. The sequence window: the next bit of the highest's word, or a new word.
    const __m512i bit = _mm512_and_si512(next, _mm512_set1_epi64(63));
    const __mmask8 new_word = _mm512_cmpeq_epi64_mask(bit, zero);
    alignas(64) uint64_t words_before[kRunFrames];
    if (new_word) [[unlikely]]
        _mm512_store_si512(words_before, c[kWord]);
    c[kWord] = _mm512_or_si512(_mm512_maskz_mov_epi64(static_cast<__mmask8>(~new_word), c[kWord]),
                               _mm512_sllv_epi64(_mm512_set1_epi64(1), bit));
    c[kHighest] = next;
    c[kReceived] = _mm512_add_epi64(c[kReceived], _mm512_set1_epi64(1));
    // RFC 3550's jitter, as Jitter::add_transit.
    const __m512i scaled = _mm512_slli_epi64(_mm512_abs_epi64(_mm512_sub_epi64(lat, c[kLastTransit])), 12);
    static_assert(Jitter::kScale == 1 << 12);
    c[kJitter] = _mm512_add_epi64(c[kJitter], _mm512_srai_epi64(_mm512_sub_epi64(scaled, c[kJitter]), 4));
    c[kLastTransit] = lat;
    // The receiver's buckets (below kWide, no value is beyond the last bucket).
    using H = LatencyHistogram;
    static_assert(uint64_t{LatencyRun::kWide} < uint64_t{1} << (H::kMaxExp + 1));
    const __m512i fine_bucket = buckets_of<H::kSubBits>(lat);
    if (mix) {
        // LatencyRun::add: the sum, the extremes (32 bits each), and the run of one bucket of
        // the stream's histogram, which ends where a latency falls in another.
        const __m512i b = buckets_of<StreamLatency::kSubBits>(lat);
        c[kLatencySum] = _mm512_add_epi64(c[kLatencySum], lat);
        const __m512i low32 = _mm512_set1_epi64(0xffffffff);
        const __m512i lo = _mm512_min_epu64(_mm512_and_si512(c[kLatencyExtremes], low32), lat);
        const __m512i hi = _mm512_max_epu64(_mm512_srli_epi64(c[kLatencyExtremes], 32), lat);
        c[kLatencyExtremes] = _mm512_or_si512(lo, _mm512_slli_epi64(hi, 32));
        const __m512i run = c[kLatencyRun];
        const __m512i run_bucket = _mm512_and_si512(run, _mm512_set1_epi64(LatencyRun::kBucketMask));
        const __mmask8 same = _mm512_cmpeq_epi64_mask(run_bucket, b);
        const __m512i count = _mm512_srli_epi64(run, LatencyRun::kBucketBits);
        if (!end_side_by_side(own, id, run_bucket, count, same)) {
            ended.mask = static_cast<__mmask8>(~same);
            _mm512_store_si512(ended.bucket, run_bucket);
            _mm512_store_si512(ended.count, count);
        } else {
            ended.mask = 0;
        }
        const __m512i one = _mm512_set1_epi64(LatencyRun::kOne);
        c[kLatencyRun] = _mm512_mask_blend_epi64(same, _mm512_or_si512(b, one), _mm512_add_epi64(run, one));
    } else {
        ended.mask = 0;
    }
    transpose8(c, row);
    for (uint32_t j = 0; j < kRunFrames; ++j) _mm512_store_si512(st[j], row[j]);
    for (unsigned m = new_word; m; m &= m - 1) {
        const unsigned j = static_cast<unsigned>(__builtin_ctz(m));
        st[j]->seq.keep_word_left(words_before[j]);
    }
    add_eight(hist, fine_bucket, lat);
    return true;
}

}  // namespace lr::stats

#if !defined(__clang__)
#pragma GCC diagnostic pop
#endif
