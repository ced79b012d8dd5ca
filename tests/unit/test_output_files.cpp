// Output files: the pre-flight check refuses a path that cannot be written (exit 2, naming
// the option, the path and why), whole files are written atomically and leave no temporary
// file behind on a failure, and streamed files (CSV, JSON lines, pcap) name the file and the
// reason of their first failed write (/dev/full: "No space left on device").
#include <gtest/gtest.h>

#include <dirent.h>
#include <pcap/pcap.h>
#include <fstream>
#include <sstream>
#include <sys/stat.h>
#include <unistd.h>

#include "backend/loop/loop_backend.h"
#include "engine/session.h"
#include "report/csv.h"
#include "report/json_report.h"
#include "report/output_files.h"
#include "report/pcap_sink.h"
#include "report/stream_sinks.h"
#include "result/sink.h"
#include "spec/options.h"
#include "util/error.h"

using namespace lr;

namespace {

struct TempDir {
    std::string path;
    TempDir() {
        char t[] = "/tmp/lr-outputs-XXXXXX";
        path = mkdtemp(t);
    }
    ~TempDir() { std::system(("rm -rf '" + path + "'").c_str()); }
    std::string operator/(const std::string& name) const { return path + "/" + name; }
    std::vector<std::string> entries() const {
        std::vector<std::string> out;
        if (DIR* d = opendir(path.c_str())) {
            while (auto* e = readdir(d))
                if (std::string(e->d_name) != "." && std::string(e->d_name) != "..") out.push_back(e->d_name);
            closedir(d);
        }
        std::sort(out.begin(), out.end());
        return out;
    }
};

std::string preflight_error(const std::vector<report::OutputPath>& outs) {
    try {
        report::check_outputs(outs);
    } catch (const UsageError& e) {
        EXPECT_EQ(e.code(), ExitCode::usage);
        return e.what();
    }
    return "(no error)";
}

std::string read(const std::string& path) {
    std::ifstream f(path);
    std::stringstream ss;
    ss << f.rdbuf();
    return ss.str();
}

#define EXPECT_HAS(haystack, needle) EXPECT_NE((haystack).find(needle), std::string::npos) << (haystack)

}  // namespace

TEST(Preflight, EachUnwritablePathIsNamedWithWhy) {
    TempDir d;
    std::ofstream(d / "file") << "x";
    mkdir((d / "dir").c_str(), 0755);
    EXPECT_EQ(preflight_error({{"--json", d / "r.json", true}, {"--csv", d / "r.csv", false}}), "(no error)");
    EXPECT_EQ(preflight_error({{"--json", d / "file", true}}), "(no error)");  // replaced
    EXPECT_HAS(preflight_error({{"--json", d / "missing/r.json", true}}),
               "--json \"" + d / "missing/r.json" + "\": cannot write there: the directory \"" + d / "missing" +
                   "\" does not exist");
    EXPECT_HAS(preflight_error({{"--junit", d / "dir", true}}), "--junit \"" + d / "dir" + "\": cannot write there: it is a directory");
    EXPECT_HAS(preflight_error({{"--capture", d / "file/x.pcap", false}}), "--capture \"" + d / "file/x.pcap" + "\"");
    EXPECT_HAS(preflight_error({{"--capture", d / "file/x.pcap", false}}), "\"" + d / "file" + "\" is not a directory");
    EXPECT_HAS(preflight_error({{"--capture", d / "file/x/y.pcap", false}}), "Not a directory");
    EXPECT_HAS(preflight_error({{"--json", d / "r.json", true}, {"--junit", d.path + "/./r.json", true}}),
               "are the same file");
    // Devices are written in place: /dev/null takes anything, /dev/full fails when written.
    EXPECT_EQ(preflight_error({{"--json-stream", "/dev/null", false}, {"--json", "/dev/full", true},
                               {"--junit", "/dev/null", true}}),
              "(no error)");
    EXPECT_TRUE(d.entries() == (std::vector<std::string>{"dir", "file"})) << "the pre-flight creates nothing";
}

TEST(Preflight, ARunsOutputsIncludeTheProceduresCsvTables) {
    auto s = spec::build_run_spec({{"tx", {"p"}}, {"rx", {"q"}}, {"csv", {"/x/r.csv"}}, {"json", {"/x/r.json"}},
                                   {"junit", {"/x/j.xml"}}, {"json-stream", {"-"}}, {"capture", {"/x/c.pcap"}}},
                                  spec::Procedure::sweep);
    std::vector<std::string> got;
    for (const auto& o : report::output_paths(s)) got.push_back(o.option + " " + o.path + (o.whole ? " whole" : ""));
    EXPECT_EQ(got, (std::vector<std::string>{"--json /x/r.json whole", "--junit /x/j.xml whole", "--csv /x/r.csv",
                                             "--csv /x/r-streams.csv", "--csv /x/r-trials.csv whole",
                                             "--csv /x/r-sizes.csv whole", "--capture /x/c.pcap"}));
}

TEST(WriteFile, ReplacesTheFileWholeAndFollowsALink) {
    TempDir d;
    report::write_file(d / "r.json", "first\n", "JSON report");
    EXPECT_EQ(read(d / "r.json"), "first\n");
    ASSERT_EQ(symlink("r.json", (d / "link.json").c_str()), 0);
    report::write_file(d / "link.json", "second\n", "JSON report");
    struct stat st {};
    ASSERT_EQ(lstat((d / "link.json").c_str(), &st), 0);
    EXPECT_TRUE(S_ISLNK(st.st_mode)) << "the link is kept";
    EXPECT_EQ(read(d / "r.json"), "second\n");
    EXPECT_EQ(d.entries(), (std::vector<std::string>{"link.json", "r.json"}));
}

TEST(WriteFile, AFailureNamesTheFileAndTheReasonAndLeavesNoTemporaryFile) {
    TempDir d;
    try {
        report::write_file("/dev/full", "x", "JSON report");
        FAIL() << "writing /dev/full succeeded";
    } catch (const EnvError& e) {
        EXPECT_EQ(std::string(e.what()), "couldn't write the JSON report to /dev/full: No space left on device");
    }
    try {
        report::write_file(d / "missing/r.json", "x", "JUnit file");
        FAIL() << "writing into a missing directory succeeded";
    } catch (const EnvError& e) {
        EXPECT_HAS(std::string(e.what()), "couldn't write the JUnit file to " + d / "missing/r.json" + ": No such file or directory");
    }
    EXPECT_TRUE(d.entries().empty());
}

TEST(StreamFile, TheFirstFailedWriteIsKeptOnceWithTheReason) {
    report::StreamFile f("/dev/full", "CSV");
    f.write("a,b\n");
    f.flush();
    EXPECT_EQ(f.error(), "couldn't write the CSV file /dev/full: No space left on device");
    f.write("more\n");
    f.close();
    EXPECT_EQ(f.error(), "couldn't write the CSV file /dev/full: No space left on device");
}

TEST(StreamFile, SinksAndThePcapSinkReportAFullDevice) {
    stats::IntervalRow row;
    row.t1 = 1;
    report::CsvSink csv("/dev/full");
    csv.interval(row);
    csv.close();
    EXPECT_EQ(csv.error(), "couldn't write the CSV file /dev/full: No space left on device");

    report::JsonLinesSink lines("/dev/full");
    lines.interval(row);
    EXPECT_EQ(lines.error(), "couldn't write the JSON lines file /dev/full: No space left on device");

    report::PcapSink pcap("/dev/full", 10);
    result::TrialResult trial;
    stats::CapturedFrame frame;
    frame.bytes.assign(60, 0);
    frame.orig_len = 60;
    trial.captured = {frame};
    pcap.trial_finished(trial);
    EXPECT_EQ(pcap.error(), "couldn't write the capture file /dev/full: No space left on device");
    pcap.trial_finished(trial);
    EXPECT_EQ(pcap.written(), 1u) << "nothing more is written after a failure";

    TempDir d;
    report::CsvSink good(d / "r.csv");
    good.interval(row);
    good.close();
    EXPECT_EQ(good.error(), "");
    EXPECT_HAS(read(d / "r.csv"), "trial,t0,t1");
}

TEST(TableCsv, NestedValuesBecomeDottedColumnsAndCellsAreQuoted) {
    const auto rows = nlohmann::json::parse(R"([{"size": 64, "received": {"pps": 10}, "why": "a, \"b\""},
                                                {"size": 128, "extra": null, "list": [1]}])");
    // Keys in the JSON's (sorted) order, columns in order of first appearance.
    EXPECT_EQ(report::table_csv(rows), "received.pps,size,why,extra\n10,64,\"a, \"\"b\"\"\",\n,128,,\n");
}

TEST(PcapSink, TakesTheFirstCaptureCountFramesOfTheSessionFromTheTrialsResults) {
    TempDir d;
    auto spec = spec::build_run_spec({{"tx", {"a"}}, {"rx", {"b"}}, {"count", {"30"}}, {"capture", {d / "c.pcap"}},
                                      {"capture-count", {"50"}}});
    spec.backend = spec::BackendKind::loop;
    spec.settle_s = 0;
    report::PcapSink pcap(spec.capture_path, spec.capture_count);
    report::TrialCollector collect;
    result::SinkList sinks;
    sinks.add(pcap);
    sinks.add(collect);
    {
        engine::Session session(loop::make_loop_backend(), spec);
        for (int i = 0; i < 3; ++i) {
            const auto r = session.run_trial(spec.trial(), sinks);
            EXPECT_EQ(r.rx.unique, 30u);
            EXPECT_TRUE(r.captured.empty()) << "the frames went to the sinks, not into the result kept";
        }
    }
    // 30 frames of the first trial, 20 of the second, none of the third.
    EXPECT_EQ(pcap.written(), 50u);
    EXPECT_EQ(pcap.error(), "");
    for (const auto& t : collect.trials()) EXPECT_TRUE(t.captured.empty());
    char err[PCAP_ERRBUF_SIZE];
    pcap_t* p = pcap_open_offline((d / "c.pcap").c_str(), err);
    ASSERT_NE(p, nullptr) << err;
    unsigned frames = 0;
    pcap_pkthdr* h = nullptr;
    const u_char* data = nullptr;
    while (pcap_next_ex(p, &h, &data) == 1) {
        EXPECT_EQ(h->len, 60u) << "64-byte frames without their FCS";
        EXPECT_EQ(h->caplen, 60u);
        ++frames;
    }
    pcap_close(p);
    EXPECT_EQ(frames, 50u);
}
