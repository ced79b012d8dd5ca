// Rates in every unit engineers use: packets per second, bits per second at L1 (the RFC 2544
// and TRex convention: preamble, SFD and inter-frame gap included) or L2, a percentage of the
// line rate, or as fast as possible. A rate is kept as given and turned into packets per
// second for each trial, since the frame size (and for % the line rate) decides that.
#pragma once
#include <string>
#include <string_view>
#include <utility>

namespace lr::spec {

struct RateSpec {
    enum class Unit { max, pps, l1_bps, l2_bps, percent };
    Unit unit = Unit::max;
    double value = 0;
    std::string typed;  // the value as the user gave it ("10Mpps"); empty for a computed rate
    RateSpec() = default;
    RateSpec(Unit u, double v, std::string as_typed = {}) : unit(u), value(v), typed(std::move(as_typed)) {}
    bool limited() const { return unit != Unit::max; }
    // "10 Mpps", "9.5 Gbit/s L1", "9.5 Gbit/s L2", "100 % of line rate", "max".
    std::string str() const;
    // For messages: the value as typed, else str().
    std::string quoted() const { return typed.empty() ? str() : typed; }
};

// No Ethernet port carries more than this at L1: 800 Gbit/s, the fastest standard Ethernet
// (IEEE 802.3df-2024, 800GBASE-R), i.e. 1.19 Gpps of 64-byte frames. When the ports' line rate
// is unknown, a rate above this per sending port is refused.
inline constexpr double kFastestEthernetBps = 800e9;

// The most the sending ports can carry (L1 bits/s over all of them) and where that comes
// from, for messages: "the 10 Gbit/s line rate of eth1 (its link speed)".
struct RateCeiling {
    double bps = 0;
    std::string source;
    bool line_rate = false;  // a line rate (the ports', or --line-rate): % rates are of it
};
// --line-rate when given, else the physical bound for `tx_ports` sending ports.
RateCeiling spec_ceiling(double line_rate_bps, size_t tx_ports);

// "10Mpps", "250kpps", "1000" and "10k" (packets/s, k/M/G suffixes), "9.5Gbps" (L1),
// "9.5Gbps-l2", "100%", "max". Throws UsageError naming `what` and the value.
RateSpec parse_rate(std::string_view s, std::string_view what);

// A link's bit rate: "10G", "25Gbps", "100G", "40000M", "1e10". Throws UsageError.
double parse_bits_per_second(std::string_view s, std::string_view what);

// Bits per second on the wire at L1 and L2 for `pps` frames of `frame_size` bytes (FCS
// included): L1 adds 20 bytes per frame (preamble 7, SFD 1, inter-frame gap 12).
// Sizes may be a mix's mean frame size.
inline double l1_bps(double pps, double frame_size) { return pps * (frame_size + 20.0) * 8.0; }
inline double l2_bps(double pps, double frame_size) { return pps * frame_size * 8.0; }
// The most frames of `frame_size` bytes a link of `line_bps` (L1) carries per second.
inline double line_rate_pps(double line_bps, double frame_size) { return line_bps / ((frame_size + 20.0) * 8.0); }

// The packet rate of `r` for frames of `frame_size` bytes on links of `line_bps` in all (L1;
// 0: unknown): 0 for max. Throws UsageError for a percentage without a line rate, and for a
// rate above the line rate when it is known.
double to_pps(const RateSpec& r, double frame_size, double line_bps);
// The same against a ceiling that says where it comes from; `what` names the option
// ("--rate"). Throws UsageError quoting the value as typed, the ceiling and its source.
double to_pps(const RateSpec& r, std::string_view what, double frame_size, const RateCeiling& c);

// "1.488 Mpps = 1.000 Gbit/s L1 = 0.762 Gbit/s L2 = 10.0 % of 10 Gbit/s" (the last part only
// with a known line rate).
std::string describe_rate(double pps, double frame_size, double line_bps);
// "10 Gbit/s", "2.5 Gbit/s", "100 Mbit/s".
std::string format_bps(double bps);
// "1.488 Mpps", "250 kpps", "10 pps".
std::string format_pps(double pps);
// "12.500 us", "4.200 ms", "1.500 s".
std::string format_seconds(double s);

}  // namespace lr::spec
