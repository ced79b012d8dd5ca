#include "report/pcap_sink.h"

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <fmt/format.h>
#include <pcap/pcap.h>

#include "util/error.h"

namespace lr::report {
namespace {

// The frames carry CLOCK_MONOTONIC times; a pcap wants wall-clock ones.
int64_t realtime_minus_monotonic_ns() {
    timespec mono{}, real{};
    clock_gettime(CLOCK_MONOTONIC, &mono);
    clock_gettime(CLOCK_REALTIME, &real);
    return (int64_t(real.tv_sec) - mono.tv_sec) * 1000000000LL + (real.tv_nsec - mono.tv_nsec);
}

void dump(pcap_dumper_t* d, const stats::CapturedFrame& f, int64_t offset) {
    const int64_t ts = static_cast<int64_t>(f.ts_ns) + offset;
    pcap_pkthdr h{};
    h.ts.tv_sec = ts / 1000000000LL;
    h.ts.tv_usec = (ts % 1000000000LL) / 1000;
    h.caplen = static_cast<bpf_u_int32>(f.bytes.size());
    h.len = f.orig_len;
    pcap_dump(reinterpret_cast<u_char*>(d), &h, f.bytes.data());
}

}  // namespace

std::string pcap_file_bytes(const std::vector<stats::CapturedFrame>& frames) {
    char* buf = nullptr;
    size_t len = 0;
    std::FILE* mem = open_memstream(&buf, &len);
    if (!mem) throw EnvError(fmt::format("couldn't make a pcap in memory: {}", std::strerror(errno)));
    pcap_t* p = pcap_open_dead(DLT_EN10MB, 65535);
    pcap_dumper_t* d = p ? pcap_dump_fopen(p, mem) : nullptr;
    if (!d) {
        if (p) pcap_close(p);
        std::fclose(mem);
        std::free(buf);
        throw EnvError("couldn't start a pcap writer");
    }
    const int64_t offset = realtime_minus_monotonic_ns();
    for (const auto& f : frames) dump(d, f, offset);
    pcap_dump_close(d);  // closes `mem`: buf and len hold the file
    pcap_close(p);
    std::string out(buf, len);
    std::free(buf);
    return out;
}

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
    const int64_t offset = realtime_minus_monotonic_ns();
    uint32_t n = 0;
    errno = 0;
    for (const auto& f : frames) {
        if (written_ >= max_) break;
        dump(dumper_, f, offset);
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
