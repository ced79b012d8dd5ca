// Every file a command writes goes through here: checked before anything is sent, then
// either written whole and atomically at the end (the JSON report, JUnit, HTML, the
// procedures' CSV tables) or streamed as the run goes (CSV series, JSON lines, the pcap),
// with every write, flush and close checked and a failure named with its file and reason.
#pragma once
#include <cstdio>
#include <string>
#include <string_view>
#include <vector>

#include "spec/run_spec.h"

namespace lr::report {

struct OutputPath {
    std::string option;  // how the user named it: "--json", "--output"
    std::string path;
    bool whole = true;   // written at the end in one piece (temporary file + rename); false: streamed
};

// The files a run or a procedure of `spec` writes: --json, --junit, --csv (and a procedure's
// two companion tables), --json-stream (unless stdout), --capture.
std::vector<OutputPath> output_paths(const spec::RunSpec& spec);

// Pre-flight: refuses (UsageError, exit 2) an output that cannot be written, naming the
// option, the path and why: its directory is missing or is not a directory, the file or the
// directory is not writable (permissions, a read-only file system), the path is a directory,
// or two outputs name the same file. Creates and changes nothing.
void check_outputs(const std::vector<OutputPath>& outputs);

// Writes `text` to `path` whole: into a temporary file beside it, synced, then renamed over
// it, so a reader never sees half a file. A path that exists and is not a regular file (a
// device, a pipe) is written in place. Throws EnvError naming `what` ("JSON report"), the path
// and the reason (strerror) on any failure, and leaves no temporary file behind.
void write_file(const std::string& path, const std::string& text, const std::string& what);

// A file written as the run goes. Every write, flush and close is checked; the first failure
// is kept ("couldn't write the CSV file r.csv: No space left on device") and nothing more is
// written to the file. "-" is stdout.
class StreamFile {
public:
    // Throws EnvError naming `what`, the path and the reason when it cannot be created.
    StreamFile(const std::string& path, std::string what);
    ~StreamFile();
    StreamFile(const StreamFile&) = delete;
    StreamFile& operator=(const StreamFile&) = delete;
    void write(std::string_view s);
    void flush();
    // Flushes and closes (stdout: flushes); a failure is kept like any other.
    void close();
    // Empty while every write succeeded.
    const std::string& error() const { return error_; }

private:
    void fail(int err);
    std::FILE* f_ = nullptr;
    bool own_ = false;
    std::string path_, what_, error_;
};

// "results.csv" -> "results-trials.csv" (the procedures' companion tables).
std::string csv_companion(const std::string& path, const std::string& what);

}  // namespace lr::report
