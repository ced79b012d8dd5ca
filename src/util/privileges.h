// Capabilities: what linerate needs, what it holds, and dropping the rest once set up.
// Capabilities are per thread: drop_all_but() applies to the calling thread and to every
// thread created after it; threads that existed before (DPDK's lcore threads) call
// adopt_dropped() when they start work.
#pragma once
#include <string>
#include <vector>

namespace lr::util {

struct CapNeed {
    int cap;          // CAP_NET_ADMIN, ... (linux/capability.h)
    std::string why;  // "attach XDP programs, set the MTU and the queue count"
};

std::string cap_name(int cap);  // "CAP_NET_ADMIN"
bool has_capability(int cap);   // in the calling thread's effective set

// Throws EnvError naming every missing capability, why it is needed and how to grant it.
void require_capabilities(const std::vector<CapNeed>& needs, const std::string& what);

// Keeps only `keep` (effective and permitted; inheritable and ambient cleared) and, when
// CAP_SETPCAP allows it, empties the bounding set so no exec regains anything.
// Throws EnvError if the kernel refuses.
void drop_all_but(const std::vector<int>& keep);
// On a thread older than drop_all_but(): take the same set (once). Never throws: false when
// the kernel refused (the thread then keeps what it had).
bool adopt_dropped() noexcept;

// For the report: the effective set when drop_all_but() ran and right after it (both empty
// before it ran).
struct CapRecord {
    bool dropped = false;
    std::vector<std::string> before, after;
};
CapRecord capability_record();

}  // namespace lr::util
