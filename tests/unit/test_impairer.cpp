// linerate impair's impairer on its own, on a clock the test moves: delays, jitter and its
// distributions, loss (Bernoulli and Gilbert-Elliott) and its reproducibility from the seed,
// duplicates, reordering as an in-order receiver counts it, corruption, the link's rate, the
// limit, and counts that always add up.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <map>
#include <vector>

#include "packet/frame.h"
#include "spec/choices.h"
#include "worker/impairer.h"

using namespace lr;
using worker::ImpairPlan;
using worker::Impairer;

namespace {

constexpr uint64_t kUs = 1000, kMs = 1'000'000;

// A 128-byte IPv4/UDP frame carrying its number at the start of the payload.
struct Frames {
    std::vector<uint8_t> base;
    unsigned payload = 0;
    Frames() {
        packet::FrameSpec f;
        f.frame_size = 128;
        f.src_ip = packet::parse_ip("198.18.0.1", "src");
        f.dst_ip = packet::parse_ip("198.18.0.2", "dst");
        base = packet::build_frame(f);
        payload = packet::payload_offset(f);
    }
    std::vector<uint8_t> numbered(uint32_t n) const {
        auto f = base;
        std::memcpy(f.data() + payload, &n, sizeof n);
        return f;
    }
    uint32_t number(const uint8_t* f) const {
        uint32_t n = 0;
        std::memcpy(&n, f + payload, sizeof n);
        return n;
    }
};

struct Departure {
    uint32_t number;
    uint64_t at;
    std::vector<uint8_t> bytes;
};

// `n` frames arriving `gap` apart from t = 0, the clock stepping `step` at a time until all
// are out (or `until`); every departure, in order.
std::vector<Departure> run(Impairer& imp, uint32_t n, uint64_t gap, uint64_t step = kUs, uint64_t until = 0) {
    const Frames fr;
    std::vector<Departure> out;
    uint32_t next = 0;
    const uint64_t end = until ? until : n * gap + imp.plan().horizon_ns() + 10 * kMs;
    for (uint64_t t = 0; t <= end; t += step) {
        for (; next < n && next * gap <= t; ++next) {
            const auto f = fr.numbered(next);
            imp.arrive(f.data(), static_cast<uint32_t>(f.size()), next * gap);
        }
        for (uint32_t k = imp.ready(t); k > 0; --k) {
            out.push_back({fr.number(imp.front_data()), t,
                           std::vector<uint8_t>(imp.front_data(), imp.front_data() + imp.front_len())});
            imp.pop_front(t);
        }
        if (next == n && imp.counts().held == 0) break;
    }
    return out;
}

void expect_counts_add_up(const Impairer& imp) {
    const auto& c = imp.counts();
    EXPECT_EQ(c.received + c.duplicated, c.dropped + c.oversize + c.overflowed + c.forwarded + c.held);
}

// Frames that left after one with a higher number: what an in-order receiver counts reordered
// (duplicates' second copies are its duplicates).
uint64_t reordered_as_received(const std::vector<Departure>& d) {
    uint64_t n = 0;
    int64_t highest = -1;
    std::map<uint32_t, int> seen;
    for (const auto& x : d) {
        if (seen[x.number]++) continue;
        if (static_cast<int64_t>(x.number) < highest) ++n;
        else highest = x.number;
    }
    return n;
}

}  // namespace

TEST(Impairer, FramesLeaveAfterTheDelayInTheOrderTheyCame) {
    ImpairPlan p;
    p.delay_ns = 5 * kMs;
    Impairer imp(p);
    const auto d = run(imp, 1000, 10 * kUs);
    ASSERT_EQ(d.size(), 1000u);
    for (uint32_t i = 0; i < d.size(); ++i) {
        EXPECT_EQ(d[i].number, i);
        EXPECT_GE(d[i].at, i * 10 * kUs + 5 * kMs);
        EXPECT_LT(d[i].at, i * 10 * kUs + 5 * kMs + kUs) << "within the clock's step";
    }
    EXPECT_EQ(imp.counts().forwarded, 1000u);
    EXPECT_EQ(imp.counts().reordered, 0u);
    EXPECT_EQ(imp.residence().min(), 5 * kMs);
    expect_counts_add_up(imp);
}

TEST(Impairer, LatenessIsHowLongAfterItsTimeAFrameLeft) {
    ImpairPlan p;
    p.delay_ns = 5 * kMs;
    p.rate_pps = 50'000;  // 20 us a frame, offered one every 10 us: they queue for the link
    Impairer imp(p);
    const auto d = run(imp, 1000, 10 * kUs, 7 * kUs);  // the clock read every 7 us
    ASSERT_EQ(d.size(), 1000u);
    const auto& late = imp.lateness();
    EXPECT_EQ(late.count(), 1000u) << "one per forwarded frame";
    EXPECT_LT(late.max(), 7 * kUs) << "never more than a step of the clock after its time";
    EXPECT_GT(late.max(), 0u);
    EXPECT_GT(imp.residence().max(), 5 * kMs + 9 * kMs) << "the queue for the link is held time, not lateness";
    EXPECT_GT(imp.counts().shaped, 900u);
}

TEST(Impairer, LossIsBinomialAndTheSeedLosesTheSameFrames) {
    ImpairPlan p;
    p.loss = 0.01;
    p.seed = 7;
    const auto lost = [&](uint64_t seed) {
        auto q = p;
        q.seed = seed;
        Impairer imp(q);
        run(imp, 100'000, kUs);
        expect_counts_add_up(imp);
        return std::pair{imp.counts().dropped, imp.counts().drop_digest};
    };
    const auto [n, digest] = lost(7);
    // 100,000 frames at 1 %: mean 1000, standard deviation 31.5; 5 of them either way.
    EXPECT_NEAR(static_cast<double>(n), 1000.0, 5 * 31.5);
    EXPECT_EQ(lost(7), std::pair(n, digest)) << "the same seed drops the same frames";
    EXPECT_NE(lost(8).second, digest) << "another seed, other frames";
}

TEST(Impairer, TheLostFramesDependOnTheSeedAloneNotOnTheOtherDecisions) {
    // The loss model draws from its own generator: duplicates, reordering, corruption and a
    // full emulator (which draw, or not, from the other) change nothing in which frames it loses.
    const auto lost = [](bool others, double gilbert) {
        ImpairPlan p;
        p.seed = 42;
        if (gilbert > 0) {
            p.gilbert = true;
            p.ge_p = gilbert;
            p.ge_r = 0.3;
        } else {
            p.loss = 0.02;
        }
        if (others) {
            p.duplicate = 0.05;
            p.reorder = 0.1;
            p.corrupt = 0.03;
            p.delay_ns = 200 * kUs;
            p.limit = 50;  // overflows too
        }
        Impairer imp(p);
        run(imp, 20'000, kUs);
        expect_counts_add_up(imp);
        if (others) {
            EXPECT_GT(imp.counts().overflowed, 0u);
        }
        return std::pair{imp.counts().dropped, imp.counts().drop_digest};
    };
    EXPECT_EQ(lost(false, 0), lost(true, 0));
    EXPECT_EQ(lost(false, 0.01), lost(true, 0.01));
}

TEST(Impairer, GilbertElliottLossComesInBurstsAtTheStatesMeanRate) {
    ImpairPlan p;
    p.gilbert = true;
    p.ge_p = 0.01;  // into the bad state about every 100 frames
    p.ge_r = 0.25;  // out of it after 4 frames on average
    p.ge_loss_bad = 1.0;
    p.ge_loss_good = 0.0;
    Impairer imp(p);
    const auto d = run(imp, 200'000, kUs);
    const double expected = p.mean_loss();  // 0.01 / 0.26: 3.85 %
    const double ratio = static_cast<double>(imp.counts().dropped) / 200'000;
    EXPECT_NEAR(ratio, expected, 0.005);
    // Losses come in runs: the mean run of missing numbers is about 1 / R = 4.
    uint64_t runs = 0, missing = 0;
    uint32_t prev = 0;
    bool first = true;
    for (const auto& x : d) {
        const uint32_t gap = first ? x.number : x.number - prev - 1;
        if (gap) {
            ++runs;
            missing += gap;
        }
        prev = x.number;
        first = false;
    }
    ASSERT_GT(runs, 0u);
    EXPECT_NEAR(static_cast<double>(missing) / static_cast<double>(runs), 4.0, 0.5);
}

TEST(Impairer, DuplicatesAreExtraCopiesAndNotCountedReordered) {
    ImpairPlan p;
    p.duplicate = 0.05;
    p.delay_ns = 100 * kUs;
    p.jitter_ns = 50 * kUs;
    p.jitter_reorders = true;
    Impairer imp(p);
    const auto d = run(imp, 50'000, kUs);
    const auto& c = imp.counts();
    EXPECT_NEAR(static_cast<double>(c.duplicated), 2500.0, 5 * std::sqrt(2500.0 * 0.95));
    EXPECT_EQ(d.size(), 50'000u + c.duplicated);
    std::map<uint32_t, int> copies;
    for (const auto& x : d) ++copies[x.number];
    uint64_t twice = 0;
    for (const auto& [n, k] : copies) twice += k == 2;
    EXPECT_EQ(twice, c.duplicated);
    EXPECT_EQ(c.reordered, reordered_as_received(d)) << "the count a receiver of the frames makes";
    EXPECT_GT(c.reordered, 0u) << "jitter of half the delay at 1 frame/us reorders";
    expect_counts_add_up(imp);
}

TEST(Impairer, ReorderedFramesSkipTheDelayAndTheCountIsTheReceivers) {
    ImpairPlan p;
    p.delay_ns = 1 * kMs;
    p.reorder = 0.25;
    p.reorder_gap = 5;  // every 5th frame may go early
    Impairer imp(p);
    const auto d = run(imp, 20'000, 10 * kUs);
    const auto& c = imp.counts();
    // 4000 candidates at 25 %: 1000 early.
    EXPECT_NEAR(static_cast<double>(c.early), 1000.0, 5 * std::sqrt(1000.0 * 0.75));
    uint64_t early = 0;
    for (const auto& x : d) {
        const uint64_t arrived = x.number * 10 * kUs;
        if (x.at - arrived < kMs) {
            ++early;
            EXPECT_EQ((x.number + 1) % 5, 0u) << "only every 5th frame";
        }
    }
    EXPECT_EQ(early, c.early);
    EXPECT_EQ(c.reordered, reordered_as_received(d));
    // Each early frame overtakes the frames of the 1 ms before it (100 at 10 us): a delayed
    // frame is reordered when an early frame fewer than 100 numbers after it exists (at exactly 100 they
    // leave together, either way).
    std::vector<uint32_t> early_numbers;
    for (const auto& x : d)
        if (x.at - x.number * 10 * kUs < kMs) early_numbers.push_back(x.number);
    std::sort(early_numbers.begin(), early_numbers.end());
    auto overtaken = [&](uint32_t within) {
        uint64_t n = 0;
        for (uint32_t f = 0; f < 20'000; ++f) {
            if (std::binary_search(early_numbers.begin(), early_numbers.end(), f)) continue;  // leaves at once
            const auto it = std::upper_bound(early_numbers.begin(), early_numbers.end(), f);
            if (it != early_numbers.end() && *it - f <= within) ++n;
        }
        return n;
    };
    EXPECT_GE(c.reordered, overtaken(99));
    EXPECT_LE(c.reordered, overtaken(100));
    EXPECT_GT(c.reordered, 10'000u) << "with an early frame every 20 on average, most are overtaken";
}

TEST(Impairer, JitterKeepsTheOrderUnlessAllowedAndHasItsDistribution) {
    for (const bool reorders : {false, true}) {
        ImpairPlan p;
        p.delay_ns = 1 * kMs;
        p.jitter_ns = 100 * kUs;
        p.jitter_reorders = reorders;
        Impairer imp(p);
        const auto d = run(imp, 20'000, 50 * kUs, kUs);
        if (!reorders) {
            EXPECT_EQ(imp.counts().reordered, 0u);
            for (size_t i = 1; i < d.size(); ++i) ASSERT_GT(d[i].number, d[i - 1].number);
            continue;
        }
        // Frames 50 us apart with a 100 us normal jitter: about a third are overtaken.
        EXPECT_GT(imp.counts().reordered, 2000u);
        EXPECT_EQ(imp.counts().reordered, reordered_as_received(d));
        // Normal: mean 1 ms, standard deviation 100 us (the clock's 1 us steps aside).
        double sum = 0, sq = 0;
        for (const auto& x : d) {
            const double held = static_cast<double>(x.at - x.number * 50 * kUs);
            sum += held;
            sq += held * held;
        }
        const double mean = sum / d.size(), sd = std::sqrt(sq / d.size() - mean * mean);
        EXPECT_NEAR(mean, 1.0e6, 3e3);
        EXPECT_NEAR(sd, 1.0e5, 4e3);
    }
}

TEST(Impairer, UniformAndParetoJitterCenterOnTheDelay) {
    for (const auto dist : {spec::JitterDist::uniform, spec::JitterDist::pareto}) {
        ImpairPlan p;
        p.delay_ns = 2 * kMs;
        p.jitter_ns = 200 * kUs;
        p.dist = dist;
        p.jitter_reorders = true;
        Impairer imp(p);
        run(imp, 20'000, 20 * kUs, kUs);
        const auto& h = imp.residence();
        EXPECT_NEAR(static_cast<double>(h.percentile(0.5)), 2.0e6, 2.5e4) << spec::to_string(dist) << ": the median";
        if (dist == spec::JitterDist::uniform) {
            EXPECT_GE(h.min(), 1'800 * kUs - kUs);
            EXPECT_LE(h.max(), 2'200 * kUs + 2 * kUs);
        } else {
            EXPECT_GE(h.min(), 2 * kMs - 52 * kUs) << "pareto: at most (2^(1/3) - 1) x 200 us below";
            EXPECT_GT(h.max(), 3 * kMs) << "pareto: a heavy right tail";
        }
    }
}

TEST(Impairer, TheLinkCarriesFramesAtItsRate) {
    ImpairPlan p;
    p.rate_bps = 1e9;  // 1 Gbit/s at L1: a 128-byte frame (124 + FCS) and 20 bytes: 1.184 us
    Impairer imp(p);
    const auto d = run(imp, 10'000, 0, 100, 20 * kMs);  // all at once; the link needs 11.84 ms
    ASSERT_EQ(d.size(), 10'000u);
    const double per = 148.0 * 8;  // ns a frame
    EXPECT_NEAR(static_cast<double>(d.back().at), 9'999 * per, 200.0) << "the last frame leaves when the link carried the others";
    EXPECT_EQ(imp.counts().shaped, 9'999u) << "every frame but the first waited";
    for (size_t i = 1; i < d.size(); i += 997)
        EXPECT_NEAR(static_cast<double>(d[i].at), i * per, 101.0) << "frame " << i;
}

TEST(Impairer, AFullImpairerDropsWhatArrivesAndCountsIt) {
    ImpairPlan p;
    p.delay_ns = 10 * kMs;
    p.limit = 1000;
    Impairer imp(p);
    run(imp, 3000, kUs);  // 10 ms of frames 1 us apart: 10,000 would be held
    EXPECT_EQ(imp.counts().overflowed, 2000u);
    EXPECT_EQ(imp.counts().forwarded, 1000u);
    expect_counts_add_up(imp);
}

TEST(Impairer, CorruptionFlipsOneBitOfThePayload) {
    ImpairPlan p;
    p.corrupt = 0.1;
    Impairer imp(p);
    const Frames fr;
    const auto d = run(imp, 5000, kUs);
    uint64_t changed = 0;
    ASSERT_EQ(d.size(), 5000u);
    for (uint32_t i = 0; i < d.size(); ++i) {
        // By position: nothing reorders here, and a flipped bit may be in the number itself.
        const auto& x = d[i];
        const auto want = fr.numbered(i);
        ASSERT_EQ(x.bytes.size(), want.size());
        int bits = 0;
        size_t where = 0;
        for (size_t k = 0; k < want.size(); ++k)
            if (const int b = std::popcount(static_cast<unsigned>(want[k] ^ x.bytes[k]))) {
                bits += b;
                where = k;
            }
        if (bits == 0) continue;
        ++changed;
        EXPECT_EQ(bits, 1) << "one bit, frame " << i;
        EXPECT_GE(where, fr.payload) << "in the payload, past the headers";
    }
    EXPECT_EQ(changed, imp.counts().corrupted);
    EXPECT_NEAR(static_cast<double>(changed), 500.0, 5 * std::sqrt(450.0));
}
