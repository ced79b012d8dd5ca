#include "otg/clock_info.h"

#include <array>
#include <chrono>
#include <mutex>
#include <optional>
#include <climits>
#include <cmath>
#include <cstdlib>
#include <cstdio>
#include <ctime>
#include <fstream>
#include <sstream>
#include <vector>

namespace lr::otg {
namespace {

// A command's first output line, within `timeout 1`; empty when it is missing or fails.
std::string first_line_of(const std::string& command) {
    std::string out;
    FILE* f = popen(("timeout 1 " + command + " 2>/dev/null").c_str(), "r");
    if (!f) return out;
    std::array<char, 1024> buf{};
    if (fgets(buf.data(), buf.size(), f)) out = buf.data();
    const int rc = pclose(f);
    if (rc != 0) return {};
    while (!out.empty() && (out.back() == '\n' || out.back() == '\r')) out.pop_back();
    return out;
}

std::vector<std::string> split(const std::string& s, char sep) {
    std::vector<std::string> out;
    std::stringstream in(s);
    for (std::string x; std::getline(in, x, sep);) out.push_back(x);
    return out;
}

}  // namespace

uint64_t realtime_now_ns() {
    timespec t{};
    clock_gettime(CLOCK_REALTIME, &t);
    return static_cast<uint64_t>(t.tv_sec) * 1'000'000'000ull + static_cast<uint64_t>(t.tv_nsec);
}

namespace {

int64_t ns_of(const timespec& t) { return int64_t(t.tv_sec) * 1'000'000'000LL + t.tv_nsec; }

int64_t test_clock_error_ns() {
    const char* e = std::getenv("LINERATE_TEST_CLOCK_ERROR_NS");
    if (!e || !*e) return 0;
    try {
        return std::stoll(e);
    } catch (const std::exception&) {
        return 0;
    }
}

}  // namespace

int64_t realtime_minus_monotonic_ns() {
    // The realtime read sits between two monotonic reads: their midpoint is its instant.
    int64_t best_gap = INT64_MAX, best = 0;
    for (int i = 0; i < 5; ++i) {
        timespec a{}, r{}, b{};
        clock_gettime(CLOCK_MONOTONIC, &a);
        clock_gettime(CLOCK_REALTIME, &r);
        clock_gettime(CLOCK_MONOTONIC, &b);
        const int64_t gap = ns_of(b) - ns_of(a);
        if (gap < best_gap) {
            best_gap = gap;
            best = ns_of(r) - (ns_of(a) + gap / 2);
        }
    }
    return best + test_clock_error_ns();
}

std::string boot_id() {
    if (const char* e = std::getenv("LINERATE_TEST_BOOT_ID"); e && *e) return e;
    std::string id;
    std::ifstream boot("/proc/sys/kernel/random/boot_id");
    std::getline(boot, id);
    return id;
}

std::optional<ClockSync> parse_chrony_tracking(const std::string& line) {
    // Reference ID, name, stratum, ref time, system time offset, last offset, RMS offset,
    // frequency, residual frequency, skew, root delay, root dispersion, update interval, leap status.
    const auto f = split(line, ',');
    if (f.size() < 14) return std::nullopt;
    try {
        const double offset_s = std::stod(f[4]), root_delay_s = std::stod(f[10]), root_dispersion_s = std::stod(f[11]);
        ClockSync s;
        s.source = "chrony";
        s.synchronised = f[13] == "Normal";
        s.bound_ns = (std::fabs(offset_s) + root_dispersion_s + root_delay_s / 2) * 1e9;
        s.detail = "reference " + f[1] + ", stratum " + f[2] + ", leap status " + f[13];
        return s;
    } catch (const std::exception&) {
        return std::nullopt;
    }
}

namespace {

ClockSync ask_sync_sources() {
    if (auto s = parse_chrony_tracking(first_line_of("chronyc -c tracking"))) return *s;
    ClockSync sync;
    // ptp4l through its management client: the offset from the grandmaster.
    const auto pmc = first_line_of("sh -c \"pmc -u -b 0 'GET TIME_STATUS_NP' | grep -m1 master_offset\"");
    if (!pmc.empty()) {
        std::istringstream in(pmc);
        std::string key;
        double offset = 0;
        if (in >> key >> offset) {
            // master_offset is the clock ptp4l disciplines (the NIC's, with hardware stamps),
            // not necessarily the system clock linerate's offsets go through: phc2sys reports
            // none of its own. So it is told, never taken as the system clock's bound.
            sync.source = "ptp4l";
            sync.synchronised = false;
            sync.bound_ns = std::fabs(offset);
            sync.detail = "ptp4l's master_offset " + std::to_string(static_cast<long long>(offset)) +
                          " ns is its own clock's (the NIC's); the system clock's agreement is not reported: run "
                          "chrony with the PHC as its reference clock for a bound";
            return sync;
        }
    }
    sync.detail = "neither chronyc nor pmc (ptp4l) answered";
    return sync;
}

}  // namespace

ClockInfo read_clock_info() {
    // chronyc and pmc are asked at most every kSyncAge: a controller reads every engine's
    // clock at each configuration (a procedure's every trial), and pmc with no ptp4l to answer
    // waits out its second.
    constexpr auto kSyncAge = std::chrono::seconds(10);
    static std::mutex m;
    static std::optional<std::pair<std::chrono::steady_clock::time_point, ClockSync>> asked;
    ClockInfo c;
    c.boot_id = boot_id();
    c.realtime_minus_monotonic_ns = realtime_minus_monotonic_ns();
    std::lock_guard lk(m);
    const auto now = std::chrono::steady_clock::now();
    if (!asked || now - asked->first > kSyncAge) asked = std::make_pair(now, ask_sync_sources());
    c.sync = asked->second;
    return c;
}

nlohmann::json clock_json(const ClockInfo& c) {
    nlohmann::json sync = {{"source", c.sync.source}, {"synchronised", c.sync.synchronised}, {"detail", c.sync.detail}};
    if (c.sync.bound_ns) sync["bound_ns"] = *c.sync.bound_ns;
    return {{"stamps", c.stamps},
            {"boot_id", c.boot_id},
            {"realtime_minus_monotonic_ns", c.realtime_minus_monotonic_ns},
            {"sync", sync}};
}

ClockInfo clock_from_json(const nlohmann::json& j) {
    ClockInfo c;
    c.stamps = j.value("stamps", c.stamps);
    c.boot_id = j.value("boot_id", "");
    c.realtime_minus_monotonic_ns = j.value("realtime_minus_monotonic_ns", int64_t{0});
    if (j.contains("sync") && j["sync"].is_object()) {
        const auto& s = j["sync"];
        c.sync.source = s.value("source", "none");
        c.sync.synchronised = s.value("synchronised", false);
        c.sync.detail = s.value("detail", "");
        if (s.contains("bound_ns") && s["bound_ns"].is_number()) c.sync.bound_ns = s["bound_ns"].get<double>();
    }
    return c;
}

}  // namespace lr::otg
