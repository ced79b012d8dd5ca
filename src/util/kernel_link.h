// A kernel interface's link as the kernel sees it: carrier on an interface that is up.
#pragma once
#include <optional>
#include <string>

namespace lr::util {

// true: carrier; false: no carrier or the interface is down; nullopt: no such interface.
std::optional<bool> kernel_carrier(const std::string& ifname);
std::optional<bool> kernel_carrier(unsigned ifindex);

}  // namespace lr::util
