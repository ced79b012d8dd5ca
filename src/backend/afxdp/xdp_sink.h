// linerate's counting sink (bpf/xdp_sink.bpf.c): counts this run's test frames per queue and
// per stream in the driver and drops them. Attached with a bpf_link.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "backend/afxdp/xdp_prog.h"

struct lr_xdp_sink;

namespace lr::afxdp {

class XdpSink {
public:
    // ifindex 0: loaded, not attached (tests run it with bpf_prog_test_run).
    XdpSink(const RxMatch& m, uint32_t nonce, uint32_t streams, const std::string& ifname, unsigned ifindex,
            XdpMode mode);
    ~XdpSink();
    XdpSink(const XdpSink&) = delete;
    XdpSink& operator=(const XdpSink&) = delete;
    XdpMode attached_mode() const { return mode_; }
    uint32_t prog_id() const;
    int prog_fd() const;
    lr_sink_qstats queue_stats(uint32_t q) const;  // summed over CPUs
    // Per stream: {frames received, highest sequence + 1}, summed (max) over CPUs.
    std::vector<std::pair<uint64_t, uint64_t>> streams() const;

private:
    lr_xdp_sink* skel_ = nullptr;
    int link_fd_ = -1;
    uint32_t nstreams_ = 0;
    XdpMode mode_ = XdpMode::auto_mode;
};

}  // namespace lr::afxdp
