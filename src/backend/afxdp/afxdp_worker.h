// The AF_XDP worker: a pinned thread running one queue engine over the AF_XDP burst
// operations, or the poller of the XDP counting sink.
#pragma once
#include "backend/afxdp/xdp_sink.h"
#include "backend/afxdp/xsk_socket.h"
#include "worker/worker_config.h"

namespace lr::afxdp {

// `s` is the queue's socket (sending, receiving, or both for request/response and reflect).
bool run_engine(XskSocket& s, const worker::WorkerConfig& w);

// --rx-mode xdp: the counting happens in the driver; this worker only publishes the sink's
// map counters for its queue into the queue's counters (their single writer), and hands the
// per-stream counts over when it ends. `base`: the queue's counts before the trial started.
bool run_sink_poller(const XdpSink& sink, const lr_sink_qstats& base, const worker::WorkerConfig& w);

}  // namespace lr::afxdp
