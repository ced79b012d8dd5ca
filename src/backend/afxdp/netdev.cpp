#include "backend/afxdp/netdev.h"

#include <cstdio>
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
#include <vector>

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

std::optional<uint64_t> veth_xdp_xmit_errors(const std::string& ifname) {
    const int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    if (fd < 0) return std::nullopt;
    auto ethtool = [&](void* cmd) {
        ifreq ifr{};
        std::snprintf(ifr.ifr_name, sizeof ifr.ifr_name, "%s", ifname.c_str());
        ifr.ifr_data = static_cast<char*>(cmd);
        return ioctl(fd, SIOCETHTOOL, &ifr) == 0;
    };
    std::optional<uint64_t> sum;
    // How many statistics, their names, their values: the layout ethtool's ioctls define.
    std::vector<uint8_t> info(sizeof(ethtool_sset_info) + sizeof(uint32_t));
    auto* si = reinterpret_cast<ethtool_sset_info*>(info.data());
    si->cmd = ETHTOOL_GSSET_INFO;
    si->sset_mask = 1ull << ETH_SS_STATS;
    if (ethtool(si) && si->sset_mask) {
        const uint32_t n = si->data[0];
        std::vector<uint8_t> names(sizeof(ethtool_gstrings) + size_t{n} * ETH_GSTRING_LEN);
        auto* gs = reinterpret_cast<ethtool_gstrings*>(names.data());
        gs->cmd = ETHTOOL_GSTRINGS;
        gs->string_set = ETH_SS_STATS;
        gs->len = n;
        std::vector<uint8_t> values(sizeof(ethtool_stats) + size_t{n} * sizeof(uint64_t));
        auto* st = reinterpret_cast<ethtool_stats*>(values.data());
        st->cmd = ETHTOOL_GSTATS;
        st->n_stats = n;
        if (ethtool(gs) && ethtool(st)) {
            sum = 0;
            for (uint32_t i = 0; i < n && i < gs->len && i < st->n_stats; ++i) {
                const std::string name(reinterpret_cast<const char*>(gs->data) + size_t{i} * ETH_GSTRING_LEN,
                                       strnlen(reinterpret_cast<const char*>(gs->data) + size_t{i} * ETH_GSTRING_LEN,
                                               ETH_GSTRING_LEN));
                if (name.starts_with("tx_queue_") && name.ends_with("_xdp_xmit_errors")) *sum += st->data[i];
            }
        }
    }
    close(fd);
    return sum;
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
