// One AF_XDP socket with its own UMEM, bound to one (interface, queue), owned by one worker.
#pragma once
#include <cstdint>
#include <linux/if_xdp.h>
#include <string>
#include <vector>

#include "engine/loop_config.h"

struct xsk_socket;
struct xsk_umem;

namespace lr::afxdp {

enum class CopyMode { auto_mode, copy, zero_copy };
const char* copy_mode_str(CopyMode m);
CopyMode parse_copy_mode(const std::string& s);  // throws UsageError

inline constexpr uint32_t kChunk = 4096;  // UMEM frame size
inline constexpr uint32_t kMaxBurst = 512;

struct XskConfig {
    std::string ifname;
    uint32_t queue = 0;
    bool tx = false, rx = false;
    uint32_t ring = 1024;     // RX/TX ring size; fill and completion rings are twice that
    uint32_t frames = 4096;   // UMEM chunks
    CopyMode mode = CopyMode::auto_mode;
    // Request/response: TX sends from chunks [0, rx_first_chunk), RX fills the rest.
    uint32_t rx_first_chunk = 0;
};

class XskQueue {
public:
    explicit XskQueue(const XskConfig& cfg);  // throws EnvError with the kernel's reason
    ~XskQueue();
    XskQueue(const XskQueue&) = delete;
    XskQueue& operator=(const XskQueue&) = delete;

    int fd() const;
    bool zero_copy() const { return zero_copy_; }
    const XskConfig& config() const { return cfg_; }
    xdp_statistics stats() const;  // getsockopt(XDP_STATISTICS); zeros when unavailable

    // TX: writes frame (i mod frames.size()) into every UMEM chunk, once.
    void load_templates(const std::vector<std::vector<uint8_t>>& frames);

    using LoopCtx = engine::LoopConfig;

    // Returns false when a non-transient send error ended the loop.
    bool tx_loop(const LoopCtx& c);
    // Reflector (socket with RX and TX rings): each received linerate frame goes back out
    // from its own UMEM chunk with addresses and ports swapped. `c.counters` are the TX
    // counters (reflected), `rx` the RX counters (received).
    void reflect_loop(const LoopCtx& c, stats::QueueCounters& rx);
    // Request/response on this socket: send requests (TX config `c`), receive the reflected
    // responses (RX config `r`), at most `outstanding` unanswered; see docs/measurement.md.
    void rr_loop(const LoopCtx& c, const LoopCtx& r, uint32_t outstanding, double timeout_s);
    void rx_loop(const LoopCtx& c);

private:
    struct Rings;
    XskConfig cfg_;
    void* umem_area_ = nullptr;
    size_t umem_size_ = 0;
    xsk_umem* umem_ = nullptr;
    xsk_socket* xsk_ = nullptr;
    Rings* r_ = nullptr;
    bool zero_copy_ = false;
};

}  // namespace lr::afxdp
