// Frames from a pcap file, for a stream that replays a capture: every record read with
// libpcap and checked before anything is sent.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace lr::stream {

// The smallest Ethernet frame without its FCS: shorter records are padded to it.
inline constexpr unsigned kMinReplayFrame = 60;
// How far a record's timestamp may fall behind the latest one before it (captures taken on
// several CPUs or queues are out of order by microseconds); such a record is sent right after
// the one before it. Further back, the file is refused: its gaps would not be a schedule.
inline constexpr uint64_t kMaxBackwardNs = 1'000'000;

struct PcapRecord {
    std::vector<uint8_t> bytes;  // the frame without FCS: as captured, or padded to 60 bytes
    uint64_t ts_ns = 0;          // capture time, ns since the epoch; never below the record before's
};

struct PcapFrames {
    std::string path;
    std::vector<PcapRecord> records;  // in file order, never empty
    uint64_t bytes = 0;               // the records' frame bytes as sent, without FCS
    uint64_t span_ns = 0;             // last record's ts_ns - first record's
    uint64_t padded = 0;              // records shorter than 60 bytes, padded with zeros to 60
    uint64_t backward = 0;            // records timestamped before an earlier record (up to 1 ms):
    uint64_t max_backward_ns = 0;     //   given that record's time; the largest step back
};

// Reads every record of the pcap file `path` (pcap with microsecond or nanosecond timestamps,
// or pcapng, as libpcap reads them; timestamps kept to the nanosecond). `max_frame` is the
// largest frame the ports send, including the 4-byte FCS.
//
// Records shorter than 60 bytes (a capture taken on the sending host sees frames before the
// NIC pads them) are padded with zero bytes to 60, as a NIC pads them on the wire, and
// counted in `padded`. Nothing else is changed.
//
// Throws UsageError, naming the file and, for a record, its number (1-based), when libpcap
// cannot open or read the file (with libpcap's reason), the link type is not Ethernet, the
// file holds no records, or a record is truncated (captured length below its length on the
// wire: it cannot be replayed byte-exact), shorter than an Ethernet header (14 bytes), larger
// than `max_frame` with its FCS, timestamped more than 1 ms (kMaxBackwardNs) before a record
// ahead of it in the file, or timestamped outside 1970..2540 (64-bit nanoseconds).
PcapFrames load_pcap(const std::string& path, unsigned max_frame);

}  // namespace lr::stream
