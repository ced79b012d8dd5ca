// Loading a stream's frames from a pcap file: files written here with libpcap, read back
// byte-exact with their timestamps, and every refusal with its message.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <pcap/pcap.h>
#include <random>
#include <string>
#include <vector>

#include "stream/pcap_source.h"
#include "usage_error.h"

using lr::stream::load_pcap;
using lr::test_support::usage_error;

namespace {

struct Record {
    std::vector<uint8_t> bytes;
    int64_t sec = 1'700'000'000;
    int64_t frac = 0;   // microseconds or nanoseconds, as the file's precision
    uint32_t len = 0;   // length on the wire; 0: the bytes' size
};

struct TempDir {
    std::string path;
    TempDir() {
        char t[] = "/tmp/lr-pcap-XXXXXX";
        path = mkdtemp(t);
    }
    ~TempDir() { std::filesystem::remove_all(path); }
    std::string file(const std::string& name) const { return path + "/" + name; }
};

// Writes `records` with libpcap's own writer.
void write_pcap(const std::string& path, const std::vector<Record>& records,
                u_int precision = PCAP_TSTAMP_PRECISION_MICRO, int dlt = DLT_EN10MB, int snaplen = 65535) {
    pcap_t* p = pcap_open_dead_with_tstamp_precision(dlt, snaplen, precision);
    ASSERT_NE(p, nullptr);
    pcap_dumper_t* d = pcap_dump_open(p, path.c_str());
    ASSERT_NE(d, nullptr) << pcap_geterr(p);
    for (const auto& r : records) {
        pcap_pkthdr h{};
        h.ts.tv_sec = r.sec;
        h.ts.tv_usec = r.frac;
        h.caplen = static_cast<bpf_u_int32>(r.bytes.size());
        h.len = r.len ? r.len : h.caplen;
        pcap_dump(reinterpret_cast<u_char*>(d), &h, r.bytes.data());
    }
    pcap_dump_close(d);
    pcap_close(p);
}

// A frame of `n` bytes: an Ethernet header (IPv4 ethertype) and random bytes.
std::vector<uint8_t> frame(size_t n, uint32_t seed) {
    std::mt19937 rng(seed);
    std::vector<uint8_t> f(n);
    for (auto& b : f) b = static_cast<uint8_t>(rng());
    f[12] = 0x08;
    f[13] = 0x00;
    return f;
}

}  // namespace

TEST(PcapSource, ReadsAMicrosecondFileByteExactWithItsTimestamps) {
    TempDir d;
    std::vector<Record> in = {{frame(60, 1), 1'700'000'000, 0},
                              {frame(1514, 2), 1'700'000'000, 999'999},
                              {frame(61, 3), 1'700'000'001, 5},
                              {frame(9014, 4), 1'700'000'003, 250'000}};
    write_pcap(d.file("us.pcap"), in);
    const auto got = load_pcap(d.file("us.pcap"), 9018);
    EXPECT_EQ(got.path, d.file("us.pcap"));
    ASSERT_EQ(got.records.size(), 4u);
    const uint64_t want_ts[] = {1'700'000'000'000'000'000, 1'700'000'000'999'999'000, 1'700'000'001'000'005'000,
                                1'700'000'003'250'000'000};
    for (size_t i = 0; i < 4; ++i) {
        EXPECT_EQ(got.records[i].bytes, in[i].bytes) << "record " << i + 1;
        EXPECT_EQ(got.records[i].ts_ns, want_ts[i]) << "record " << i + 1;
    }
    EXPECT_EQ(got.bytes, 60u + 1514 + 61 + 9014);
    EXPECT_EQ(got.span_ns, 3'250'000'000u);
    EXPECT_EQ(got.padded, 0u);
    EXPECT_EQ(got.backward, 0u);
}

TEST(PcapSource, ReadsANanosecondFileToTheNanosecond) {
    TempDir d;
    std::vector<Record> in = {{frame(100, 1), 1'600'000'000, 123'456'789},
                              {frame(200, 2), 1'600'000'000, 123'456'790},
                              {frame(300, 3), 1'600'000'002, 1}};
    write_pcap(d.file("ns.pcap"), in, PCAP_TSTAMP_PRECISION_NANO);
    const auto got = load_pcap(d.file("ns.pcap"), 1518);
    ASSERT_EQ(got.records.size(), 3u);
    EXPECT_EQ(got.records[0].ts_ns, 1'600'000'000'123'456'789u);
    EXPECT_EQ(got.records[1].ts_ns, 1'600'000'000'123'456'790u);
    EXPECT_EQ(got.records[2].ts_ns, 1'600'000'002'000'000'001u);
    EXPECT_EQ(got.span_ns, 1'876'543'212u);
    for (size_t i = 0; i < 3; ++i) EXPECT_EQ(got.records[i].bytes, in[i].bytes);
    EXPECT_EQ(got.bytes, 600u);
}

// What a capture on the sending host holds: frames before the NIC padded them.
TEST(PcapSource, ShortRecordsArePaddedWithZerosTo60BytesAndCounted) {
    TempDir d;
    auto arp = frame(42, 7);
    write_pcap(d.file("short.pcap"), {{arp}, {frame(14, 8)}, {frame(59, 9)}, {frame(60, 10)}});
    const auto got = load_pcap(d.file("short.pcap"), 64);
    ASSERT_EQ(got.records.size(), 4u);
    EXPECT_EQ(got.padded, 3u);
    for (const auto& r : got.records) EXPECT_EQ(r.bytes.size(), 60u);
    EXPECT_TRUE(std::equal(arp.begin(), arp.end(), got.records[0].bytes.begin()));
    EXPECT_TRUE(std::all_of(got.records[0].bytes.begin() + 42, got.records[0].bytes.end(),
                            [](uint8_t b) { return b == 0; }));
    EXPECT_EQ(got.records[3].bytes, frame(60, 10));
    EXPECT_EQ(got.bytes, 240u);
}

TEST(PcapSource, ARecordSlightlyOutOfOrderIsSentRightAfterTheOneBefore) {
    TempDir d;
    // Two capture queues a few hundred microseconds apart; at most 1 ms behind the latest.
    write_pcap(d.file("ooo.pcap"),
               {{frame(60, 1), 10, 0}, {frame(60, 2), 10, 2'000'000}, {frame(60, 3), 10, 1'500'000},
                {frame(60, 4), 10, 1'000'000}, {frame(60, 5), 10, 2'000'100}},
               PCAP_TSTAMP_PRECISION_NANO);
    const auto got = load_pcap(d.file("ooo.pcap"), 1518);
    ASSERT_EQ(got.records.size(), 5u);
    const uint64_t want[] = {10'000'000'000, 10'002'000'000, 10'002'000'000, 10'002'000'000, 10'002'000'100};
    for (size_t i = 0; i < 5; ++i) EXPECT_EQ(got.records[i].ts_ns, want[i]) << "record " << i + 1;
    EXPECT_EQ(got.records[2].bytes, frame(60, 3)) << "the frames stay in file order";
    EXPECT_EQ(got.backward, 2u);
    EXPECT_EQ(got.max_backward_ns, 1'000'000u);
    EXPECT_EQ(got.span_ns, 2'000'100u);
}

TEST(PcapSource, RefusesWhatCannotBeReplayedNamingTheRecord) {
    TempDir d;
    const auto f = d.file("x.pcap");
    const auto refusal = [&](const std::vector<Record>& recs, unsigned max_frame = 1518,
                             u_int precision = PCAP_TSTAMP_PRECISION_MICRO) {
        write_pcap(f, recs, precision);
        return usage_error([&] { load_pcap(f, max_frame); });
    };
    EXPECT_EQ(refusal({{frame(60, 1)}, {frame(68, 2), 1'700'000'000, 1, 1514}}),
              "pcap file " + f + ", record 2 is truncated: 68 of its 1514 bytes were captured (snap length 65535); "
              "a truncated frame cannot be replayed byte-exact: capture whole frames (tcpdump -s 0)");
    EXPECT_EQ(refusal({{frame(100, 1), 1'700'000'000, 0, 90}}),
              "pcap file " + f + ", record 1 is inconsistent: 100 bytes captured of a 90-byte frame");
    EXPECT_EQ(refusal({{frame(60, 1)}, {frame(60, 1)}, {frame(1515, 2)}}),
              "pcap file " + f + ", record 3 is a 1519-byte frame (with its 4-byte FCS): the ports send at most "
              "1518-byte frames");
    EXPECT_EQ(refusal({{frame(1514, 1)}}, 1518), "(no error)") << "exactly the limit";
    EXPECT_EQ(refusal({{frame(42, 1)}}, 63),
              "pcap file " + f + ", record 1 is a 64-byte frame (with its 4-byte FCS): the ports send at most "
              "63-byte frames") << "a padded record is 64 bytes on the wire";
    EXPECT_EQ(refusal({{frame(60, 1)}, {frame(13, 2)}}),
              "pcap file " + f + ", record 2 has 13 bytes, fewer than an Ethernet header (14)");
    EXPECT_EQ(refusal({{frame(60, 1), 20, 0}, {frame(60, 2), 22, 0}, {frame(60, 3), 21, 0}}),
              "pcap file " + f + ", record 3 is timestamped 1 s before record 2; records may be at most "
              "1 ms out of order (replay keeps the gaps between records): sort the file by time first "
              "(reordercap)");
    EXPECT_EQ(refusal({{frame(60, 1), 20, 5'000'000}, {frame(60, 2), 20, 3'999'999}}, 1518, PCAP_TSTAMP_PRECISION_NANO),
              "pcap file " + f + ", record 2 is timestamped 1.000001 ms before record 1; records may be at most "
              "1 ms out of order (replay keeps the gaps between records): sort the file by time first (reordercap)");
    EXPECT_EQ(refusal({{frame(60, 1), 20, 5'000'000}, {frame(60, 2), 20, 4'000'000}}, 1518, PCAP_TSTAMP_PRECISION_NANO),
              "(no error)") << "1 ms back is still accepted";
    EXPECT_EQ(refusal({}), "pcap file " + f + " holds no records");
}

TEST(PcapSource, RefusesALinkTypeOtherThanEthernetNamingIt) {
    TempDir d;
    const auto f = d.file("sll.pcap");
    write_pcap(f, {{frame(60, 1)}}, PCAP_TSTAMP_PRECISION_MICRO, DLT_LINUX_SLL);
    EXPECT_EQ(usage_error([&] { load_pcap(f, 1518); }),
              "pcap file " + f + ": link type LINUX_SLL (Linux cooked v1) is not Ethernet: only Ethernet frames can "
              "be replayed (capture on an interface, not on \"any\")");
    write_pcap(f, {{frame(60, 1)}}, PCAP_TSTAMP_PRECISION_MICRO, DLT_RAW);
    EXPECT_EQ(usage_error([&] { load_pcap(f, 1518); }),
              "pcap file " + f + ": link type RAW (Raw IP) is not Ethernet: only Ethernet frames can be replayed "
              "(capture on an interface, not on \"any\")");
}

TEST(PcapSource, RefusesAFileLibpcapCannotReadWithItsReason) {
    TempDir d;
    const auto missing = d.file("missing.pcap");
    EXPECT_EQ(usage_error([&] { load_pcap(missing, 1518); }),
              "pcap file " + missing + ": libpcap cannot read it: No such file or directory");
    const auto text = d.file("notes.txt");
    std::ofstream(text) << "not a capture at all, just some text\n";
    EXPECT_EQ(usage_error([&] { load_pcap(text, 1518); }),
              "pcap file " + text + ": libpcap cannot read it: unknown file format");
    // Cut off in the middle of its third record.
    const auto cut = d.file("cut.pcap");
    write_pcap(cut, {{frame(100, 1)}, {frame(100, 2)}, {frame(100, 3)}});
    std::filesystem::resize_file(cut, std::filesystem::file_size(cut) - 40);
    EXPECT_EQ(usage_error([&] { load_pcap(cut, 1518); }),
              "pcap file " + cut + ", record 3: libpcap cannot read it: truncated dump file; tried to read 100 "
              "captured bytes, only got 60");
}
