// The receive path's known-header lane (packet::KnownHeaders): a frame it takes is one the fast
// lane (classify_fast) takes, with the same signature fields; it takes every frame of a flow
// whose headers it learnt, whatever its sequence and timestamp; and it declines the rest.
#include <gtest/gtest.h>

#include <memory>
#include <random>

#include "packet/known_header.h"
#include "packet/signature.h"
#include "packet/wire.h"
#include "wire_fixtures.h"

using namespace lr;

namespace {

// The lane on an exact-size heap copy (a sanitizer or valgrind sees any overread), held to
// the fast lane when it takes the frame; returns whether it took it.
bool check_agrees(const packet::KnownHeaders& known, const std::vector<uint8_t>& frame, uint32_t streams, bool verified) {
    std::unique_ptr<uint8_t[]> exact(new uint8_t[frame.size() ? frame.size() : 1]);
    std::copy(frame.begin(), frame.end(), exact.get());
    const auto n = static_cast<uint32_t>(frame.size());
    lr_wire_sig k{}, f{};
    if (!known.match(exact.get(), n, verified, wire_fixtures::kNonce, k)) return false;
    EXPECT_EQ(packet::classify_fast(exact.get(), n, wire_fixtures::kNonce, streams, verified, f), LR_OURS)
        << "the known-header lane took a frame the fast lane does not";
    EXPECT_EQ(k.seq, f.seq);
    EXPECT_EQ(k.ts, f.ts);
    EXPECT_EQ(k.nonce, f.nonce);
    EXPECT_EQ(k.stream, f.stream);
    EXPECT_EQ(k.seq_bits, f.seq_bits);
    EXPECT_EQ(k.has_ts, f.has_ts);
    return true;
}

std::vector<uint8_t> frame_of(unsigned size, uint16_t stream, uint64_t seq, uint64_t ts) {
    auto f = wire_fixtures::signed_frame(wire_fixtures::spec(false, packet::L4::udp, size), stream, wire_fixtures::kNonce);
    packet::sig_stamp(f.data(), packet::sig_layout(wire_fixtures::spec(false, packet::L4::udp, size)), seq, ts);
    return f;
}

// Teaches `known` a frame the fast lane takes.
void learn(packet::KnownHeaders& known, const std::vector<uint8_t>& f, uint32_t streams) {
    lr_wire_sig s{};
    ASSERT_EQ(packet::classify_fast(f.data(), static_cast<uint32_t>(f.size()), wire_fixtures::kNonce, streams, false, s), LR_OURS);
    known.learn(f.data(), static_cast<uint32_t>(f.size()), s);
}

}  // namespace

TEST(KnownHeaders, TakesEveryFrameOfALearntFlowWhateverItsSequenceAndTimestamp) {
    std::mt19937_64 rng(3);
    // 64 bytes (no L4 byte after the signature), then longer frames, odd lengths among them.
    for (unsigned size : {64u, 65u, 66u, 71u, 72u, 100u, 128u, 1518u}) {
        packet::KnownHeaders known;
        EXPECT_FALSE(check_agrees(known, frame_of(size, 1, 0, 0), 4, false)) << size << ": nothing learnt yet";
        learn(known, frame_of(size, 1, 0, 5), 4);
        for (int i = 0; i < 200; ++i) {
            const auto f = frame_of(size, 1, rng() & LR_SIG48_MASK, rng() & LR_SIG48_MASK);
            EXPECT_TRUE(check_agrees(known, f, 4, false)) << size;
            EXPECT_TRUE(check_agrees(known, f, 4, true)) << size;
        }
        EXPECT_FALSE(check_agrees(known, frame_of(size, 2, 7, 7), 4, false)) << size << ": another flow";
        if (size > 64) {
            EXPECT_FALSE(check_agrees(known, frame_of(size - 1, 1, 7, 7), 4, false)) << size << ": another length";
        }
    }
}

TEST(KnownHeaders, FlowsKeepTheirOwnEntriesAndShareOnlyByTheirLowBits) {
    packet::KnownHeaders known;
    learn(known, frame_of(64, 1, 0, 0), 40);
    learn(known, frame_of(64, 2, 0, 0), 40);
    EXPECT_TRUE(check_agrees(known, frame_of(64, 1, 9, 9), 40, false));
    EXPECT_TRUE(check_agrees(known, frame_of(64, 2, 9, 9), 40, false));
    learn(known, frame_of(64, 1 + packet::KnownHeaders::kEntries, 0, 0), 40);  // the same entry as flow 1
    EXPECT_FALSE(check_agrees(known, frame_of(64, 1, 9, 9), 40, false)) << "its entry went to flow 17";
    EXPECT_TRUE(check_agrees(known, frame_of(64, 1 + packet::KnownHeaders::kEntries, 9, 9), 40, false));
}

TEST(KnownHeaders, EveryChangedByteIsDeclinedOrTakenAsTheFastLaneTakesIt) {
    // Each byte of a learnt flow's frame changed in turn, then random bytes changed, the frame
    // cut or grown: whatever the lane takes, the fast lane takes with the same fields. A change
    // to a header, the checksum, the sequence, the timestamp or the payload must be declined
    // (only the MAC addresses are read by neither).
    std::mt19937 rng(11);
    for (unsigned size : {64u, 65u, 128u}) {
        packet::KnownHeaders known;
        learn(known, frame_of(size, 3, 0, 0), 4);
        const auto good = frame_of(size, 3, 0x123456789abc, 0xcba987654321);
        ASSERT_TRUE(check_agrees(known, good, 4, false));
        for (size_t at = 0; at < good.size(); ++at)
            for (uint8_t flip : {uint8_t{0x01}, uint8_t{0x80}, uint8_t{0xff}}) {
                auto f = good;
                f[at] ^= flip;
                const bool taken = check_agrees(known, f, 4, false);
                if (at >= 12) {
                    EXPECT_FALSE(taken) << size << "-byte frame, byte " << at << " ^ " << int(flip);
                }
            }
        int taken = 0;
        for (int it = 0; it < 50000; ++it) {
            auto f = good;
            for (int k = 0, changes = 1 + it % 4; k < changes; ++k) {
                const size_t at = rng() % f.size();
                f[at] = static_cast<uint8_t>(rng());
            }
            if (it % 7 == 0) f.resize(rng() % (f.size() + 8), static_cast<uint8_t>(rng()));
            taken += check_agrees(known, f, 4, it % 5 == 0);
        }
        EXPECT_GT(taken, 0) << "changes to the MAC addresses alone are taken";
    }
}

TEST(KnownHeaders, AVerifiedChecksumIsNotSummedAgainButStillMustBePresent) {
    packet::KnownHeaders known;
    learn(known, frame_of(64, 1, 0, 0), 4);
    auto f = frame_of(64, 1, 42, 42);
    f[44 + 5] ^= 1;  // the sequence's last byte: the checksum no longer holds
    EXPECT_FALSE(check_agrees(known, f, 4, false));
    EXPECT_TRUE(check_agrees(known, f, 4, true)) << "the device checked it (as the fast lane trusts it)";
    f[40] = f[41] = 0;  // no UDP checksum at all
    EXPECT_FALSE(check_agrees(known, f, 4, true));
}
