// A stream's frame sizes: one size, a weighted distribution (the IMIX family or SIZE:WEIGHT
// pairs), an increment LO:HI:STEP, or uniform random sizes LO..HI. Sizes count the FCS, as
// everywhere in linerate. The sender turns a distribution into a period of frames in which
// every size comes exactly as often as its weight says (stream/size_table.h).
#pragma once
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace lr::spec {

// The most frames a weighted distribution's period may span: weights are reduced to whole
// numbers (two decimals, as OTG gives them) over their greatest common divisor.
inline constexpr uint64_t kMaxSizePeriod = 1u << 20;

struct SizeSpec {
    enum class Kind : uint8_t { fixed, weighted, increment, random };
    Kind kind = Kind::fixed;
    std::string name;  // a predefined distribution ("imix"); empty otherwise
    // fixed: one pair {size, 1}; weighted: {size, weight} in the order given (sizes distinct)
    std::vector<std::pair<unsigned, double>> weights{{64, 1}};
    unsigned lo = 64, hi = 64, step = 1;  // increment: lo, lo + step, ... <= hi; random: lo..hi
    std::string typed;                    // as given, for messages

    static SizeSpec fixed_size(unsigned size);
    bool varies() const { return kind != Kind::fixed; }
    unsigned smallest() const;
    unsigned largest() const;
    // The distinct sizes, ascending (random: every size from lo to hi).
    std::vector<unsigned> sizes() const;
    // The mean frame size (FCS included): what turns a bit rate into a packet rate.
    double mean() const;
    // The whole number of frames of each size in one period (weights reduced by their common
    // divisor), in the order of `weights`; fixed: {1}; increment: one each. Random: empty.
    std::vector<uint64_t> period_counts() const;
    // The order frames take the sizes in over one period, as indexes into sizes(): every size
    // exactly period_counts() times, shuffled from `seed` (so no size comes in trains);
    // increments in ascending order. Empty for one size and for random sizes.
    std::vector<uint16_t> period(uint64_t seed) const;
    // "64", "imix", "64:7/570:4/1518:1", "64:1518:+2", "64..1518".
    std::string str() const;
    // A predefined distribution with sizes below `min` (a frame kind's smallest): those sizes
    // become `min` (weights of sizes that meet there add up), and `note` says so. Other sizes
    // are left as given (a frame too small for its kind is refused when it is built).
    SizeSpec at_least(unsigned min, std::string_view what, std::string& note) const;
};

// Parses a size value (`what` names the option or stream key for messages):
//   N                   one size
//   imix, ipsec-imix, ipv6-imix, standard-imix, tcp-imix   OTG's predefined distributions
//   S:W/S:W/...         sizes with weights (up to two decimals: 58:58.67/62:2/...)
//   LO:HI:STEP          every size from LO to HI by STEP (+STEP accepted)
//   LO..HI              uniform random sizes (seeded per stream)
// Sizes are checked against [kMinFrame, kMaxFrame] except the predefined distributions' (some
// are below 64 bytes: the stream raises them to its frame kind's smallest, with a note).
// Throws UsageError quoting the whole value.
SizeSpec parse_size_spec(std::string_view s, std::string_view what);

// The predefined distributions by name, for help texts.
std::string predefined_size_names();

}  // namespace lr::spec
