#include "util/kernel_link.h"

#include <fstream>
#include <net/if.h>
#include <sys/stat.h>

namespace lr::util {

std::optional<bool> kernel_carrier(const std::string& ifname) {
    const std::string dir = "/sys/class/net/" + ifname;
    struct stat st {};
    if (ifname.empty() || ifname.find('/') != std::string::npos || stat(dir.c_str(), &st) != 0) return std::nullopt;
    // Reading `carrier` fails (EINVAL) while the interface is administratively down: no link.
    std::ifstream f(dir + "/carrier");
    int c = 0;
    return static_cast<bool>(f >> c) && c == 1;
}

std::optional<bool> kernel_carrier(unsigned ifindex) {
    char name[IF_NAMESIZE] = {};
    if (ifindex == 0 || !if_indextoname(ifindex, name)) return std::nullopt;
    return kernel_carrier(std::string(name));
}

std::optional<uint64_t> kernel_stat(const std::string& ifname, const char* name) {
    if (ifname.empty() || ifname.find('/') != std::string::npos) return std::nullopt;
    std::ifstream f("/sys/class/net/" + ifname + "/statistics/" + name);
    uint64_t v = 0;
    if (f >> v) return v;
    return std::nullopt;
}

std::optional<uint64_t> kernel_stat(unsigned ifindex, const char* name) {
    char ifname[IF_NAMESIZE] = {};
    if (ifindex == 0 || !if_indextoname(ifindex, ifname)) return std::nullopt;
    return kernel_stat(std::string(ifname), name);
}

}  // namespace lr::util
