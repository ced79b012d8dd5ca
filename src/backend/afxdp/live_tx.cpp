#include "backend/afxdp/live_tx.h"

#include <algorithm>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <cerrno>
#include <cstring>
#include <fmt/format.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <climits>
#include <csignal>
#include <pthread.h>
#include <thread>

#include "stats/tsc_clock.h"
#include "util/error.h"
#include "worker/engine_common.h"
#include "worker/pacer.h"
#include "worker/live_engine.h"
#include "xdp_live_tx.skel.h"

namespace lr::afxdp {

static_assert(sizeof(lr_live_stream) == 64, "one cache line per stream, shared with bpf/xdp_live_tx.bpf.c");
static_assert((LR_LIVE_TS_EVERY & (LR_LIVE_TS_EVERY - 1)) == 0, "frames per clock reading: a power of two");

namespace {

// One's-complement sum of the L4 words of a signed template (sequence and timestamp zero),
// from its checksum: ~checksum.
uint16_t template_sum(const std::vector<uint8_t>& t, const packet::SigLayout& l) {
    if (t.size() < size_t(l.csum_off) + 2) return 0;
    return static_cast<uint16_t>(~(t[l.csum_off] << 8 | t[l.csum_off + 1]));
}

uint32_t stream_off(const packet::SigLayout& l) { return l.tcp ? l.l4_off + 18u : l.id_off + 2u; }

}  // namespace

std::string live_frames_unsupported() {
    utsname u{};
    uname(&u);
    unsigned major = 0, minor = 0;
    if (std::sscanf(u.release, "%u.%u", &major, &minor) != 2) return {};
    if (major < 5 || (major == 5 && minor < 18))
        return fmt::format("kernel {} has no XDP live frames (Linux 5.18 or later)", u.release);
    return {};
}

LiveTxProgram::LiveTxProgram(unsigned ifindex, const packet::SigLayout& l, bool sign, uint32_t nstreams,
                             uint32_t frame_len)
    : nstreams_(std::max<uint32_t>(nstreams, 1)), layout_(l), sign_(sign && l.level != packet::SigLevel::none) {
    if (const auto why = live_frames_unsupported(); !why.empty()) throw EnvError("--tx-engine live: " + why);
    if (frame_len + packet::kFcsLen > kLiveMaxFrame)
        throw UsageError(fmt::format("--tx-engine live carries frames of at most {} bytes (one page per frame, no "
                                     "jumbo frames); {} requested: use --tx-engine socket",
                                     kLiveMaxFrame, frame_len + packet::kFcsLen));
    skel_ = lr_xdp_live_tx__open();
    if (!skel_) throw EnvError(fmt::format("couldn't open the live-frames program: {}", std::strerror(errno)));
    auto* ro = skel_->rodata;
    ro->out_ifindex = ifindex;
    if (sign_) {
        ro->csum_off = l.csum_off;
        ro->seq_off = l.seq_off;
        ro->ts_off = l.ts_off;
        ro->stream_off = stream_off(l);
        ro->seq_bits = l.seq_bits;
        ro->has_ts = l.level == packet::SigLevel::seq_ts;
        ro->udp = !l.tcp;
        ro->min_len = std::max({l.csum_off + 2u, l.seq_off + (l.seq_bits == 32 ? 4u : 6u), stream_off(l) + 2u,
                                ro->has_ts ? l.ts_off + 6u : 0u});
    } else {
        ro->seq_bits = 0;
    }
    bpf_map__set_max_entries(skel_->maps.streams, nstreams_);
    if (const int err = lr_xdp_live_tx__load(skel_); err != 0) {
        lr_xdp_live_tx__destroy(skel_);
        skel_ = nullptr;
        throw EnvError(fmt::format("couldn't load the live-frames program: {}", std::strerror(-err)));
    }
    map_bytes_ = size_t(nstreams_) * sizeof(lr_live_stream);
    const size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
    map_bytes_ = (map_bytes_ + page - 1) / page * page;
    void* m = mmap(nullptr, map_bytes_, PROT_READ | PROT_WRITE, MAP_SHARED, bpf_map__fd(skel_->maps.streams), 0);
    if (m == MAP_FAILED) {
        lr_xdp_live_tx__destroy(skel_);
        skel_ = nullptr;
        throw EnvError(fmt::format("couldn't map the live-frames stream table: {}", std::strerror(errno)));
    }
    streams_ = static_cast<lr_live_stream*>(m);
}

LiveTxProgram::~LiveTxProgram() {
    if (streams_) munmap(streams_, map_bytes_);
    if (skel_) lr_xdp_live_tx__destroy(skel_);
}

int LiveTxProgram::prog_fd() const { return bpf_program__fd(skel_->progs.lr_live_tx); }

std::vector<uint32_t> LiveTxProgram::keys_of(const worker::WorkerConfig& w) const {
    if (!sign_) return {static_cast<uint32_t>(std::max(w.cpu, 0))};
    return {w.tx.streams.begin(), w.tx.streams.end()};
}

void LiveTxProgram::reset(const worker::WorkerConfig& w) {
    const auto keys = keys_of(w);
    for (size_t k = 0; k < keys.size(); ++k) {
        if (keys[k] >= nstreams_)
            throw EnvError(fmt::format("internal: live-frames entry {} beyond the table of {}", keys[k], nstreams_));
        auto& s = streams_[keys[k]];
        __atomic_store_n(&s.seq, 0, __ATOMIC_RELAXED);
        s.base_sum = sign_ && k < w.tx.templates.size() ? template_sum(w.tx.templates[k], layout_) : 0;
        s.ts_left = 0;
        s.ts_every = frames_per_clock_reading(batch_);
    }
}

uint32_t frames_per_clock_reading(uint32_t batch) {
    // The largest power of two that divides the batch, at most LR_LIVE_TS_EVERY: a run starts
    // a batch, so every clock reading then serves frames of one batch only.
    return std::min<uint32_t>(LR_LIVE_TS_EVERY, batch & (~batch + 1));
}

void LiveTxProgram::restart_clock(uint32_t key) const {
    if (key < nstreams_) __atomic_store_n(&streams_[key].ts_left, 0, __ATOMIC_RELAXED);
}

void LiveTxProgram::set_next(uint32_t key, uint64_t seq, uint16_t base_sum) {
    if (key >= nstreams_) return;
    streams_[key].seq = seq;
    streams_[key].base_sum = base_sum;
}

uint64_t LiveTxProgram::produced(uint32_t key) const {
    return key < nstreams_ ? __atomic_load_n(&streams_[key].seq, __ATOMIC_RELAXED) : 0;
}

namespace {

// The kernel's live-frames loop ends at a pending signal (EINTR): one call may run as long as
// the trial, and a stop is a signal away. The handler does nothing.
constexpr int kStopSignal = SIGURG;  // ignored by default: a stray one harms nothing
void on_stop_signal(int) {}

void install_stop_handler() {
    static const bool installed = [] {
        struct sigaction sa {};
        sa.sa_handler = on_stop_signal;
        sigemptyset(&sa.sa_mask);
        sa.sa_flags = 0;  // no SA_RESTART: the call returns EINTR
        sigaction(kStopSignal, &sa, nullptr);
        return true;
    }();
    (void)installed;
}

}  // namespace

LiveQueueOps::LiveQueueOps(const LiveTxProgram& p, const worker::WorkerConfig& w)
    : p_(p), t_(w.tx), keys_(p.keys_of(w)), owner_(pthread_self()) {
    install_stop_handler();
    opts_.sz = sizeof(opts_);
    opts_.flags = BPF_F_TEST_XDP_LIVE_FRAMES;
    // The kernel's batch: frames set up, run and flushed together. Each batch costs a page-pool
    // refill and a flush of the redirected frames: a larger one costs less CPU per frame, and
    // arrives at once (docs/afxdp.md).
    opts_.batch_size = p.batch();
}

bool LiveQueueOps::send(size_t flow, uint64_t n) {
    opts_.data_in = t_.templates[flow].data();
    opts_.data_size_in = t_.frame_len;
    opts_.repeat = static_cast<int>(n);
    // The run's first frame reads the clock: no stamp from before this call (a pacer's wait).
    if (p_.signs() && flow < t_.streams.size()) p_.restart_clock(t_.streams[flow]);
    // A pending signal ends the kernel's loop (EINTR): the stop, not an error.
    return bpf_prog_test_run_opts(p_.prog_fd(), &opts_) == 0 || errno == EINTR;
}

void LiveQueueOps::interrupt() { pthread_kill(owner_, kStopSignal); }

uint64_t LiveQueueOps::produced() const {
    uint64_t n = 0;
    for (auto k : keys_) n += p_.produced(k);
    return n;
}

uint64_t LiveQueueOps::produced_of(size_t k) const {
    return p_.signs() && k < t_.streams.size() ? p_.produced(t_.streams[k]) : 0;
}

bool run_live_engine(const LiveTxProgram& p, const worker::WorkerConfig& w) {
    LiveQueueOps ops(p, w);
    return worker::live_engine(ops, w);
}

}  // namespace lr::afxdp
