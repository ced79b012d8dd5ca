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

static_assert(sizeof(lr_sink_qstats) == 40 && sizeof(lr_sink_stream) == 16,
              "sink structures are shared with bpf/xdp_sink.bpf.c");

XdpSink::XdpSink(const RxMatch& m, uint16_t nonce, uint32_t streams, const std::string& ifname, unsigned ifindex,
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

uint32_t XdpSink::prog_id() const {
    bpf_prog_info info{};
    uint32_t len = sizeof(info);
    if (bpf_obj_get_info_by_fd(bpf_program__fd(skel_->progs.lr_xdp_sink), &info, &len) != 0) return 0;
    return info.id;
}

lr_sink_qstats XdpSink::queue_stats(uint32_t q) const {
    lr_sink_qstats sum{};
    const int ncpu = libbpf_num_possible_cpus();
    if (ncpu <= 0) return sum;
    std::vector<lr_sink_qstats> v(static_cast<size_t>(ncpu));
    if (bpf_map__lookup_elem(skel_->maps.sink_q, &q, sizeof q, v.data(), v.size() * sizeof(v[0]), 0) != 0) return sum;
    for (const auto& c : v) {
        sum.frames += c.frames;
        sum.ours += c.ours;
        sum.ours_bytes += c.ours_bytes;
        sum.foreign += c.foreign;
        sum.malformed += c.malformed;
    }
    return sum;
}

std::vector<std::pair<uint64_t, uint64_t>> XdpSink::streams() const {
    std::vector<std::pair<uint64_t, uint64_t>> out(nstreams_);
    const int ncpu = libbpf_num_possible_cpus();
    if (ncpu <= 0) return out;
    std::vector<lr_sink_stream> v(static_cast<size_t>(ncpu));
    for (uint32_t s = 0; s < nstreams_; ++s) {
        if (bpf_map__lookup_elem(skel_->maps.sink_streams, &s, sizeof s, v.data(), v.size() * sizeof(v[0]), 0) != 0)
            continue;
        for (const auto& c : v) {
            out[s].first += c.received;
            out[s].second = std::max<uint64_t>(out[s].second, c.highest_next);
        }
    }
    return out;
}

}  // namespace lr::afxdp
