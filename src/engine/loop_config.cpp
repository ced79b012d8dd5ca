#include "engine/loop_config.h"

#include <sched.h>

namespace lr::engine {

LoopConfig make_loop_config(const spec::RunSpec& spec, const WorkerPlan& pl, const RunControl& ctl,
                            bool oversubscribed) {
    LoopConfig c;
    c.burst = spec.burst_size();
    c.count = pl.count;
    c.rate_pps = pl.rate_pps;
    c.frame_len = spec.frame.frame_size - packet::kFcsLen;
    c.wire_bytes = spec.frame.frame_size;
    c.yield_when_idle = oversubscribed;
    c.counters = pl.counters;
    c.ctl = &ctl;
    c.signature = spec.signed_frames();
    c.layout = packet::sig_layout(spec.frame);
    c.streams = pl.streams;
    c.nonce = spec.nonce;
    c.rx_streams = spec.rx_streams();
    c.tx_sent = pl.tx_sent;
    c.rx_result = pl.rx_result;
    for (size_t k = 0; k < pl.flows.size(); ++k) {
        c.templates.push_back(packet::build_frame(pl.flows[k]));
        if (c.signature) packet::sig_init(c.templates.back(), c.layout, spec.nonce, pl.streams[k]);
    }
    return c;
}

std::vector<int> allowed_cpus() {
    cpu_set_t set;
    CPU_ZERO(&set);
    std::vector<int> cpus;
    if (sched_getaffinity(0, sizeof(set), &set) == 0)
        for (int c = 0; c < CPU_SETSIZE; ++c)
            if (CPU_ISSET(c, &set)) cpus.push_back(c);
    if (cpus.empty()) cpus.push_back(0);
    return cpus;
}

}  // namespace lr::engine
