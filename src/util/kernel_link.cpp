#include "util/kernel_link.h"

#include <cerrno>
#include <cstring>
#include <fmt/format.h>
#include <fstream>
#include <net/if.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "util/error.h"

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

void set_kernel_link(const std::string& ifname, bool up) {
    const auto fail = [&](const char* what) {
        return EnvError(fmt::format("couldn't set {} {}: {} ({})", ifname, up ? "up" : "down", std::strerror(errno),
                                    what));
    };
    if (ifname.empty() || ifname.size() >= IF_NAMESIZE) throw EnvError(fmt::format("no interface named \"{}\"", ifname));
    const int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    if (fd < 0) throw fail("socket");
    ifreq r{};
    std::memcpy(r.ifr_name, ifname.data(), ifname.size());
    if (ioctl(fd, SIOCGIFFLAGS, &r) != 0) {
        const auto e = fail("reading its flags");
        close(fd);
        throw e;
    }
    r.ifr_flags = static_cast<short>(up ? (r.ifr_flags | IFF_UP) : (r.ifr_flags & ~IFF_UP));
    if (ioctl(fd, SIOCSIFFLAGS, &r) != 0) {
        const auto e = fail(errno == EPERM ? "it needs CAP_NET_ADMIN" : "setting its flags");
        close(fd);
        throw e;
    }
    close(fd);
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
