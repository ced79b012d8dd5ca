// Linux network interface facts and counters (ethtool ioctls, /sys/class/net).
#pragma once
#include <cstdint>
#include <optional>
#include <string>

namespace lr::afxdp {

struct NetdevInfo {
    std::string name;
    unsigned ifindex = 0;
    std::string driver;  // ethtool GDRVINFO, "" when unknown
    unsigned rx_queues = 0, tx_queues = 0;
    unsigned mtu = 0;
    bool up = false;
    bool carrier = false;     // the link is up (a veth whose peer is down has none)
    unsigned speed_mbps = 0;  // the link's speed; 0 when the driver reports none (veth)
    std::string mac;
};

// Throws EnvError when the interface does not exist.
NetdevInfo netdev_info(const std::string& ifname);
// The name of a veth's peer when it is in this network namespace, "" otherwise.
std::string veth_peer(const std::string& ifname);
// A veth's frames that XDP redirected into its peer (live frames, XDP_REDIRECT) and that the
// peer's full ring refused: ethtool's tx_queue_N_xdp_xmit_errors, summed. The kernel counts
// them twice, in this veth's tx_dropped and in its peer's rx_dropped. nullopt when unreadable.
std::optional<uint64_t> veth_xdp_xmit_errors(const std::string& ifname);
// True when the interface carries a default route (IPv4 or IPv6) in this namespace.
bool carries_default_route(const std::string& ifname);

}  // namespace lr::afxdp
