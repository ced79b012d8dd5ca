// linerate's XDP receive program (bpf/xdp_rx.bpf.c), embedded as a libbpf skeleton and
// attached with a bpf_link: the kernel detaches it when the last fd closes, so a killed
// linerate leaves nothing attached. A foreign XDP program on the interface is never touched.
#pragma once
#include <cstdint>
#include <cstring>
#include <vector>
#include <memory>
#include <string>

#include "lr_shared.h"

struct bpf_map;
struct lr_xdp_rx;

namespace lr::afxdp {

enum class XdpMode { auto_mode, native, skb };
const char* xdp_mode_str(XdpMode m);
XdpMode parse_xdp_mode(const std::string& s);  // throws UsageError

// What a linerate test frame looks like (programmed into the program's read-only data).
struct RxMatch {
    bool all = false;  // every frame (linerate impair), whatever it is
    bool udp = true, tcp = true;
    uint16_t src_port_lo = 0, src_port_hi = 65535;
    uint16_t dst_port_lo = 0, dst_port_hi = 65535;
};

// Programs `m` into a skeleton's read-only data (every linerate XDP program shares the
// classifier's variables, bpf/lr_classify.bpf.h).
template <class Rodata>
void apply_match(Rodata* ro, const RxMatch& m) {
    ro->match_udp = m.udp;
    ro->match_tcp = m.tcp;
    ro->src_port_lo = m.src_port_lo;
    ro->src_port_hi = m.src_port_hi;
    ro->dst_port_lo = m.dst_port_lo;
    ro->dst_port_hi = m.dst_port_hi;
    ro->match_all = m.all;
}

class XdpRxProgram {
public:
    // Loads the program; does not attach. Throws EnvError with the kernel's reason.
    explicit XdpRxProgram(const RxMatch& m);
    ~XdpRxProgram();
    XdpRxProgram(const XdpRxProgram&) = delete;
    XdpRxProgram& operator=(const XdpRxProgram&) = delete;

    // Attaches to `ifindex` with a bpf_link. Throws EnvError if another XDP program is
    // attached (naming its id) or the mode is unavailable. `auto_mode` tries native, then SKB.
    void attach(const std::string& ifname, unsigned ifindex, XdpMode mode);
    XdpMode attached_mode() const { return mode_; }
    bool attached() const { return link_fd_ >= 0; }
    // Points queue `q`'s entry of the XSKMAP at socket `xsk_fd`.
    void add_socket(uint32_t q, int xsk_fd);
    // Per-queue counters summed over CPUs.
    lr_xdp_qstats queue_stats(uint32_t q) const;
    int prog_fd() const;
    uint32_t prog_id() const;

private:
    lr_xdp_rx* skel_ = nullptr;
    int link_fd_ = -1;
    XdpMode mode_ = XdpMode::auto_mode;
};

// The kernel's id of the program behind `prog_fd` (0 if unknown).
uint32_t prog_id_of(int prog_fd);

// Reads entry `key` of a per-CPU array map: one value per possible CPU (empty on failure).
// T must be the map's value type.
std::vector<uint8_t> lookup_percpu_raw(const bpf_map* map, uint32_t key, size_t value_size);
template <class T>
std::vector<T> lookup_percpu(const bpf_map* map, uint32_t key) {
    const auto raw = lookup_percpu_raw(map, key, sizeof(T));
    std::vector<T> v(raw.size() / sizeof(T));
    if (!v.empty()) std::memcpy(v.data(), raw.data(), raw.size());
    return v;
}

// Id of the XDP program attached to `ifindex` in any mode, 0 when none.
uint32_t attached_xdp_prog_id(unsigned ifindex);

// Attaches `prog_fd` to `ifindex` with a bpf_link; refuses when another program is there.
// Returns the link fd (closing it detaches) and sets `obtained`. Throws EnvError.
int attach_xdp_link(int prog_fd, const std::string& ifname, unsigned ifindex, XdpMode mode, XdpMode& obtained);

}  // namespace lr::afxdp
