// libFuzzer target: the receive-side parsers must never read or write outside the frame,
// whatever arrives, and signing a replayed frame (sign_frame) either makes it one of ours or
// leaves it byte-identical; the receive path's fast lane (classify_fast) takes only frames the
// general rules call ours, with the same fields, the known-header lane (KnownHeaders) only
// what the fast lane takes, and the eight-frame lane's classification (classify_run8) exactly
// what it takes; linerate connect's TCP segment reader never reads past a frame and
// answers what it accepts with a segment it accepts back. Run with ASan and UBSan
// (tests/fuzz/meson.build).
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>

#include "packet/known_header.h"
#include "packet/sig_frame.h"
#include "packet/signature.h"
#include "packet/tcp_segment.h"
#include "packet/wire.h"
#include "stats/run_lane.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    // Exact-size copies so any overread is caught; the first two bytes pick nonce/streams.
    const uint16_t nonce = size >= 2 ? static_cast<uint16_t>(data[0] << 8 | data[1]) : 0;
    std::unique_ptr<uint8_t[]> buf(new uint8_t[size ? size : 1]);
    if (size) std::memcpy(buf.get(), data, size);
    const auto r = lr::packet::sig_classify(buf.get(), size, nonce, 1 + (size % 64));
    if (r.cls == lr::packet::FrameClass::ours && r.stream >= 1 + (size % 64)) __builtin_trap();
    for (int verified = 0; verified < 2; ++verified) {
        // The run nonce an IPv4 frame carries (IP identification, signature), so the lane is reached.
        const uint32_t run = size >= 58 ? static_cast<uint32_t>(data[18] << 24 | data[19] << 16 | data[56] << 8 | data[57]) : nonce;
        lr_wire_sig fast{}, rules{};
        lr_wire_hdrs h;
        const auto n = static_cast<uint32_t>(size);
        if (lr::packet::classify_fast(buf.get(), n, run, 1 + (size % 64), verified, fast) >= 0) {
            if (lr_wire_classify(buf.get(), buf.get() + size, run, 0, 1 + (size % 64), verified, &h, &rules) != LR_OURS)
                __builtin_trap();
            if (fast.seq != rules.seq || fast.ts != rules.ts || fast.nonce != rules.nonce || fast.stream != rules.stream ||
                fast.seq_bits != rules.seq_bits || fast.has_ts != rules.has_ts)
                __builtin_trap();
            // The known-header lane, taught this frame, must take it, and take a copy with one
            // byte changed (which the input's last byte picks) only as the fast lane would.
            auto known = std::make_unique<lr::packet::KnownHeaders>();
            known->learn(buf.get(), n, fast);
            lr_wire_sig k{}, again{};
            if (!known->match(buf.get(), n, verified, run, k) || k.seq != fast.seq || k.ts != fast.ts ||
                k.stream != fast.stream || k.nonce != fast.nonce)
                __builtin_trap();
            std::unique_ptr<uint8_t[]> changed(new uint8_t[size]);
            std::memcpy(changed.get(), buf.get(), size);
            changed[data[size - 1] % size] ^= static_cast<uint8_t>(1 + data[size / 2] % 255);
            if (known->match(changed.get(), n, verified, run, k) &&
                (lr::packet::classify_fast(changed.get(), n, run, 1 + (size % 64), verified, again) < 0 ||
                 again.seq != k.seq || again.ts != k.ts || again.stream != k.stream || again.nonce != k.nonce))
                __builtin_trap();
        }
    }
    // The eight-frame lane's classification (stats::classify_run8), on the input's first 60
    // bytes as a frame in eight exact-size copies: it takes them exactly when the fast lane takes
    // that frame, with the same fields.
    if (size >= lr::packet::KnownHeaders::kMinLen && lr::stats::run_lane_supported()) {
        constexpr uint32_t kLen = lr::packet::KnownHeaders::kMinLen;
        const uint32_t run = static_cast<uint32_t>(data[18] << 24 | data[19] << 16 | data[56] << 8 | data[57]);
        const uint32_t streams = 1 + (size % 64);
        std::unique_ptr<uint8_t[]> copies[lr::stats::kRunFrames];
        const uint8_t* frames[lr::stats::kRunFrames];
        for (uint32_t j = 0; j < lr::stats::kRunFrames; ++j) {
            copies[j].reset(new uint8_t[kLen]);
            std::memcpy(copies[j].get(), data, kLen);
            frames[j] = copies[j].get();
        }
        const auto header = lr::stats::run_header(run);
        for (int verified = 0; verified < 2; ++verified) {
            lr_wire_sig fast{};
            const bool taken = lr::packet::classify_fast(frames[0], kLen, run, streams, verified, fast) >= 0;
            lr::stats::RunSigs sigs;
            const bool lane = lr::stats::classify_run8(frames, verified ? 0xff : 0, header, streams, sigs);
            if (lane != taken) __builtin_trap();
            for (uint32_t j = 0; lane && j < lr::stats::kRunFrames; ++j)
                if (sigs.seq[j] != fast.seq || sigs.ts[j] != fast.ts || sigs.stream[j] != fast.stream) __builtin_trap();
        }
    }
    lr::packet::reflect_swap(buf.get(), size);

    // linerate connect's reader of a listener's answers, and the reply it writes from one: the
    // reply parses back with the endpoints swapped and the numbers it was given.
    if (size) std::memcpy(buf.get(), data, size);
    lr::packet::TcpSegment seg;
    if (lr::packet::parse_tcp_segment(buf.get(), static_cast<uint32_t>(size), seg) == lr::packet::SegmentParse::tcp) {
        if (seg.l4 + 20 > size) __builtin_trap();
        uint8_t out[lr::packet::kMaxReplyLen];
        const uint32_t m = lr::packet::write_reply(out, buf.get(), seg, seg.ack, seg.seq + 1, lr::packet::kTcpAck, 64);
        lr::packet::TcpSegment back;
        if (m > sizeof(out) || lr::packet::parse_tcp_segment(out, m, back) != lr::packet::SegmentParse::tcp ||
            back.sport != seg.dport || back.dport != seg.sport || back.seq != seg.ack || back.ack != seg.seq + 1 ||
            back.ipv6 != seg.ipv6 || back.vlan != seg.vlan)
            __builtin_trap();
    }

    // Signing the input as a replayed frame, with a run nonce and stream from its first bytes.
    const uint32_t run = size >= 4 ? static_cast<uint32_t>(data[0] << 24 | data[1] << 16 | data[2] << 8 | data[3]) : 0;
    const auto stream = static_cast<uint16_t>(size % 1000);
    if (size) std::memcpy(buf.get(), data, size);
    const auto l = lr::packet::sign_frame(buf.get(), size, run, stream);
    if (l.level == lr::packet::SigLevel::none) {
        if (size && std::memcmp(buf.get(), data, size) != 0) __builtin_trap();  // unsigned: untouched
        return 0;
    }
    auto s = lr::packet::sig_classify(buf.get(), size, run, stream + 1u);
    if (s.cls != lr::packet::FrameClass::ours || s.stream != stream || s.seq != 0) __builtin_trap();
    if (s.has_ts != (l.level == lr::packet::SigLevel::seq_ts)) __builtin_trap();
    const uint64_t seq = 0x8000'0000'0001 ^ size, ts = 0x1234'5678'9abc ^ size;
    lr::packet::sig_stamp(buf.get(), l, seq, ts);
    s = lr::packet::sig_classify(buf.get(), size, run, stream + 1u);
    if (s.cls != lr::packet::FrameClass::ours || s.seq != seq || (s.has_ts && s.ts_ns != ts)) __builtin_trap();
    return 0;
}
