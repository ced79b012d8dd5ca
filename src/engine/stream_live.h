// The control thread's side of live per-stream counts: each interval it reads what the
// workers copied out since it last asked (stats::CountsExchange: each TX share's frames, each
// receiver's flows), adds them up per stream of the mix, and asks again. The counts are as of
// the workers' last answer: at most one interval old.
#pragma once
#include <vector>

#include "engine/planner.h"
#include "result/result.h"
#include "spec/run_spec.h"

namespace lr::engine {

class StreamLiveCollector {
public:
    StreamLiveCollector(const spec::RunSpec& spec, TrialOutputs& out);
    // Some stream is counted live (a mix of streams whose queues carry programs).
    bool live() const { return !streams_.empty(); }
    // Each stream's counts as of the workers' last answers; then asks them again.
    const std::vector<result::StreamLive>& take();

private:
    TrialOutputs& out_;
    std::vector<result::StreamLive> streams_;
    std::vector<uint32_t> stream_of_flow_;
    std::vector<stats::CountsTaker<stats::ShareLive>> tx_;
    std::vector<stats::CountsTaker<stats::FlowLive>> rx_;
    std::vector<std::vector<stats::ShareLive>> last_tx_;    // per TX slot: its shares' latest answer
    std::vector<std::vector<stats::FlowLive>> last_rx_;     // per RX slot: its flows' latest answer
};

}  // namespace lr::engine
