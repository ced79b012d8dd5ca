// The live-frames sender (bpf/xdp_live_tx.bpf.c): the kernel runs linerate's XDP program
// over page-pool copies of a template frame (BPF_PROG_RUN with BPF_F_TEST_XDP_LIVE_FRAMES,
// Linux 5.18+); the program signs each copy and redirects it out of the egress interface. No
// frame crosses into user space and no socket is involved. One program per sending port; one
// worker per TX queue calls it in a loop on its own CPU (docs/afxdp.md, "TX engines").
#pragma once
#include <algorithm>
#include <bpf/bpf.h>
#include <cstdint>
#include <pthread.h>
#include <string>
#include <vector>

#include "lr_shared.h"
#include "packet/signature.h"
#include "spec/run_spec.h"
#include "worker/worker_config.h"

struct lr_xdp_live_tx;

namespace lr::afxdp {

class LiveTxProgram {
public:
    // Loads the program for frames of layout `l` (signed when `sign`) leaving by `ifindex`,
    // with room for streams 0..nstreams-1. Throws EnvError naming what the kernel refused.
    LiveTxProgram(unsigned ifindex, const packet::SigLayout& l, bool sign, uint32_t nstreams, uint32_t frame_len);
    ~LiveTxProgram();
    LiveTxProgram(const LiveTxProgram&) = delete;
    LiveTxProgram& operator=(const LiveTxProgram&) = delete;

    int prog_fd() const;
    bool signs() const { return sign_; }
    // The kernel's batch of live frames: --burst, else spec::kLiveBatch (128), at most
    // spec::kMaxLiveBatch (256). A batch goes out at once: a veth peer's receive ring holds 256
    // frames, so a batch of 256 into a ring that is not empty overflows it (measured: 230 of
    // 100000 frames dropped at 200 kpps); each batch costs a page-pool refill and a flush, so
    // 128 costs less per frame than 32 or 64 (docs/afxdp.md).
    void set_batch(uint32_t burst) { batch_ = std::clamp<uint32_t>(burst, 1, spec::kMaxLiveBatch); }
    uint32_t batch() const { return batch_; }
    // The entries a worker's frames are counted in: its streams, or (plain frames) its CPU.
    std::vector<uint32_t> keys_of(const worker::WorkerConfig& w) const;
    // A trial starts: each of the worker's entries at 0, with its template's sum. Called with
    // no worker running.
    void reset(const worker::WorkerConfig& w);
    // Frames the program produced for entry `key` (a stream's next sequence). Read without a
    // system call.
    uint64_t produced(uint32_t key) const;
    // A run starts: its first frame of stream `key` reads the clock afresh.
    void restart_clock(uint32_t key) const;
    // Tests: the next sequence of entry `key` (near a carry, or the 2^48 wrap).
    void set_next(uint32_t key, uint64_t seq, uint16_t base_sum);

private:
    lr_xdp_live_tx* skel_ = nullptr;
    uint32_t batch_ = spec::kLiveBatch;
    lr_live_stream* streams_ = nullptr;  // the mmapped array
    size_t map_bytes_ = 0;
    uint32_t nstreams_ = 0;
    packet::SigLayout layout_;
    bool sign_ = false;
};

// Frames that share one clock reading in a batch of `batch` (the program reads the kernel's
// clock for the first of them): a power of two dividing the batch, at most LR_LIVE_TS_EVERY.
uint32_t frames_per_clock_reading(uint32_t batch);

using spec::kLiveMaxFrame;  // the largest frame (FCS included) the kernel's live-frames mode carries

// Whether this kernel runs live frames at all ("" when it does, else why not).
std::string live_frames_unsupported();

// The live-frames operations of one sending queue (worker/live_engine.h): each send() is one
// BPF_PROG_RUN of the program over copies of a template, ended early by a signal.
class LiveQueueOps {
public:
    LiveQueueOps(const LiveTxProgram& p, const worker::WorkerConfig& w);  // on the worker's thread
    bool send(size_t flow, uint64_t n);
    void interrupt();
    uint64_t produced() const;
    uint64_t produced_of(size_t k) const;
    size_t flows() const { return t_.templates.size(); }

private:
    const LiveTxProgram& p_;
    const worker::TxSetup& t_;
    std::vector<uint32_t> keys_;
    bpf_test_run_opts opts_{};
    pthread_t owner_;
};

// The live-frames engine of one queue over the program: same pacing, counters, departure
// record and per-stream sent counts as the socket engine.
bool run_live_engine(const LiveTxProgram& p, const worker::WorkerConfig& w);

}  // namespace lr::afxdp
