// An OTG flow's packet (flows[i].packet, a list of headers) as linerate's frames: Ethernet,
// at most one 802.1Q tag, IPv4 or IPv6, UDP or TCP. Every header field the model has is
// either honoured (written into the frame, pattern and all) or refused with its reason.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "otg/json_fields.h"
#include "packet/frame.h"

namespace lr::otg {

struct FlowPacket {
    // Packets 0..L-1 of the flow, L the least common multiple of its fields' periods: packet
    // k of the flow is frames[k mod L]. Sizes are left at the FrameSpec default.
    std::vector<packet::FrameSpec> frames;
    bool dst_mac_auto = false;  // ethernet.dst auto (its default): the server fills it in
    // The fields whose values change from packet to packet, with their periods, for messages.
    std::vector<std::string> varying;
};

// Reads `packet` (flows[i].packet; absent: one Ethernet header), refusing what linerate cannot
// send. More than `max_frames` distinct packets are refused at the packet's path, naming the
// varying fields. Returns an empty `frames` when anything was refused.
FlowPacket read_packet(Reader& r, const Field& packet, uint64_t max_frames);

}  // namespace lr::otg
