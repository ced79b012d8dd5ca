// The TX programs of a trial whose queues carry streams (worker/tx_program.h): each stream's
// templates, sizes, rate, count and start split over the queues it leaves by.
#pragma once
#include <memory>
#include <string>
#include <vector>

#include "spec/run_spec.h"
#include "worker/tx_program.h"

namespace lr::engine {

// A sending queue of the session, in the order of the sending workers.
struct SendingQueue {
    std::string port;
    uint16_t queue = 0;
};

struct TxPrograms {
    std::vector<std::shared_ptr<worker::TxProgram>> queues;  // per sending queue
    std::vector<double> queue_pps;    // per sending queue: the paced streams' rates on it
    std::vector<uint32_t> first_flow; // per stream of the mix: its first signed stream id
    std::shared_ptr<std::vector<worker::StreamProgress>> progress;
    unsigned max_len = 0;             // the largest frame, without FCS
};

// Throws UsageError when a frame cannot be built.
TxPrograms build_programs(const spec::RunSpec& spec, const std::vector<SendingQueue>& queues);

}  // namespace lr::engine
