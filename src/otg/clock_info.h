// Which clock an engine stamps frames with and how well it is disciplined: what a controller
// needs to say whether a one-way latency between two engines means anything. linerate stamps
// CLOCK_MONOTONIC (docs/measurement.md): two engines share it only on one host (one boot id).
// chrony's or ptp4l's state is read when their tools answer, with the bound they give.
#pragma once
#include <cstdint>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

namespace lr::otg {

struct ClockSync {
    std::string source = "none";  // chrony, ptp4l or none
    bool synchronised = false;    // the system clock, within bound_ns (chrony only: see read_clock_info)
    std::optional<double> bound_ns;  // the largest error the source admits
    std::string detail;              // what it said, or why it could not be read
};

struct ClockInfo {
    std::string stamps = "CLOCK_MONOTONIC";
    std::string boot_id;  // the host's boot: one clock for every engine that shares it
    // CLOCK_REALTIME - CLOCK_MONOTONIC when read: with synchronised system clocks, what turns
    // one host's stamps into another's (both clocks are slewed alike, so it changes only when
    // the system clock is stepped).
    int64_t realtime_minus_monotonic_ns = 0;
    ClockSync sync;
};

// CLOCK_REALTIME now, in ns since the epoch (a synchronised start's set time).
uint64_t realtime_now_ns();
// CLOCK_REALTIME - CLOCK_MONOTONIC, from the tightest of a few back-to-back pairs.
// Test beds that stand several hosts on one kernel add LINERATE_TEST_CLOCK_ERROR_NS to it: a
// system clock that far ahead (docs/multihost.md, "Testing on one host").
int64_t realtime_minus_monotonic_ns();
// /proc/sys/kernel/random/boot_id, or LINERATE_TEST_BOOT_ID when set (a test bed's stand-in host).
std::string boot_id();

// Reads the boot id and asks chronyc, then pmc (ptp4l), each within a second.
ClockInfo read_clock_info();
// chronyc -c tracking's line: synchronised when its leap status is Normal; the bound is
// |offset| + root dispersion + root delay / 2. None for a line it cannot read.
std::optional<ClockSync> parse_chrony_tracking(const std::string& csv_line);

nlohmann::json clock_json(const ClockInfo& c);
ClockInfo clock_from_json(const nlohmann::json& j);

}  // namespace lr::otg
