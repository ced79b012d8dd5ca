#include "report/pcap_sink.h"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <fmt/format.h>
#include <pcap/pcap.h>

#include "util/error.h"

namespace lr::report {

PcapSink::PcapSink(const std::string& path, uint32_t max_frames) : max_(max_frames), path_(path) {
    pcap_ = pcap_open_dead(DLT_EN10MB, 65535);
    if (!pcap_) throw EnvError("couldn't start a pcap writer");
    dumper_ = pcap_dump_open(pcap_, path.c_str());
    if (!dumper_) {
        const std::string why = pcap_geterr(pcap_);
        pcap_close(pcap_);
        throw EnvError(fmt::format("couldn't create the capture file {}: {}", path, why));
    }
}

PcapSink::~PcapSink() {
    if (dumper_) pcap_dump_close(dumper_);
    if (pcap_) pcap_close(pcap_);
}

uint32_t PcapSink::write(const std::vector<stats::CapturedFrame>& frames) {
    if (!error_.empty()) return 0;
    // The frames carry CLOCK_MONOTONIC times; a pcap wants wall-clock ones.
    timespec mono{}, real{};
    clock_gettime(CLOCK_MONOTONIC, &mono);
    clock_gettime(CLOCK_REALTIME, &real);
    const int64_t offset = (int64_t(real.tv_sec) - mono.tv_sec) * 1000000000LL + (real.tv_nsec - mono.tv_nsec);
    uint32_t n = 0;
    errno = 0;
    for (const auto& f : frames) {
        if (written_ >= max_) break;
        const int64_t ts = static_cast<int64_t>(f.ts_ns) + offset;
        pcap_pkthdr h{};
        h.ts.tv_sec = ts / 1000000000LL;
        h.ts.tv_usec = (ts % 1000000000LL) / 1000;
        h.caplen = static_cast<bpf_u_int32>(f.bytes.size());
        h.len = f.orig_len;
        pcap_dump(reinterpret_cast<u_char*>(dumper_), &h, f.bytes.data());
        ++written_;
        ++n;
    }
    // pcap_dump() reports nothing: the stream's error flag and the flush say whether it all went.
    std::FILE* f = pcap_dump_file(dumper_);
    if (pcap_dump_flush(dumper_) != 0 || std::ferror(f)) {
        error_ = fmt::format("couldn't write the capture file {}: {}", path_,
                             errno ? std::strerror(errno) : "I/O error");
        return 0;
    }
    return n;
}

}  // namespace lr::report
