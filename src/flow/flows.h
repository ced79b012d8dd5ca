// Flow variation: N distinct 5-tuples derived from a base FrameSpec, spread over TX queues.
#pragma once
#include <cstdint>
#include <string_view>
#include <vector>

#include "packet/frame.h"

namespace lr::flow {

// Which header fields change from one flow to the next (bit set).
enum VaryField : unsigned {
    vary_src_ip = 1u << 0,
    vary_dst_ip = 1u << 1,
    vary_src_port = 1u << 2,
    vary_dst_port = 1u << 3,
};

// Parses "src-ip,src-port" etc. ("none" = 0). Throws UsageError on an unknown name.
unsigned parse_vary(std::string_view s);
std::string vary_str(unsigned vary);

// Flow i (0 <= i < count) sets every varied field to base + i (ports as integers,
// addresses as big-endian integers); unvaried fields keep the base value. Only the
// FrameSpecs are produced (no frame bytes). Throws UsageError when count is 0, count > 1
// and vary == 0, or a varied port would pass 65535 / a varied address would pass the
// top of its family's address space (no wrapping, so tuples are never duplicated).
std::vector<packet::FrameSpec> make_flows(const packet::FrameSpec& base, uint32_t count,
                                          unsigned vary);

// Flow indices assigned to TX queue q of nq: {i : i % nq == q} when count >= nq,
// otherwise {q % count} (queues share flows when there are fewer flows than queues).
std::vector<uint32_t> flows_for_queue(uint32_t count, uint32_t q, uint32_t nq);

}  // namespace lr::flow
