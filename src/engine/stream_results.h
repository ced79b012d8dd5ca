// Per-stream results of a trial (result::StreamResult): each stream's flows added up, what its
// queues' shares sent (frames, bytes, sizes), its latency, and the frames received per size.
#pragma once
#include <vector>

#include "engine/aggregate.h"

namespace lr::engine {

// Fills r.streams and r.rx_sizes; r.flows, r.tx, r.rx, r.latency and r.tx_seconds are set.
void stream_results(result::TrialResult& r, const spec::RunSpec& spec, const std::vector<TxStreams>& tx,
                    const std::vector<const stats::RxResult*>& rx);

}  // namespace lr::engine
