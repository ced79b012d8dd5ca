// `linerate reflect --backend xdp`: linerate's XDP reflector does the work in the driver
// (XDP_TX); this only attaches it (bpf_link), reads its counters each interval, and detaches.
#pragma once
#include <cstdint>
#include <functional>
#include <string>

#include "backend/afxdp/xdp_prog.h"
#include "spec/choices.h"

namespace lr::afxdp {

struct DriverReflectSpec {
    std::string port;
    RxMatch match;  // which frames are test frames (protocols, destination ports)
    spec::XdpMode mode = spec::XdpMode::auto_mode;
    double duration_s = 60, interval_s = 1;
};

struct DriverReflectCounts {
    double t = 0;  // seconds since attach
    uint64_t received = 0, reflected = 0, passed = 0;
};

struct DriverReflectInfo {
    std::string port, driver, xdp_mode;
    uint32_t prog_id = 0;
};

// Runs until the duration has passed or `stop()` says so. `on_attached` is called once the
// program is attached, `on_interval` every interval with the totals so far. Returns the
// final totals. Throws lr::Error when the program cannot be attached.
DriverReflectCounts reflect_in_driver(const DriverReflectSpec& s, const std::function<bool()>& stop,
                                      const std::function<void(const DriverReflectInfo&)>& on_attached,
                                      const std::function<void(const DriverReflectCounts&)>& on_interval);

}  // namespace lr::afxdp
