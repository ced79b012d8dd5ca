// The --capture file, a sink like the other outputs: libpcap's writer (pcap_dump), created
// with the other output files before the ports open, so a bad path fails before anything is
// sent. When a trial ends it writes the frames its queues kept (TrialResult::captured, by
// time) until the file holds --capture-count frames. Each trial's frames are flushed and
// checked: the first failure (a full disk) is kept in error(), naming the file and the
// reason, and nothing more is written.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "result/sink.h"
#include "stats/capture.h"

typedef struct pcap pcap_t;
typedef struct pcap_dumper pcap_dumper_t;

namespace lr::report {

// A whole pcap file (libpcap's writer, Ethernet, microsecond times) of `frames`, in memory:
// what the OTG server hands back for a capture. Throws EnvError when libpcap cannot write it.
std::string pcap_file_bytes(const std::vector<stats::CapturedFrame>& frames);

class PcapSink final : public result::Sink {
public:
    // Throws EnvError when the file cannot be created.
    PcapSink(const std::string& path, uint32_t max_frames);
    ~PcapSink() override;
    PcapSink(const PcapSink&) = delete;
    PcapSink& operator=(const PcapSink&) = delete;
    void trial_finished(const result::TrialResult& r) override { write(r.captured); }
    uint32_t written() const { return written_; }
    // Empty while every write succeeded.
    const std::string& error() const { return error_; }

private:
    // Writes frames (by time) until the file is full; returns how many were written.
    uint32_t write(const std::vector<stats::CapturedFrame>& frames);
    pcap_t* pcap_ = nullptr;
    pcap_dumper_t* dumper_ = nullptr;
    uint32_t max_ = 0, written_ = 0;
    std::string path_, error_;
};

}  // namespace lr::report
