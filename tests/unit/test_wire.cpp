// The C++ receive path against the wire format's fixture table (tests/unit/wire_fixtures.h);
// tests/bpf runs the same table through every XDP program.
#include <gtest/gtest.h>

#include "packet/checksum.h"
#include "packet/frame.h"
#include "packet/signature.h"
#include "stats/rx_measure.h"
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

// A request/response run answered by a host's own UDP echo service (--responder stack): the
// echo keeps the payload, so the signature's half of the run nonce, but writes its own IP
// header, so the half in the IPv4 identification is gone. Read with LR_NONCE_SIG, such a frame
// is the run's; read exactly, it is another run's. A different signature half is never ours.
TEST(WireNonce, AStackEchoIsOursByTheSignaturesHalfAlone) {
    packet::FrameSpec s;
    s.frame_size = 64;
    s.src_ip = packet::parse_ip("198.18.0.1", "src");
    s.dst_ip = packet::parse_ip("198.18.0.2", "dst");
    const uint32_t nonce = 0x12345678;
    auto f = packet::build_frame(s);
    packet::sig_init(f, packet::sig_layout(s), nonce, 0);
    packet::sig_stamp(f.data(), packet::sig_layout(s), 5, 1000);
    auto echo = f;
    echo[14 + 4] = echo[14 + 5] = 0;  // the stack's own identification
    echo[14 + 10] = echo[14 + 11] = 0;
    const uint16_t c = packet::inet_checksum(echo.data() + 14, 20);
    echo[14 + 10] = static_cast<uint8_t>(c >> 8);
    echo[14 + 11] = static_cast<uint8_t>(c);
    auto classify = [](const std::vector<uint8_t>& frame, uint32_t n, int mode) {
        stats::RxResult out;
        stats::RxMeasure m(true, n, 1, &out, false, mode);
        lr_wire_sig sig{};
        return m.classify(frame.data(), static_cast<uint32_t>(frame.size()), false, sig);
    };
    EXPECT_EQ(classify(f, nonce, LR_NONCE_EXACT), LR_OURS);
    EXPECT_EQ(classify(echo, nonce, LR_NONCE_EXACT), LR_STALE);
    EXPECT_EQ(classify(echo, nonce, LR_NONCE_SIG), LR_OURS);
    EXPECT_EQ(classify(f, nonce, LR_NONCE_SIG), LR_OURS);
    EXPECT_EQ(classify(echo, nonce ^ 1, LR_NONCE_SIG), LR_STALE);
}
