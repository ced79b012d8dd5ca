// The C++ receive path against the wire format's fixture table (tests/unit/wire_fixtures.h);
// tests/bpf runs the same table through every XDP program.
#include <gtest/gtest.h>

#include "packet/signature.h"
#include "wire_fixtures.h"

using namespace lr;

namespace {

int verdict_of(const packet::SigInfo& r) {
    if (r.cls == packet::FrameClass::ours) return LR_OURS;
    if (r.cls == packet::FrameClass::malformed) return LR_MALFORMED;
    return r.stale ? LR_STALE : LR_FOREIGN;
}

}  // namespace

TEST(WireFixtures, TheClassifierGivesEachFrameItsVerdict) {
    const auto all = wire_fixtures::all();
    ASSERT_GE(all.size(), 30u);
    for (const auto& f : all) {
        const auto r = packet::sig_classify(f.frame.data(), f.frame.size(), wire_fixtures::kNonce,
                                            wire_fixtures::kStreams);
        EXPECT_EQ(verdict_of(r), f.verdict) << f.name;
        if (f.verdict == LR_OURS) {
            EXPECT_EQ(r.seq, 77u) << f.name;
            EXPECT_LT(r.stream, wire_fixtures::kStreams) << f.name;
        }
    }
}

TEST(WireFixtures, TheReflectorSendsBackOnlyValidSignatures) {
    for (const auto& f : wire_fixtures::all()) {
        auto copy = f.frame;
        EXPECT_EQ(packet::reflect_swap(copy.data(), copy.size()), f.reflected) << f.name;
        if (!f.reflected) {
            EXPECT_EQ(copy, f.frame) << f.name << ": a frame not reflected is left untouched";
            continue;
        }
        EXPECT_TRUE(std::equal(copy.begin(), copy.begin() + 6, f.frame.begin() + 6)) << f.name;
        auto twice = copy;
        packet::reflect_swap(twice.data(), twice.size());
        EXPECT_EQ(twice, f.frame) << f.name << ": swapping twice restores the frame";
        // Still valid after the swap: the sender's classifier takes it back.
        const auto r = packet::sig_classify(copy.data(), copy.size(), 0, 0);
        EXPECT_TRUE(r.cls != packet::FrameClass::malformed) << f.name;
    }
}
