#include "backend/afxdp/reflect_in_driver.h"

#include <algorithm>
#include <chrono>
#include <fmt/format.h>
#include <thread>

#include "backend/afxdp/netdev.h"
#include "backend/afxdp/xdp_reflect.h"
#include "util/error.h"

namespace lr::afxdp {

DriverReflectCounts reflect_in_driver(const DriverReflectSpec& s, const std::function<bool()>& stop,
                                      const std::function<void(const DriverReflectInfo&)>& on_attached,
                                      const std::function<void(const DriverReflectCounts&)>& on_interval) {
    const auto nd = netdev_info(s.port);
    if (!nd.up) throw EnvError(fmt::format("interface {} is down", nd.name));
    const XdpMode mode = s.mode == spec::XdpMode::native ? XdpMode::native
                         : s.mode == spec::XdpMode::skb  ? XdpMode::skb
                                                         : XdpMode::auto_mode;
    XdpReflector refl(s.match, nd.name, nd.ifindex, mode);
    on_attached({nd.name, nd.driver, xdp_mode_str(refl.attached_mode()), refl.prog_id()});
    using Clock = std::chrono::steady_clock;
    const auto t0 = Clock::now();
    auto last = t0;
    const unsigned queues = std::max(1u, nd.rx_queues);
    auto counts = [&] {
        const auto st = refl.stats(queues);
        return DriverReflectCounts{std::chrono::duration<double>(Clock::now() - t0).count(), st.received,
                                   st.redirected, st.passed};
    };
    for (;;) {
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
        const auto now = Clock::now();
        const bool done = std::chrono::duration<double>(now - t0).count() >= s.duration_s || stop();
        if (std::chrono::duration<double>(now - last).count() >= s.interval_s || done) {
            on_interval(counts());
            last = now;
        }
        if (done) break;
    }
    return counts();
}

}  // namespace lr::afxdp
