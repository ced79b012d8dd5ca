#include "backend/dpdk/dpdk_eal.h"

#include <cstdlib>
#include <cstring>
#include <fmt/format.h>
#include <fstream>

#include <rte_bus.h>
#include <rte_dev.h>
#include <rte_eal.h>
#include <rte_errno.h>
#include <rte_ethdev.h>
#include <rte_lcore.h>

#include "util/error.h"

namespace lr::dpdk {
namespace {

bool has_arg(const std::vector<std::string>& v, std::initializer_list<const char*> names) {
    for (const auto& a : v)
        for (const char* n : names) {
            const size_t len = std::strlen(n);
            // "--lcores", "--lcores=..", and short forms glued to their value ("-l0-3").
            if (a.compare(0, len, n) == 0 && (a.size() == len || a[len] == '=' || n[1] != '-')) return true;
        }
    return false;
}

// The --vdev arguments, as devargs strings.
std::vector<std::string> vdevs(const std::vector<std::string>& args) {
    std::vector<std::string> v;
    for (size_t i = 0; i < args.size(); ++i) {
        if (args[i].rfind("--vdev=", 0) == 0) v.push_back(args[i].substr(7));
        else if (args[i] == "--vdev" && i + 1 < args.size()) v.push_back(args[++i]);
    }
    return v;
}

bool g_eal_up = false;
std::vector<std::string> g_eal_args;

void cleanup_at_exit() {
    uint16_t p;
    RTE_ETH_FOREACH_DEV(p) {
        rte_eth_dev_stop(p);
        rte_eth_dev_close(p);
    }
    rte_eal_cleanup();
}

}  // namespace

bool sets_lcores(const std::vector<std::string>& args) { return has_arg(args, {"-l", "-c", "--lcores"}); }

std::vector<std::string> effective_eal_args(const std::vector<std::string>& user, int main_cpu,
                                            const std::vector<int>& worker_cpus) {
    std::vector<std::string> a = user;
    if (!sets_lcores(a)) {
        std::string m = fmt::format("0@{}", main_cpu);
        for (size_t i = 0; i < worker_cpus.size(); ++i) m += fmt::format(",{}@{}", i + 1, worker_cpus[i]);
        a.push_back("--lcores=" + m);
    }
    if (!has_arg(a, {"--in-memory", "--file-prefix", "--proc-type"})) a.push_back("--in-memory");
    if (!has_arg(a, {"--telemetry", "--no-telemetry"})) a.push_back("--no-telemetry");
    if (!has_arg(a, {"--log-level"})) a.push_back("--log-level=lib.eal:warning");
    return a;
}

uint64_t free_hugepages() {
    uint64_t total = 0;
    for (const char* sz : {"hugepages-2048kB", "hugepages-1048576kB"}) {
        std::ifstream f(fmt::format("/sys/kernel/mm/hugepages/{}/free_hugepages", sz));
        uint64_t n = 0;
        if (f >> n) total += n;
    }
    return total;
}

void eal_open(const std::vector<std::string>& args) {
    if (g_eal_up) {
        // A later session: the EAL stays as the first one set it up; virtual devices that an
        // earlier session closed are created again.
        for (const auto& d : vdevs(args)) {
            const std::string name = d.substr(0, d.find(','));
            uint16_t pid = 0;
            if (rte_eth_dev_get_port_by_name(name.c_str(), &pid) == 0) continue;
            if (const int r = rte_dev_probe(d.c_str()); r != 0)
                throw EnvError(fmt::format("couldn't create DPDK device {} again: {}", d, rte_strerror(-r)));
        }
        return;
    }
    if (!has_arg(args, {"--no-huge"}) && free_hugepages() == 0)
        throw EnvError(
            "no free hugepages: reserve some (echo 512 > /sys/kernel/mm/hugepages/hugepages-2048kB/nr_hugepages, "
            "or scripts/testbed.sh up) or add --no-huge to the EAL arguments");
    std::vector<std::string> store = args;
    store.insert(store.begin(), "linerate");
    std::vector<char*> argv;
    for (auto& s : store) argv.push_back(s.data());
    argv.push_back(nullptr);
    if (rte_eal_init(static_cast<int>(store.size()), argv.data()) < 0)
        throw EnvError(fmt::format("DPDK EAL initialisation failed: {} (EAL arguments: {})", rte_strerror(rte_errno),
                                   fmt::join(args, " ")));
    g_eal_up = true;
    g_eal_args = args;
    std::atexit(cleanup_at_exit);
}

std::vector<std::pair<unsigned, int>> worker_lcores() {
    std::vector<std::pair<unsigned, int>> v;
    unsigned lc;
    RTE_LCORE_FOREACH_WORKER(lc) v.emplace_back(lc, rte_lcore_to_cpu_id(static_cast<int>(lc)));
    return v;
}

}  // namespace lr::dpdk
