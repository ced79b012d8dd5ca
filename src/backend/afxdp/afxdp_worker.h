// The AF_XDP worker: a pinned thread running one queue engine over the AF_XDP burst
// operations, or the poller of the XDP counting sink.
#pragma once
#include "backend/afxdp/xdp_sink.h"
#include "backend/afxdp/xsk_socket.h"
#include "worker/worker_config.h"

namespace lr::afxdp {

// `rx` and `tx`: the sockets the worker receives and sends through (the same one for
// request/response and reflect; a forwarder's are on two ports), null for what it does not do.
bool run_engine(XskSocket* rx, XskSocket* tx, const worker::WorkerConfig& w);

// --rx-mode xdp: the counting happens in the driver; this worker only publishes the sink's
// map counters for its queue into the queue's counters (their single writer), and hands the
// per-stream counts over when it ends. `base`: the queue's counts before the trial started.
bool run_sink_poller(const XdpSink& sink, const lr_sink_qstats& base, const worker::WorkerConfig& w);

}  // namespace lr::afxdp
