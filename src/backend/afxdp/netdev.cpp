#include "backend/afxdp/netdev.h"

#include <cstring>
#include <filesystem>
#include <fmt/format.h>
#include <fstream>
#include <linux/ethtool.h>
#include <linux/sockios.h>
#include <net/if.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include "util/error.h"
#include "util/kernel_link.h"

namespace lr::afxdp {
namespace {

std::string read_line(const std::string& path) {
    std::ifstream f(path);
    std::string s;
    std::getline(f, s);
    return s;
}

unsigned count_dirs(const std::string& dir, const char* prefix) {
    unsigned n = 0;
    std::error_code ec;
    for (const auto& e : std::filesystem::directory_iterator(dir, ec))
        if (e.path().filename().string().rfind(prefix, 0) == 0) ++n;
    return n;
}

}  // namespace

NetdevInfo netdev_info(const std::string& ifname) {
    NetdevInfo n;
    n.name = ifname;
    if (ifname.empty() || ifname.size() >= IFNAMSIZ)
        throw UsageError(fmt::format("invalid interface name \"{}\"", ifname));
    n.ifindex = if_nametoindex(ifname.c_str());
    if (n.ifindex == 0)
        throw UsageError(fmt::format("unknown interface \"{}\" in this network namespace", ifname));
    const std::string sys = "/sys/class/net/" + ifname;
    n.rx_queues = count_dirs(sys + "/queues", "rx-");
    n.tx_queues = count_dirs(sys + "/queues", "tx-");
    n.mtu = static_cast<unsigned>(std::strtoul(read_line(sys + "/mtu").c_str(), nullptr, 10));
    // Administratively up (IFF_UP); operstate lags behind a freshly created veth.
    n.up = std::strtoul(read_line(sys + "/flags").c_str(), nullptr, 16) & IFF_UP;
    n.mac = read_line(sys + "/address");
    n.carrier = util::kernel_carrier(ifname).value_or(false);
    const long speed = std::strtol(read_line(sys + "/speed").c_str(), nullptr, 10);  // -1 or absent: unknown
    n.speed_mbps = speed > 0 ? static_cast<unsigned>(speed) : 0;

    const int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    if (fd >= 0) {
        ethtool_drvinfo di{};
        di.cmd = ETHTOOL_GDRVINFO;
        ifreq ifr{};
        std::strncpy(ifr.ifr_name, ifname.c_str(), IFNAMSIZ - 1);
        ifr.ifr_data = reinterpret_cast<char*>(&di);
        if (ioctl(fd, SIOCETHTOOL, &ifr) == 0) n.driver = di.driver;
        close(fd);
    }
    // Virtual interfaces report a made-up speed (veth says 10000 Mb/s): unknown.
    if (n.driver == "veth" || n.driver == "tun" || n.driver == "bridge" || n.driver == "dummy") n.speed_mbps = 0;
    return n;
}

bool carries_default_route(const std::string& ifname) {
    // /proc/net/route: Iface Destination Gateway ... ; destination 00000000 = default.
    std::ifstream f("/proc/net/route");
    std::string line;
    std::getline(f, line);
    while (std::getline(f, line)) {
        char iface[IFNAMSIZ + 1] = {};
        unsigned long dest = 1;
        if (std::sscanf(line.c_str(), "%16s %lx", iface, &dest) == 2 && dest == 0 && ifname == iface) return true;
    }
    std::ifstream f6("/proc/net/ipv6_route");
    while (std::getline(f6, line)) {
        // dest(32 hex) plen(2 hex) ... last field: device name
        if (line.rfind("00000000000000000000000000000000 00", 0) == 0 && line.size() > ifname.size() &&
            line.compare(line.size() - ifname.size(), ifname.size(), ifname) == 0)
            return true;
    }
    return false;
}

std::string veth_peer(const std::string& ifname) {
    // A veth's iflink is its peer's ifindex; in this namespace when an interface has it.
    std::ifstream f("/sys/class/net/" + ifname + "/iflink");
    unsigned peer = 0;
    if (!(f >> peer) || peer == 0) return {};
    char name[IF_NAMESIZE] = {};
    if (!if_indextoname(peer, name) || ifname == name) return {};
    // The same ifindex may belong to an unrelated interface here: its own iflink must point back.
    std::ifstream g(std::string("/sys/class/net/") + name + "/iflink");
    unsigned back = 0;
    if (!(g >> back) || back != if_nametoindex(ifname.c_str())) return {};
    return name;
}

}  // namespace lr::afxdp
