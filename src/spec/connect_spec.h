// `linerate connect`: TCP connection rate against a real listener, as the options give it
// (spec/connect_options.cpp) and each queue's worker runs it (worker/connect_engine.h).
#pragma once
#include <cstdint>
#include <string>

namespace lr::spec {

// How each handshake ends once the listener has answered its SYN.
enum class CloseMode : uint8_t {
    rst,    // ACK, then RST: a connection opens on the listener and is reset at once
    fin,    // FIN-ACK: it opens and we close it; the listener's FIN is acknowledged
    abort,  // RST alone: the handshake is measured, no connection opens
};

struct ConnectSpec {
    std::string port;  // --port: the interface (afxdp) or DPDK port facing the listener
    uint16_t queues = 1;
    CloseMode close = CloseMode::rst;
    uint16_t src_port_lo = 1024, src_port_hi = 65535;  // the connections' source ports, in turn
    uint32_t outstanding = 1024;  // handshakes in flight at most, per queue
    bool outstanding_given = false;
    uint16_t mss = 1460;          // the SYN's MSS option
    double close_timeout_s = 1.0;  // --close fin: how long the listener may take to close
};

}  // namespace lr::spec
