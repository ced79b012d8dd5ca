#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <set>

#include "stats/latency.h"
#include "stats/seq_tracker.h"

using lr::stats::Jitter;
using lr::stats::LatencyHistogram;
using lr::stats::SeqTracker;

TEST(SeqTracker, InOrderNoLoss) {
    SeqTracker t;
    for (uint64_t s = 0; s < 10000; ++s) t.add(s);
    EXPECT_EQ(t.counts().received, 10000u);
    EXPECT_EQ(t.gaps(), 0u);
    EXPECT_EQ(t.counts().reordered, 0u);
    EXPECT_EQ(t.counts().duplicates, 0u);
}

TEST(SeqTracker, GapsAreLoss) {
    SeqTracker t;
    for (uint64_t s = 0; s < 1000; ++s)
        if (s % 10 != 3) t.add(s);
    EXPECT_EQ(t.counts().received, 900u);
    EXPECT_EQ(t.gaps(), 100u);
    SeqTracker first_lost;
    for (uint64_t s = 5; s < 10; ++s) first_lost.add(s);  // 0..4 never came
    EXPECT_EQ(first_lost.gaps(), 5u);
}

TEST(SeqTracker, AddSaysWhatArrived) {
    using A = SeqTracker::Arrival;
    SeqTracker t;
    EXPECT_EQ(t.add(0), A::in_order);
    EXPECT_EQ(t.add(2), A::in_order);
    EXPECT_EQ(t.add(1), A::reordered);
    EXPECT_EQ(t.add(1), A::duplicate);
    EXPECT_EQ(t.add(2 + SeqTracker::kWindow + 5), A::in_order);
    EXPECT_EQ(t.add(3), A::late);
}

// The window lies apart from the tracker: a copy (or an assignment) has a window of its own,
// with what the original had seen, and a moved tracker keeps it.
TEST(SeqTracker, ACopyHasAWindowOfItsOwn) {
    using A = SeqTracker::Arrival;
    SeqTracker a;
    for (uint64_t s = 0; s < 200; s += 2) a.add(s);  // the odd ones missing, across several words
    SeqTracker b = a;
    EXPECT_EQ(b.add(101), A::reordered);
    EXPECT_EQ(b.add(100), A::duplicate);
    EXPECT_EQ(a.add(101), A::reordered) << "the copy's arrival must not be in the original's window";
    SeqTracker c;
    c = b;
    EXPECT_EQ(c.add(101), A::duplicate);
    EXPECT_EQ(c.add(103), A::reordered);
    EXPECT_EQ(b.add(103), A::reordered) << "the assigned tracker's arrival must not be in its source's window";
    const SeqTracker moved = std::move(c);
    EXPECT_EQ(moved.counts().received, 102u);
    EXPECT_EQ(moved.counts().reordered, 2u);
    EXPECT_EQ(moved.counts().duplicates, 2u);
}

TEST(SeqTracker, SwappedPairsAreReorderedNotLost) {
    SeqTracker t;
    for (uint64_t s = 0; s < 1000; s += 2) {
        t.add(s + 1);
        t.add(s);
    }
    EXPECT_EQ(t.counts().received, 1000u);
    EXPECT_EQ(t.counts().reordered, 500u);
    EXPECT_EQ(t.gaps(), 0u);
    EXPECT_EQ(t.counts().duplicates, 0u);
}

TEST(SeqTracker, DuplicatesCountedOnce) {
    SeqTracker t;
    for (uint64_t s = 0; s < 100; ++s) {
        t.add(s);
        if (s % 25 == 0) t.add(s);
    }
    t.add(50);  // an old one again, inside the window
    EXPECT_EQ(t.counts().received, 100u);
    EXPECT_EQ(t.counts().duplicates, 5u);
    EXPECT_EQ(t.gaps(), 0u);
}

TEST(SeqTracker, LateArrivalsBeyondTheWindowAreCountedApart) {
    SeqTracker t;
    for (uint64_t s = 1; s < 2 * SeqTracker::kWindow; ++s) t.add(s);
    t.add(0);  // far too late
    EXPECT_EQ(t.counts().late, 1u);
    EXPECT_EQ(t.counts().received, 2 * SeqTracker::kWindow - 1);
    EXPECT_EQ(t.gaps(), 0u);  // late is not loss
}

TEST(SeqTracker, WireSequencesWrapInto64Bits) {
    for (unsigned bits : {32u, 48u}) {
        SeqTracker t;
        const uint64_t mod = uint64_t(1) << bits;
        const uint64_t start = mod - 500;
        for (uint64_t s = start; s < start + 1000; ++s) t.add(t.extend(s & (mod - 1), bits));
        EXPECT_EQ(t.counts().received, 1000u) << bits;
        EXPECT_EQ(t.counts().highest, start + 999) << bits;
        EXPECT_EQ(t.counts().duplicates, 0u);
        // A reordered packet from just before the wrap still maps below the highest.
        EXPECT_EQ(t.extend((mod - 1) & (mod - 1), bits), mod - 1);
    }
}

TEST(SeqTracker, RandomScheduleMatchesReference) {
    std::mt19937 rng(5);
    std::vector<uint64_t> order;
    for (uint64_t s = 0; s < 20000; ++s)
        if (rng() % 50) order.push_back(s);  // ~2 % loss
    for (size_t i = 0; i + 1 < order.size(); ++i)
        if (rng() % 20 == 0) std::swap(order[i], order[i + 1]);  // local reordering
    SeqTracker t;
    for (auto s : order) t.add(s);
    const uint64_t highest = *std::max_element(order.begin(), order.end());
    EXPECT_EQ(t.counts().received, order.size());
    EXPECT_EQ(t.gaps(), highest + 1 - order.size());
    EXPECT_EQ(t.counts().duplicates, 0u);
}

// Every arrival through the receive path's call (arrive: a wire value of 16, 32 or 48 bits)
// against a plain model with a set of every sequence seen: loss, jumps shorter and longer than
// the ring, local and distant reordering, arrivals below the window, duplicates near and far,
// across many 64-sequence words of the window.
TEST(SeqTracker, ArrivalsMatchAModelThroughWireWrapsAndWordBoundaries) {
    for (const unsigned bits : {16u, 32u, 48u}) {
        std::mt19937_64 rng(bits);
        std::vector<uint64_t> order;
        for (uint64_t s = 0; s < 200000; ++s) {
            if (rng() % 5000 == 0) s += 4000 + rng() % 9000;  // a jump, some past the whole ring
            if (rng() % 40 == 0) continue;  // lost
            order.push_back(s);
            if (rng() % 300 == 0) order.push_back(s);                                   // at once again
            if (rng() % 500 == 0 && s > 100) order.push_back(s - 1 - rng() % 100);      // again, later
            if (rng() % 2000 == 0 && s > 9000) order.push_back(s - 4000 - rng() % 5000);  // near or past the window
        }
        for (size_t i = 0; i + 70 < order.size(); ++i) {
            if (rng() % 30 == 0) std::swap(order[i], order[i + 1]);
            if (rng() % 400 == 0) std::swap(order[i], order[i + 1 + rng() % 69]);  // across a word
        }
        SeqTracker t;
        std::set<uint64_t> seen;
        uint64_t highest = 0, received = 0, reordered = 0, duplicates = 0, late = 0;
        bool any = false;
        for (size_t i = 0; i < order.size(); ++i) {
            const uint64_t s = order[i];
            SeqTracker::Arrival want;
            uint64_t skipped = 0;
            if (!any || s > highest) {
                want = SeqTracker::Arrival::in_order;
                skipped = any ? s - highest - 1 : s;
                highest = s;
                any = true;
            } else if (highest - s >= SeqTracker::kWindow) {
                want = SeqTracker::Arrival::late;
            } else if (seen.count(s)) {
                want = SeqTracker::Arrival::duplicate;
            } else {
                want = SeqTracker::Arrival::reordered;
            }
            if (want == SeqTracker::Arrival::in_order || want == SeqTracker::Arrival::reordered) {
                seen.insert(s);
                ++received;
            }
            reordered += want == SeqTracker::Arrival::reordered;
            duplicates += want == SeqTracker::Arrival::duplicate;
            late += want == SeqTracker::Arrival::late;
            const auto a = t.arrive(s & ((uint64_t(1) << bits) - 1), bits);
            ASSERT_EQ(a.kind, want) << "bits " << bits << ", arrival " << i << ", sequence " << s;
            ASSERT_EQ(a.skipped, skipped) << "bits " << bits << ", arrival " << i << ", sequence " << s;
        }
        EXPECT_EQ(t.counts().received, received);
        EXPECT_EQ(t.counts().reordered, reordered);
        EXPECT_EQ(t.counts().duplicates, duplicates);
        EXPECT_EQ(t.counts().late, late);
        EXPECT_EQ(t.counts().highest, highest);
        EXPECT_EQ(t.gaps(), highest + 1 - received - late);
        EXPECT_GT(duplicates, 200u);
        EXPECT_GT(late, 10u);
        EXPECT_GT(reordered, 1000u);
    }
}

// A jump that reuses ring words from a lap ago (4096-8191 sequences) or passes the whole ring
// (8192 or more), from the middle or the last sequence of a word, then arrivals just below the
// new highest: reordered once, a duplicate after.
TEST(SeqTracker, AfterAJumpBelowTheHighestIsReorderedThenDuplicate) {
    for (const uint64_t from : {100u, 127u}) {
        for (const uint64_t jump : {4100u, 8150u, 8200u, 20000u}) {
            SeqTracker t;
            for (uint64_t s = 0; s <= from; ++s) ASSERT_EQ(t.add(s), SeqTracker::Arrival::in_order);
            const uint64_t top = from + jump;
            ASSERT_EQ(t.add(top), SeqTracker::Arrival::in_order);
            for (const uint64_t back : {1u, 63u, 64u, 65u, 4095u}) {
                EXPECT_EQ(t.add(top - back), SeqTracker::Arrival::reordered) << from << "+" << jump << "-" << back;
                EXPECT_EQ(t.add(top - back), SeqTracker::Arrival::duplicate) << from << "+" << jump << "-" << back;
            }
            EXPECT_EQ(t.add(top), SeqTracker::Arrival::duplicate);
            EXPECT_EQ(t.add(top - 4096), SeqTracker::Arrival::late);
            EXPECT_EQ(t.add(top + 1), SeqTracker::Arrival::in_order);
            EXPECT_EQ(t.counts().reordered, 5u);
            EXPECT_EQ(t.counts().duplicates, 6u);
            EXPECT_EQ(t.gaps(), top + 2 - t.counts().received - 1);
        }
    }
}

TEST(Histogram, BucketsCoverTheRangeMonotonically) {
    for (unsigned b = 1; b < LatencyHistogram::kBuckets; ++b)
        ASSERT_EQ(LatencyHistogram::bucket_low(b), LatencyHistogram::bucket_high(b - 1)) << b;
    for (uint64_t v : {0ull, 1ull, 127ull, 128ull, 129ull, 1000ull, 123456789ull, (1ull << 40) - 1}) {
        const unsigned b = LatencyHistogram::bucket_of(v);
        EXPECT_LE(LatencyHistogram::bucket_low(b), v);
        EXPECT_GT(LatencyHistogram::bucket_high(b), v);
    }
}

// Every bucket's first and last value map to it, and nothing beyond the range escapes the
// last bucket: the bucket formula against bucket_low/bucket_high, for both precisions.
template <class H>
void expect_every_bucket_maps_back() {
    for (unsigned b = 0; b + 1 < H::kBuckets; ++b) {
        ASSERT_EQ(H::bucket_of(H::bucket_low(b)), b) << b;
        ASSERT_EQ(H::bucket_of(H::bucket_high(b) - 1), b) << b;
    }
    EXPECT_EQ(H::bucket_of(uint64_t(1) << (H::kMaxExp + 1)), H::kBuckets - 1);
    EXPECT_EQ(H::bucket_of(UINT64_MAX), H::kBuckets - 1);
    EXPECT_EQ(H::bucket_of((uint64_t(1) << (H::kMaxExp + 1)) - 1), H::kBuckets - 1);
    EXPECT_EQ(H::bucket_of(uint64_t(1) << H::kMaxExp), H::kBuckets - H::kSub);
}

TEST(Histogram, EveryBucketsBoundsMapBackToIt) {
    expect_every_bucket_maps_back<LatencyHistogram>();
    expect_every_bucket_maps_back<lr::stats::StreamLatency>();
}

// A mix's stream bucket is derived from the receiver's finer bucket (one bit-scan a frame, not
// two): the same as the stream histogram's own formula for every value, at every bucket edge of
// both, in the exact ranges, and beyond the last bucket.
TEST(Histogram, StreamBucketFromTheFinerBucketIsItsOwn) {
    using lr::stats::StreamLatency;
    auto expect_same = [](uint64_t v) {
        const unsigned fine = LatencyHistogram::bucket_of(v);
        ASSERT_EQ(StreamLatency::bucket_from_finer<LatencyHistogram::kSubBits>(fine, v), StreamLatency::bucket_of(v)) << v;
    };
    for (uint64_t v = 0; v < (1u << 16); ++v) expect_same(v);
    for (unsigned b = 0; b < LatencyHistogram::kBuckets; ++b) {
        expect_same(LatencyHistogram::bucket_low(b));
        expect_same(LatencyHistogram::bucket_high(b) - 1);
    }
    for (unsigned b = 0; b < StreamLatency::kBuckets; ++b) {
        expect_same(StreamLatency::bucket_low(b));
        expect_same(StreamLatency::bucket_high(b) - 1);
    }
    std::mt19937_64 rng(17);
    for (int i = 0; i < 100000; ++i) expect_same(rng() >> (rng() % 64));
    expect_same(UINT64_MAX);
    expect_same(uint64_t(1) << (LatencyHistogram::kMaxExp + 1));
}

TEST(Histogram, PercentilesWithinRelativeErrorBound) {
    std::mt19937_64 rng(9);
    std::vector<uint64_t> v;
    LatencyHistogram h;
    for (int i = 0; i < 100000; ++i) {
        const uint64_t x = 1000 + (rng() % 10'000'000) * (rng() % 4 == 0 ? 10 : 1);
        v.push_back(x);
        h.add(x);
    }
    std::sort(v.begin(), v.end());
    for (double q : {0.0, 0.5, 0.9, 0.99, 0.999, 1.0}) {
        const size_t idx = q >= 1.0 ? v.size() - 1 : static_cast<size_t>(std::ceil(q * v.size())) - (q > 0 ? 1 : 0);
        const double exact = static_cast<double>(v[idx]);
        const double got = static_cast<double>(h.percentile(q));
        EXPECT_LE(std::abs(got - exact) / exact, 1.0 / LatencyHistogram::kSub + 1e-9) << q;
    }
    EXPECT_EQ(h.min(), v.front());
    EXPECT_EQ(h.max(), v.back());
    EXPECT_EQ(h.count(), v.size());
}

TEST(Histogram, MergeEqualsAddingEverything) {
    LatencyHistogram a, b, all;
    for (uint64_t i = 1; i < 5000; ++i) {
        (i % 2 ? a : b).add(i * 37);
        all.add(i * 37);
    }
    a.merge(b);
    EXPECT_EQ(a.count(), all.count());
    EXPECT_DOUBLE_EQ(a.mean(), all.mean());
    for (double q : {0.1, 0.5, 0.99}) EXPECT_EQ(a.percentile(q), all.percentile(q));
    EXPECT_EQ(a.min(), all.min());
    EXPECT_EQ(a.max(), all.max());
}

TEST(Jitter, Rfc3550OnAKnownSeries) {
    // Transit times 10, 12, 9, 9, 15 (ns): D = 2, 3, 0, 6.
    const uint64_t tx[] = {0, 100, 200, 300, 400};
    const uint64_t transit[] = {10, 12, 9, 9, 15};
    Jitter j;
    double ref = 0;
    int64_t last = 0;
    for (int i = 0; i < 5; ++i) {
        j.add(tx[i], tx[i] + transit[i]);
        if (i) ref += (std::abs(static_cast<double>(static_cast<int64_t>(transit[i]) - last)) - ref) / 16.0;
        last = static_cast<int64_t>(transit[i]);
    }
    EXPECT_NEAR(j.ns(), ref, 1.0 / 256);  // kept in units of 2^-12 ns: within 2^-8 ns
    EXPECT_NEAR(ref, ((2.0 / 16) * 15 / 16 + 3.0 / 16) * 15 / 16 * 15 / 16 + 6.0 / 16 - 0, 1.0);  // sanity
    Jitter constant;
    for (uint64_t i = 0; i < 100; ++i) constant.add(i * 1000, i * 1000 + 500);
    EXPECT_EQ(constant.ns(), 0.0);
}
