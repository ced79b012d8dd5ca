// CPUs this process may run on, pinning a thread to one, and how long a thread waited for one.
#pragma once
#include <cstdint>
#include <optional>
#include <string_view>
#include <thread>
#include <vector>

namespace lr::util {

// CPUs in this process's affinity mask as it was at the first call (main makes it at start),
// ascending, at least one: a thread restricted later (`serve` keeps its own threads off the
// workers' CPUs) does not shrink what its sessions place workers on.
std::vector<int> allowed_cpus();
// Pins `t` to `cpu`; returns false when the kernel refused.
bool pin_thread(std::thread& t, int cpu);
// Restricts the calling thread (and the threads it creates later) to `cpus`; false when the
// kernel refused or `cpus` is empty.
bool restrict_current_thread(const std::vector<int>& cpus);
// Sets the calling thread's nice value; returns 0 or the errno of the refusal (EACCES or EPERM
// without CAP_SYS_NICE).
int set_thread_nice(int nice);
// The calling thread's nice value.
int thread_nice();
// The nice value of this process's scheduling group when the kernel groups tasks by session
// (kernel.sched_autogroup_enabled = 1): a thread's nice value then weighs only against the
// threads of its own session, and the group's against other sessions'. nullopt: no groups,
// or the kernel does not say.
std::optional<int> session_group_nice();
// The nice value in a /proc/PID/autogroup line ("/autogroup-25 nice 0"); nullopt if it is not
// one.
std::optional<int> parse_autogroup_nice(std::string_view line);
// How long the calling thread has been runnable but not running, in ns: the kernel's run
// delay (/proc/thread-self/schedstat, second field). 0 where the kernel does not keep it.
uint64_t thread_cpu_wait_ns();

}  // namespace lr::util
