#include "report/output_files.h"

#include <atomic>
#include <cerrno>
#include <climits>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <filesystem>
#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include "util/error.h"

namespace lr::report {
namespace {

std::string reason(int err) { return err ? std::strerror(err) : "I/O error"; }

std::string parent_dir(const std::string& path) {
    const auto p = std::filesystem::path(path).parent_path();
    return p.empty() ? "." : p.string();
}

bool writable(const std::string& path, int mode, int& err) {
    if (faccessat(AT_FDCWD, path.c_str(), mode, AT_EACCESS) == 0) return true;
    err = errno;
    return false;
}

// Why `o` cannot be written; empty when it can.
std::string why_not_writable(const OutputPath& o) {
    int err = 0;
    struct stat st {};
    if (stat(o.path.c_str(), &st) == 0) {
        if (S_ISDIR(st.st_mode)) return "it is a directory";
        if (S_ISREG(st.st_mode) && o.whole) {
            // Replaced by a rename: the directory (of the file a link points to) takes the new file.
            char* real = realpath(o.path.c_str(), nullptr);
            const std::string dir = parent_dir(real ? real : o.path);
            std::free(real);
            if (!writable(dir, W_OK | X_OK, err))
                return fmt::format("cannot create files in the directory \"{}\": {}", dir, reason(err));
            return {};
        }
        if (!writable(o.path, W_OK, err)) return reason(err);
        return {};
    }
    if (errno != ENOENT && errno != ENOTDIR) return reason(errno);
    const std::string dir = parent_dir(o.path);
    if (stat(dir.c_str(), &st) != 0) {
        if (errno == ENOENT) return fmt::format("the directory \"{}\" does not exist", dir);
        return fmt::format("the directory \"{}\": {}", dir, reason(errno));  // ENOTDIR: a file on the way
    }
    if (!S_ISDIR(st.st_mode)) return fmt::format("\"{}\" is not a directory", dir);
    if (!writable(dir, W_OK | X_OK, err))
        return fmt::format("cannot create files in the directory \"{}\": {}", dir, reason(err));
    return {};
}

// The same file however it is spelled ("r.json", "./r.json", a link to it); empty for a
// device or a pipe, which several outputs may share (/dev/null).
std::string identity(const std::string& path) {
    struct stat st {};
    if (stat(path.c_str(), &st) == 0 && !S_ISREG(st.st_mode)) return {};
    std::error_code ec;
    const auto p = std::filesystem::weakly_canonical(std::filesystem::absolute(path, ec), ec);
    return ec ? path : p.string();
}

// Writes all of `text` to `fd`; false with errno set on a failure.
bool write_all(int fd, std::string_view text) {
    while (!text.empty()) {
        const ssize_t n = ::write(fd, text.data(), text.size());
        if (n < 0 && errno == EINTR) continue;
        if (n < 0) return false;
        if (n == 0) {
            errno = EIO;
            return false;
        }
        text.remove_prefix(static_cast<size_t>(n));
    }
    return true;
}

std::string temp_name(const std::string& target) {
    static std::atomic<unsigned> n{0};
    return fmt::format("{}.tmp.{}.{}", target, getpid(), n++);
}

}  // namespace

std::vector<OutputPath> output_paths(const spec::RunSpec& spec) {
    std::vector<OutputPath> out;
    if (!spec.json_path.empty()) out.push_back({"--json", spec.json_path, true});
    if (!spec.junit_path.empty()) out.push_back({"--junit", spec.junit_path, true});
    if (!spec.csv_path.empty()) {
        out.push_back({"--csv", spec.csv_path, false});
        out.push_back({"--csv", csv_companion(spec.csv_path, "streams"), false});
        if (spec.procedure.kind != spec::Procedure::run) {
            out.push_back({"--csv", csv_companion(spec.csv_path, "trials"), true});
            out.push_back({"--csv", csv_companion(spec.csv_path, "sizes"), true});
        }
    }
    if (!spec.json_stream_path.empty() && spec.json_stream_path != "-")
        out.push_back({"--json-stream", spec.json_stream_path, false});
    if (!spec.capture_path.empty()) out.push_back({"--capture", spec.capture_path, false});
    return out;
}

void check_outputs(const std::vector<OutputPath>& outputs) {
    for (const auto& o : outputs)
        if (const auto why = why_not_writable(o); !why.empty())
            throw UsageError(fmt::format("{} \"{}\": cannot write there: {}", o.option, o.path, why));
    for (size_t i = 0; i < outputs.size(); ++i)
        for (size_t k = i + 1; k < outputs.size(); ++k)
            if (const auto id = identity(outputs[i].path); !id.empty() && id == identity(outputs[k].path))
                throw UsageError(fmt::format("{} \"{}\" and {} \"{}\" are the same file: give each output its own",
                                             outputs[i].option, outputs[i].path, outputs[k].option, outputs[k].path));
}

void write_file(const std::string& path, const std::string& text, const std::string& what) {
    const auto failed = [&](int err) {
        return EnvError(fmt::format("couldn't write the {} to {}: {}", what, path, reason(err)));
    };
    struct stat st {};
    const bool exists = stat(path.c_str(), &st) == 0;
    if (exists && !S_ISREG(st.st_mode)) {  // a device or a pipe: no rename over it
        const int fd = ::open(path.c_str(), O_WRONLY | O_CLOEXEC);
        if (fd < 0) throw failed(errno);
        const bool ok = write_all(fd, text);
        const int err = errno;
        if (::close(fd) != 0 && ok) throw failed(errno);
        if (!ok) throw failed(err);
        return;
    }
    std::string target = path;  // a link is followed: the file it points to is replaced, the link kept
    if (exists)
        if (char* real = realpath(path.c_str(), nullptr)) {
            target = real;
            std::free(real);
        }
    const std::string tmp = temp_name(target);
    const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
    if (fd < 0) throw failed(errno);
    int err = 0;
    if (!write_all(fd, text) || ::fsync(fd) != 0) err = errno;
    if (::close(fd) != 0 && !err) err = errno;
    if (!err && std::rename(tmp.c_str(), target.c_str()) != 0) err = errno;
    if (err) {
        ::unlink(tmp.c_str());
        throw failed(err);
    }
}

StreamFile::StreamFile(const std::string& path, std::string what) : path_(path), what_(std::move(what)) {
    if (path == "-") {
        f_ = stdout;
        return;
    }
    f_ = std::fopen(path.c_str(), "w");
    if (!f_) throw EnvError(fmt::format("couldn't create the {} file {}: {}", what_, path, reason(errno)));
    own_ = true;
}

StreamFile::~StreamFile() { close(); }

void StreamFile::fail(int err) {
    if (error_.empty()) error_ = fmt::format("couldn't write the {} file {}: {}", what_, path_, reason(err));
}

void StreamFile::write(std::string_view s) {
    if (!f_ || !error_.empty()) return;
    errno = 0;
    if (std::fwrite(s.data(), 1, s.size(), f_) != s.size() || std::ferror(f_)) fail(errno);
}

void StreamFile::flush() {
    if (!f_ || !error_.empty()) return;
    errno = 0;
    if (std::fflush(f_) != 0) fail(errno);
}

void StreamFile::close() {
    if (!f_) return;
    flush();
    if (own_) {
        errno = 0;
        if (std::fclose(f_) != 0) fail(errno);
    }
    f_ = nullptr;
}

std::string csv_companion(const std::string& path, const std::string& what) {
    const auto dot = path.rfind(".csv");
    const auto base = dot != std::string::npos && dot + 4 == path.size() ? path.substr(0, dot) : path;
    return base + "-" + what + ".csv";
}

}  // namespace lr::report
