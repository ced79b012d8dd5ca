// The backend interface the engine drives, at two levels: a backend owns ports (link, MAC,
// queues, device counters) for a whole session, and runs one worker per queue for each
// trial, each worker being one of the queue engines (src/worker) over the backend's burst
// operations.
//
// Lifecycle: open(spec, layout) once -> [start(trial) -> join()]* -> close(). Between trials
// every queue is idle and drained; start() re-writes frame templates only when they changed.
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "spec/run_spec.h"
#include "stats/snapshot.h"
#include "util/error.h"
#include "worker/worker_config.h"

namespace lr::backend {

struct PortInfo {
    std::string name;
    std::string driver;
    uint16_t id = 0;
    uint16_t tx_queues = 0, rx_queues = 0;  // as used
    std::string mac;
    uint32_t link_speed_mbps = 0;  // 0 = unknown
    bool link_up = false;
};

// The session's workers, fixed when it opens: role, port, queue and CPU of each, in the
// order trials list their WorkerConfigs. Ports are numbered in the order their names first
// appear in the spec (--tx ports, then --rx ports).
struct WorkerSlot {
    worker::Role role = worker::Role::tx;
    unsigned port_index = 0;
    std::string port;
    uint16_t queue = 0;
    int cpu = -1;
    // Forward (linerate impair): the port it sends on, at the same queue.
    unsigned peer_port_index = 0;
    std::string peer_port;
};
struct SessionLayout {
    std::vector<std::string> ports;
    std::vector<WorkerSlot> workers;
};

class Backend {
public:
    virtual ~Backend() = default;
    virtual std::string name() const = 0;
    // Initialises the backend, resolves, configures and starts every port of the layout.
    // Throws lr::Error (UsageError for an unknown port or a bad setting, EnvError otherwise).
    virtual void open(const spec::RunSpec& spec, const SessionLayout& layout) = 0;
    virtual const std::vector<PortInfo>& ports() const = 0;
    // Discards whatever waits in the receive queues (a previous trial's stragglers) and
    // returns how many frames that was. Called before each trial, with no worker running.
    virtual uint64_t flush_rx() = 0;
    // Loads frame templates where they changed and starts one worker per WorkerConfig (same
    // order as the layout's workers). Throws lr::Error; on a throw no worker is left running.
    virtual void start(const std::vector<worker::WorkerConfig>& workers) = 0;
    // Waits for every worker to return. Called after stop_tx and stop_rx are set.
    virtual void join() = 0;
    // Device counters since open(), in PortSample form.
    virtual stats::PortSample port_sample(unsigned port_index) const = 0;
    // Versions, drivers, cores: the report's "environment".
    virtual nlohmann::json environment() const = 0;
    // The capabilities (linux/capability.h) trials still need once open() is done: the rest are
    // dropped (util/privileges.h).
    virtual std::vector<int> capabilities_after_setup() const { return {}; }
    // Why trials of `next` (the session's spec with other streams: Session::set_streams) cannot
    // run on the ports as they were opened, e.g. frames the receive program does not steer to
    // the sockets; empty when they can.
    virtual std::string cannot_run(const spec::RunSpec& next) const {
        (void)next;
        return {};
    }
    // Takes a port's link down or up (OTG's port link state). Throws UsageError when the
    // backend or the port's driver cannot, EnvError when the system refuses.
    virtual void set_link(unsigned port_index, bool up) {
        (void)port_index;
        (void)up;
        throw UsageError(fmt::format("the {} backend cannot set a port's link", name()));
    }
    // Stops ports and releases everything. Idempotent.
    virtual void close() = 0;
};

// Backend registry: dpdk and afxdp when built with them. Throws UsageError otherwise.
std::unique_ptr<Backend> make_backend(spec::BackendKind kind);

}  // namespace lr::backend
