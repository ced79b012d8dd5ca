// The backend interface the engine drives. A backend owns ports and queues and runs one
// worker per (port, queue); the worker's loop dispatches per burst, never per packet.
#pragma once
#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "packet/frame.h"
#include "spec/run_spec.h"
#include "stats/rx_measure.h"
#include "stats/snapshot.h"

namespace lr::engine {

// Flags the control thread raises; workers poll them once per burst.
struct RunControl {
    alignas(64) std::atomic<bool> stop_tx{false};
    alignas(64) std::atomic<bool> stop_rx{false};
};

// Everything one worker needs, fixed before launch. Workers read nothing else.
struct WorkerPlan {
    stats::QueueId id;
    std::vector<packet::FrameSpec> flows;  // TX: the flows this queue sends, in order
    std::vector<uint16_t> streams;         // TX: stream id of each flow (its global flow index)
    uint64_t count = 0;                    // TX: packets to send; 0 = until stop_tx
    double rate_pps = 0;                   // TX: this queue's rate limit; 0 = unlimited
    stats::QueueCounters* counters = nullptr;
    // Written by the worker once, when it ends; read by the control thread after join().
    std::vector<uint64_t>* tx_sent = nullptr;  // TX: frames sent per flow slot (signed runs)
    stats::RxResult* rx_result = nullptr;      // RX: per-stream tracking and latency
};

struct PortInfo {
    std::string name;
    std::string driver;
    uint16_t id = 0;
    uint16_t tx_queues = 0, rx_queues = 0;  // as configured
    std::string mac;
    uint32_t link_speed_mbps = 0;  // 0 = unknown
    bool link_up = false;
};

class Backend {
public:
    virtual ~Backend() = default;
    virtual std::string name() const = 0;
    // Initialise, resolve and configure every port in the spec and start them.
    // Throws lr::Error (UsageError for an unknown port, EnvError otherwise).
    virtual void open(const spec::RunSpec& spec) = 0;
    virtual const std::vector<PortInfo>& ports() const = 0;
    // Index into ports() of a port named in the spec.
    virtual unsigned port_index(const std::string& name) const = 0;
    // Prepare per-worker resources (pools, templates) and start the workers.
    virtual void launch(const std::vector<WorkerPlan>& plans, RunControl& ctl) = 0;
    // Wait for every worker to return. Called after stop_tx and stop_rx are set.
    virtual void join() = 0;
    virtual stats::PortSample port_sample(unsigned port_index) const = 0;
    // Versions, driver names, cores: goes into the report's "environment".
    virtual nlohmann::json environment() const = 0;
    // Stop ports and release everything. Idempotent.
    virtual void close() = 0;
};

// Backend registry: "dpdk" (when built with DPDK). Throws UsageError for unknown names.
std::unique_ptr<Backend> make_backend(const std::string& name);

}  // namespace lr::engine
