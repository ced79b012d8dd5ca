// Streams: what a port sends, one definition per stream. `--stream KEY=VALUE,...` (repeatable)
// and a profile's [[stream]] tables give them with the option names as keys; with none, the
// command line's frame and rate options describe the one stream, as they always did.
//
// A stream has a frame template (everything the frame options say, flows included), sizes
// (spec/size_spec.h), a rate or a share of the port's rate, a departure pattern, a mode
// (continuous, a count, or bursts) and a start (a delay, or after another stream ends).
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <memory>

#include "packet/frame.h"
#include "packet/signature.h"
#include "spec/rate.h"
#include "spec/size_spec.h"

namespace lr::stream {
struct PcapFrames;  // stream/pcap_source.h
}

namespace lr::spec {

// How departures are spaced: constant bit rate, bursts of N back-to-back frames with the
// gap that keeps the average, or exponential inter-departure times (seeded).
struct Pattern {
    enum class Kind { cbr, burst, poisson };
    Kind kind = Kind::cbr;
    uint32_t burst = 1;  // frames per burst (Kind::burst)
    std::string str() const;
};
Pattern parse_pattern(std::string_view s, std::string_view what);

// A pcap replay's timing: the recorded gaps scaled (speed 2 = twice as fast), unless the
// stream has a rate (then it is paced like any stream) or rate=max (as fast as possible).
struct Replay {
    std::string path;
    double speed = 1;     // the recorded timing divided by this
    uint64_t loops = 1;   // times through the file (0: until the trial ends)
    // Read (and checked) before the session opens its ports (engine/replay_load.h).
    std::shared_ptr<const stream::PcapFrames> frames;
    unsigned max_frame = 0;  // its largest frame, FCS included
    // What its signed frames carry (the least level among the records that have room; none
    // when no record has room), and how many records have no room: those are sent as
    // recorded, counted, not measured.
    packet::SigLevel sig_level = packet::SigLevel::none;
    uint64_t unsigned_records = 0;
};

struct StreamSpec {
    std::string name;            // "s1", "s2"... unless named
    packet::FrameSpec frame;     // the template; frame.frame_size is the smallest size sent
    SizeSpec size;
    uint32_t flows = 1;          // distinct flows (one signed stream id each)
    unsigned vary = 0;           // flow::VaryField bits
    std::optional<RateSpec> rate;  // its own rate (any unit; max: as fast as possible)
    std::optional<double> share;   // or its part of the port's frames (0..1)
    Pattern pattern;
    uint64_t seed = 1;           // random sizes and poisson gaps
    std::optional<uint64_t> count;  // frames in all (bursts: bursts x burst_frames)
    uint32_t bursts = 0;         // multi-burst: this many bursts of burst_frames frames...
    uint32_t burst_frames = 0;
    double burst_gap_s = 0;      // ...burst_gap_s apart (from one burst's last frame to the next's first)
    bool endless_bursts = false; // or bursts of burst_frames frames, burst_gap_s apart, until the trial ends
    double delay_s = 0;          // starts this long after the trial starts
    std::string after;           // or once this stream has sent all it sends
    std::vector<std::string> ports;  // the TX ports it leaves by (empty: every --tx port)
    std::optional<Replay> replay;    // frames from a pcap file instead of the template
    std::string typed;           // the definition as given ("--stream ..." or "file:line:col")
    // Built by code (an OTG flow): the stream's flows are exactly these frames, in this order
    // (flow i is flow_frames[i]; `flows` and `vary` are not used). Each has `frame`'s address
    // family, L4 and VLAN presence; `frame` stays the base that sizes and limits are checked on.
    std::vector<packet::FrameSpec> flow_frames;
    // Sent by another host (an engine of several, docs/multihost.md): added to its frames' TX
    // timestamps, in ns, to read them on this host's CLOCK_MONOTONIC. 0: stamped here.
    int64_t tx_clock_shift_ns = 0;

    bool ends() const { return count.has_value() || bursts > 0; }  // a continuous stream never does
    bool paced() const { return rate && rate->limited(); }
    std::string str() const;  // "name (size imix, 40 % of line rate, ...)"
    // Where it was defined, for messages: its --stream text or file:line:col ("stream NAME" if neither).
    std::string origin() const { return typed.empty() ? "stream " + name : typed; }
};

// What is wrong with a stream name built by code (empty when nothing): any printable UTF-8,
// 1 to kMaxStreamNameBytes bytes. The command line and profiles keep a stricter rule (name=).
inline constexpr size_t kMaxStreamNameBytes = 256;
std::string stream_name_problem(std::string_view name);
// A name cut to at most `bytes` bytes without splitting a UTF-8 character (console tables).
std::string name_prefix(std::string_view name, size_t bytes);

// One key=value of a stream definition, with where it came from (a profile's file:line:col;
// empty on the command line, where the whole --stream text is quoted instead).
struct StreamKey {
    std::string key, value, origin;
};
struct StreamInput {
    std::vector<StreamKey> keys;
    std::string text;  // "--stream size=imix,rate=40%" or "profile.toml:12:1 [[stream]]"
};

// "size=imix,rate=40%,vary=src-ip,dst-port": a token without "=" continues the previous value
// (lists such as vary and port take commas). Throws UsageError quoting the text.
StreamInput parse_stream_text(std::string_view text);

// The stream keys that are not option names, with their help (docs, `linerate options`).
struct StreamKeyDoc {
    std::string_view key, value_name, help;
};
const std::vector<StreamKeyDoc>& stream_only_keys();

}  // namespace lr::spec
