#include "util/cpus.h"

#include <fstream>
#include <pthread.h>
#include <sched.h>
#include <sys/resource.h>
#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <string>

namespace lr::util {

namespace {
std::vector<int> affinity_now() {
    cpu_set_t set;
    CPU_ZERO(&set);
    std::vector<int> cpus;
    if (sched_getaffinity(0, sizeof(set), &set) == 0)
        for (int c = 0; c < CPU_SETSIZE; ++c)
            if (CPU_ISSET(c, &set)) cpus.push_back(c);
    if (cpus.empty()) cpus.push_back(0);
    return cpus;
}
}  // namespace

std::vector<int> allowed_cpus() {
    static const std::vector<int> at_start = affinity_now();
    return at_start;
}

bool pin_thread(std::thread& t, int cpu) {
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(cpu, &set);
    return pthread_setaffinity_np(t.native_handle(), sizeof(set), &set) == 0;
}

bool restrict_current_thread(const std::vector<int>& cpus) {
    if (cpus.empty()) return false;
    cpu_set_t set;
    CPU_ZERO(&set);
    for (int c : cpus) CPU_SET(c, &set);
    return pthread_setaffinity_np(pthread_self(), sizeof(set), &set) == 0;
}

int set_thread_nice(int nice) {
    return setpriority(PRIO_PROCESS, static_cast<id_t>(gettid()), nice) == 0 ? 0 : errno;
}

int thread_nice() {
    errno = 0;
    const int n = getpriority(PRIO_PROCESS, static_cast<id_t>(gettid()));
    return errno ? 0 : n;
}

std::optional<int> parse_autogroup_nice(std::string_view line) {
    constexpr std::string_view kGroup = "/autogroup-", kNice = " nice ";
    if (!line.starts_with(kGroup)) return std::nullopt;
    const size_t at = line.find(kNice);
    if (at == std::string_view::npos) return std::nullopt;
    const std::string_view v = line.substr(at + kNice.size());
    int nice = 0;
    const auto [end, ec] = std::from_chars(v.data(), v.data() + v.size(), nice);
    if (ec != std::errc{} || nice < -20 || nice > 19) return std::nullopt;
    for (const char* c = end; c != v.data() + v.size(); ++c)
        if (*c != '\n' && *c != ' ') return std::nullopt;
    return nice;
}

std::optional<int> session_group_nice() {
    std::ifstream enabled("/proc/sys/kernel/sched_autogroup_enabled");
    int on = 0;
    if (!(enabled >> on) || on != 1) return std::nullopt;
    std::ifstream group("/proc/self/autogroup");
    std::string line;
    if (!std::getline(group, line)) return std::nullopt;
    return parse_autogroup_nice(line);
}

uint64_t thread_cpu_wait_ns() {
    std::ifstream f("/proc/thread-self/schedstat");
    uint64_t on_cpu = 0, waiting = 0;
    return f >> on_cpu >> waiting ? waiting : 0;
}

}  // namespace lr::util
