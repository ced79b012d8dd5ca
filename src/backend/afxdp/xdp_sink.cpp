#include "backend/afxdp/xdp_sink.h"

#include <algorithm>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <cerrno>
#include <cstring>
#include <fmt/format.h>
#include <unistd.h>

#include "util/error.h"
#include "xdp_sink.skel.h"

namespace lr::afxdp {

static_assert(sizeof(lr_sink_qstats) == 48 && sizeof(lr_sink_stream) == 16,
              "sink structures are shared with bpf/xdp_sink.bpf.c");

XdpSink::XdpSink(const RxMatch& m, uint32_t nonce, uint32_t streams, const std::string& ifname, unsigned ifindex,
                 XdpMode mode)
    : nstreams_(std::min<uint32_t>(streams, LR_MAX_STREAMS)) {
    if (streams > LR_MAX_STREAMS)
        throw UsageError(fmt::format("the XDP sink tracks at most {} streams; {} requested", LR_MAX_STREAMS, streams));
    skel_ = lr_xdp_sink__open();
    if (!skel_) throw EnvError(fmt::format("couldn't open the XDP sink: {}", std::strerror(errno)));
    apply_match(skel_->rodata, m);
    skel_->rodata->run_nonce = nonce;
    skel_->rodata->nstreams = nstreams_;
    if (const int err = lr_xdp_sink__load(skel_); err != 0) {
        lr_xdp_sink__destroy(skel_);
        skel_ = nullptr;
        throw EnvError(fmt::format("couldn't load the XDP sink: {}", std::strerror(-err)));
    }
    if (ifindex == 0) return;  // loaded, not attached: for tests (bpf_prog_test_run)
    try {
        link_fd_ = attach_xdp_link(bpf_program__fd(skel_->progs.lr_xdp_sink), ifname, ifindex, mode, mode_);
    } catch (...) {
        lr_xdp_sink__destroy(skel_);
        skel_ = nullptr;
        throw;
    }
}

XdpSink::~XdpSink() {
    if (link_fd_ >= 0) close(link_fd_);
    if (skel_) lr_xdp_sink__destroy(skel_);
}

int XdpSink::prog_fd() const { return bpf_program__fd(skel_->progs.lr_xdp_sink); }

uint32_t XdpSink::prog_id() const { return prog_id_of(bpf_program__fd(skel_->progs.lr_xdp_sink)); }

lr_sink_qstats XdpSink::queue_stats(uint32_t q) const {
    lr_sink_qstats sum{};
    for (const auto& c : lookup_percpu<lr_sink_qstats>(skel_->maps.sink_q, q)) {
        sum.frames += c.frames;
        sum.ours += c.ours;
        sum.ours_bytes += c.ours_bytes;
        sum.foreign += c.foreign;
        sum.malformed += c.malformed;
        sum.stale += c.stale;
    }
    return sum;
}

std::vector<std::pair<uint64_t, uint64_t>> XdpSink::streams() const {
    std::vector<std::pair<uint64_t, uint64_t>> out(nstreams_);
    for (uint32_t s = 0; s < nstreams_; ++s) {
        for (const auto& c : lookup_percpu<lr_sink_stream>(skel_->maps.sink_streams, s)) {
            out[s].first += c.received;
            out[s].second = std::max<uint64_t>(out[s].second, c.highest_next);
        }
    }
    return out;
}

}  // namespace lr::afxdp
