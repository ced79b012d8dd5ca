// CPUs this process may run on, and pinning a thread to one.
#pragma once
#include <thread>
#include <vector>

namespace lr::util {

// CPUs in this process's affinity mask, ascending (at least one).
std::vector<int> allowed_cpus();
// Pins `t` to `cpu`; returns false when the kernel refused.
bool pin_thread(std::thread& t, int cpu);

}  // namespace lr::util
