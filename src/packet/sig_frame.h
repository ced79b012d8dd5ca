// Signing a frame linerate did not build (a record of a replayed pcap file), so the receiver
// measures it like one of its own.
#pragma once
#include <cstddef>
#include <cstdint>

#include "packet/signature.h"

namespace lr::packet {

// If the frame at [f, f + len) (without FCS) is one the receive classifier parses as a UDP
// frame (bpf/lr_wire.h's lr_wire_walk: Ethernet, at most one 802.1Q/802.1ad tag, IPv4 without
// options and not a fragment, or IPv6 without extension headers, a UDP length equal to the IP
// header's, the datagram inside the frame) with at least 12 payload bytes, and, for IPv4, a
// header checksum that verifies, signs it in place and returns its layout:
// - the signature at the start of the UDP payload (docs/measurement.md): level seq_ts when
//   the payload has 18 bytes or more, seq (the short layout) with 12 to 17; the payload's
//   first 18 (or 12) bytes are overwritten, sequence and timestamp zero;
// - the nonce's high half in the IPv4 identification (the header checksum recomputed) or the
//   low 16 bits of the IPv6 flow label (the label's top 4 bits and the traffic class kept);
// - the UDP checksum computed anew over the datagram (whatever the capture held: zero, a
//   checksum offload's partial sum, or a wrong one).
// Bytes after the datagram (Ethernet padding of a short one) are kept and never summed. The
// frame then classifies as ours for run `nonce` when `stream` is below the receiver's number
// of streams, and sig_stamp or worker::TxSigner::stamp write sequence and timestamp with the
// returned layout (a layout of this frame only: offsets differ with a VLAN tag, the IP
// version and the payload's length).
//
// Anything else is left byte-identical and the layout's level is none (the frame is counted,
// not measured): TCP (linerate's TCP signature lives in a SYN's header fields, which a
// captured conversation needs as they are), non-IP frames, IPv4 with options, fragments,
// IPv6 extension headers, inconsistent lengths, a UDP payload under 12 bytes, and an IPv4
// header whose checksum fails (a frame the path is meant to drop: measured, it would count
// as lost). Reads and writes only inside [f, f + len), whatever the bytes.
SigLayout sign_frame(uint8_t* f, size_t len, uint32_t nonce, uint16_t stream);

}  // namespace lr::packet
