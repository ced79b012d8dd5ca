// The in-memory backend: ports joined by software wires, for fast tests of the session, the
// controller and the queue engines without devices or privileges. What TX queue q of one
// port sends arrives on RX queue q of the other port (of itself when the session has one
// port), through a bounded single-producer ring per RX queue: a full ring pushes back on the
// sender, as a device would. Faults can be injected on the wire and in the workers.
#pragma once
#include <cstdint>
#include <memory>

#include "backend/backend.h"

namespace lr::loop {

struct LoopFaults {
    uint64_t drop_every = 0;  // the wire loses every Nth frame (0: none)
    uint64_t dup_every = 0;   // the wire delivers every Nth frame twice
    uint64_t delay_ns = 0;    // frames become visible to the receiver this long after they were sent
    bool reflect = false;     // the far end sends every frame back, addresses and ports swapped
    bool stall_tx = false;    // the devices take nothing (a stuck queue, a link that is down)
    // ... only between these times after a sender starts (an outage), when outage_to_ns > 0
    uint64_t outage_from_ns = 0, outage_to_ns = 0;
    bool link_down_in_outage = false;  // the ports report their link down during the outage
    bool fail_workers = false;  // every worker fails at once
    bool freeze_rx = false;   // receivers stop polling (a hung worker) until stopped
    uint32_t link_speed_mbps = 0;  // the link speed the ports report (0: unknown, as veth)
};

// What the wires did, for tests to compare with what linerate reports.
struct WireCounts {
    uint64_t sent = 0, delivered = 0, dropped = 0, duplicated = 0, no_queue = 0;
};

std::unique_ptr<backend::Backend> make_loop_backend(const LoopFaults& f = {}, WireCounts* counts = nullptr);

}  // namespace lr::loop
