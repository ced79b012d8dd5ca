// The --capture file: libpcap's writer (pcap_dump), opened when the session opens so a bad
// path fails before anything is sent, fed after each trial with the frames its receive queues
// kept, until the file holds --capture-count frames. Each trial's frames are flushed and
// checked: the first failure (a full disk) is kept in error(), naming the file and the
// reason, and nothing more is written.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "stats/capture.h"

typedef struct pcap pcap_t;
typedef struct pcap_dumper pcap_dumper_t;

namespace lr::engine {

class PcapWriter {
public:
    // Throws EnvError when the file cannot be created.
    PcapWriter(const std::string& path, uint32_t max_frames);
    ~PcapWriter();
    PcapWriter(const PcapWriter&) = delete;
    PcapWriter& operator=(const PcapWriter&) = delete;
    uint32_t remaining() const { return max_ - written_; }
    // Writes frames (by time) until the file is full; returns how many were written.
    uint32_t write(const std::vector<stats::CapturedFrame>& frames);
    // Empty while every write succeeded.
    const std::string& error() const { return error_; }

private:
    pcap_t* pcap_ = nullptr;
    pcap_dumper_t* dumper_ = nullptr;
    uint32_t max_ = 0, written_ = 0;
    std::string path_, error_;
};

}  // namespace lr::engine
