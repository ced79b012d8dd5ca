#include "stream/pcap_source.h"

#include <algorithm>
#include <fmt/format.h>
#include <memory>
#include <pcap/pcap.h>

#include "packet/frame.h"
#include "util/error.h"

namespace lr::stream {
namespace {

constexpr unsigned kEthHeader = 14;
constexpr int64_t kMaxPcapSec = 18'000'000'000;  // nanoseconds since the epoch fit in 64 bits

struct PcapClose {
    void operator()(pcap_t* p) const { pcap_close(p); }
};

// A duration for a message, exact to the nanosecond: "0.25 ms", "1.000001 ms", "2.5 s".
std::string pcap_duration(uint64_t ns) {
    const bool ms = ns < 1'000'000'000;
    const uint64_t unit = ms ? 1'000'000 : 1'000'000'000;
    std::string frac = fmt::format("{:0{}}", ns % unit, ms ? 6 : 9);
    while (!frac.empty() && frac.back() == '0') frac.pop_back();
    return fmt::format("{}{}{} {}", ns / unit, frac.empty() ? "" : ".", frac, ms ? "ms" : "s");
}

std::string link_type_name(int dlt) {
    const char* name = pcap_datalink_val_to_name(dlt);
    const char* what = pcap_datalink_val_to_description(dlt);
    if (!name) return fmt::format("{} (unknown to libpcap)", dlt);
    return what ? fmt::format("{} ({})", name, what) : std::string(name);
}

}  // namespace

PcapFrames load_pcap(const std::string& path, unsigned max_frame) {
    char err[PCAP_ERRBUF_SIZE] = "";
    std::unique_ptr<pcap_t, PcapClose> pcap(
        pcap_open_offline_with_tstamp_precision(path.c_str(), PCAP_TSTAMP_PRECISION_NANO, err));
    if (!pcap) {
        std::string why = err;
        if (why.starts_with(path + ": ")) why.erase(0, path.size() + 2);  // libpcap names the file too
        throw UsageError(fmt::format("pcap file {}: libpcap cannot read it: {}", path, why));
    }
    if (const int dlt = pcap_datalink(pcap.get()); dlt != DLT_EN10MB)
        throw UsageError(fmt::format("pcap file {}: link type {} is not Ethernet: only Ethernet frames can be "
                                     "replayed (capture on an interface, not on \"any\")",
                                     path, link_type_name(dlt)));

    PcapFrames out;
    out.path = path;
    uint64_t latest = 0, latest_record = 0;  // the latest timestamp so far and its record
    for (uint64_t n = 1;; ++n) {
        pcap_pkthdr* h = nullptr;
        const u_char* data = nullptr;
        const int rc = pcap_next_ex(pcap.get(), &h, &data);
        if (rc == PCAP_ERROR_BREAK) break;  // the end of the file
        const auto rec = [&] { return fmt::format("pcap file {}, record {}", path, n); };
        if (rc != 1) throw UsageError(fmt::format("{}: libpcap cannot read it: {}", rec(), pcap_geterr(pcap.get())));
        if (h->caplen < h->len)
            throw UsageError(fmt::format("{} is truncated: {} of its {} bytes were captured (snap length {}); a "
                                         "truncated frame cannot be replayed byte-exact: capture whole frames "
                                         "(tcpdump -s 0)",
                                         rec(), h->caplen, h->len, pcap_snapshot(pcap.get())));
        if (h->caplen > h->len)
            throw UsageError(fmt::format("{} is inconsistent: {} bytes captured of a {}-byte frame", rec(), h->caplen,
                                         h->len));
        if (h->caplen < kEthHeader)
            throw UsageError(fmt::format("{} has {} bytes, fewer than an Ethernet header ({})", rec(), h->caplen,
                                         kEthHeader));
        const uint64_t wire = std::max<uint64_t>(h->caplen, kMinReplayFrame) + packet::kFcsLen;
        if (wire > max_frame)
            throw UsageError(fmt::format("{} is a {}-byte frame (with its {}-byte FCS): the ports send at most "
                                         "{}-byte frames",
                                         rec(), wire, packet::kFcsLen, max_frame));
        // Opened with nanosecond precision, libpcap gives nanoseconds in tv_usec.
        const int64_t sec = h->ts.tv_sec, nsec = h->ts.tv_usec;
        if (sec < 0 || sec > kMaxPcapSec || nsec < 0 || nsec >= 1'000'000'000)
            throw UsageError(fmt::format("{} has a timestamp out of range ({} s {} ns)", rec(), sec, nsec));
        uint64_t ts = static_cast<uint64_t>(sec) * 1'000'000'000u + static_cast<uint64_t>(nsec);
        if (ts < latest) {
            const uint64_t back = latest - ts;
            if (back > kMaxBackwardNs)
                throw UsageError(fmt::format("{} is timestamped {} before record {}; records may be at most {} out "
                                             "of order (replay keeps the gaps between records): sort the file by "
                                             "time first (reordercap)",
                                             rec(), pcap_duration(back), latest_record, pcap_duration(kMaxBackwardNs)));
            ++out.backward;
            out.max_backward_ns = std::max(out.max_backward_ns, back);
            ts = latest;  // sent right after the record before it
        } else {
            latest = ts;
            latest_record = n;
        }
        PcapRecord r;
        r.ts_ns = ts;
        r.bytes.assign(data, data + h->caplen);
        if (r.bytes.size() < kMinReplayFrame) {
            r.bytes.resize(kMinReplayFrame, 0);
            ++out.padded;
        }
        out.bytes += r.bytes.size();
        out.records.push_back(std::move(r));
    }
    if (out.records.empty()) throw UsageError(fmt::format("pcap file {} holds no records", path));
    out.span_ns = out.records.back().ts_ns - out.records.front().ts_ns;
    return out;
}

}  // namespace lr::stream
