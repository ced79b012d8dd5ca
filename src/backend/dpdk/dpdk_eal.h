// DPDK's Environment Abstraction Layer, which a process can initialise only once: the first
// session initialises it; later sessions in the same process reuse it (and re-create the
// virtual devices an earlier session closed).
#pragma once
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace lr::dpdk {

// The EAL argument list linerate uses: the user's arguments plus safe defaults for every
// default the user did not override: --in-memory, --no-telemetry, a log level, and an lcore
// map with the main lcore on `main_cpu` and worker lcore i on worker_cpus[i]. Exposed for tests.
std::vector<std::string> effective_eal_args(const std::vector<std::string>& user, int main_cpu,
                                            const std::vector<int>& worker_cpus);
// True when `args` sets the lcores itself (-l, -c or --lcores).
bool sets_lcores(const std::vector<std::string>& args);

// Initialises the EAL with `args` the first time; afterwards re-probes the --vdev devices of
// `args` that no longer exist. Throws EnvError with DPDK's reason.
void eal_open(const std::vector<std::string>& args);
// The EAL's worker lcores and the CPU each runs on, in lcore order.
std::vector<std::pair<unsigned, int>> worker_lcores();
// Free 2 MiB and 1 GiB hugepages.
uint64_t free_hugepages();

}  // namespace lr::dpdk
