// A kernel interface as the kernel sees it: its link (carrier on an interface that is up) and
// its counters.
#pragma once
#include <cstdint>
#include <optional>
#include <string>

namespace lr::util {

// true: carrier; false: no carrier or the interface is down; nullopt: no such interface.
std::optional<bool> kernel_carrier(const std::string& ifname);
std::optional<bool> kernel_carrier(unsigned ifindex);

// Sets an interface administratively up or down (CAP_NET_ADMIN). Throws EnvError naming the
// interface and the reason.
void set_kernel_link(const std::string& ifname, bool up);

// One counter from /sys/class/net/IF/statistics/NAME (rx_dropped, tx_packets...), nullopt if
// unreadable.
std::optional<uint64_t> kernel_stat(const std::string& ifname, const char* name);
std::optional<uint64_t> kernel_stat(unsigned ifindex, const char* name);

}  // namespace lr::util
