// One AF_XDP socket with its own UMEM, bound to one (interface, queue), for a whole session.
// It owns the rings and the state that must outlive a trial: which sending chunks are free,
// and which trial each chunk in flight belongs to (a completion that arrives after its
// trial ended is not counted in the next one). The burst operations over it are xsk_ops.h.
#pragma once
#include <cstdint>
#include <linux/if_xdp.h>
#include <string>
#include <vector>

#include "spec/run_spec.h"

struct xsk_socket;
struct xsk_umem;
struct xsk_ring_prod;
struct xsk_ring_cons;

namespace lr::afxdp {

inline constexpr uint32_t kChunk = LR_UMEM_CHUNK;  // UMEM frame size
using spec::kMaxBurst;

struct XskConfig {
    std::string ifname;
    uint32_t queue = 0;
    bool tx = false, rx = false;
    uint32_t ring = 1024;     // RX/TX ring size; fill and completion rings are twice that
    uint32_t frames = 4096;   // UMEM chunks
    spec::XskMode mode = spec::XskMode::auto_mode;
    // Chunks [0, tx_chunks) hold frames to send; the rest are handed to the kernel to
    // receive into. A reflector sends from the chunks it received into (tx_chunks = 0).
    uint32_t tx_chunks = 0;
};

class XskSocket {
public:
    explicit XskSocket(const XskConfig& cfg);  // throws EnvError with the kernel's reason
    ~XskSocket();
    XskSocket(const XskSocket&) = delete;
    XskSocket& operator=(const XskSocket&) = delete;

    int fd() const;
    bool zero_copy() const { return zero_copy_; }
    const XskConfig& config() const { return cfg_; }
    xdp_statistics stats() const;  // getsockopt(XDP_STATISTICS); zeros when unavailable

    xsk_ring_prod& fill_ring();
    xsk_ring_prod& tx_ring();
    xsk_ring_cons& comp_ring();
    xsk_ring_cons& rx_ring();
    uint8_t* umem() const { return static_cast<uint8_t*>(umem_area_); }

    // Sending chunks: a stack of free chunk addresses, and the trial each chunk was last
    // sent in. Capacity is reserved once: the hot path never allocates.
    std::vector<uint64_t>& free_tx() { return free_tx_; }
    std::vector<uint8_t>& chunk_trial() { return chunk_trial_; }
    // Per sending chunk, for queues that carry streams: its frame's length and template.
    std::vector<uint16_t>& chunk_len() { return chunk_len_; }
    std::vector<uint32_t>& chunk_tag() { return chunk_tag_; }
    uint8_t trial() const { return trial_; }
    // A new trial begins: completions of earlier trials no longer count.
    void next_trial() { ++trial_; }
    // Writes frame (i mod frames.size()) into sending chunk i, after waiting (bounded) for
    // chunks still in flight. Throws EnvError when the kernel never returns some.
    void load_templates(const std::vector<std::vector<uint8_t>>& frames);
    const std::vector<std::vector<uint8_t>>& loaded() const { return loaded_; }
    // Discards received frames waiting in the RX ring (returns their chunks to the kernel).
    uint64_t flush_rx();

private:
    struct Rings;
    void reclaim_stale();
    // The constructor's steps: the UMEM registered over umem_area_ (throws, everything
    // released, on failure), then the socket bound in cfg.mode (returns libxdp's error).
    void register_umem(const XskConfig& cfg);
    int create_socket(const XskConfig& cfg);
    XskConfig cfg_;
    void* umem_area_ = nullptr;
    size_t umem_size_ = 0;
    xsk_umem* umem_ = nullptr;
    xsk_socket* xsk_ = nullptr;
    Rings* r_ = nullptr;
    bool zero_copy_ = false;
    std::vector<uint64_t> free_tx_;
    std::vector<uint8_t> chunk_trial_;
    std::vector<uint16_t> chunk_len_;
    std::vector<uint32_t> chunk_tag_;
    uint8_t trial_ = 0;
    std::vector<std::vector<uint8_t>> loaded_;
};

}  // namespace lr::afxdp
