// Typed setup/usage errors carrying a documented process exit code.
// Thrown only during setup and teardown, never from a worker's hot loop.
#pragma once
#include <stdexcept>
#include <string>

namespace lr {

// Documented in docs/usage.md ("Exit codes").
enum class ExitCode : int {
    ok = 0,
    threshold_failed = 1,  // measurement failed a threshold (loss, rate)
    usage = 2,             // bad CLI or config value
    environment = 3,       // missing device, capability, hugepages, PMD
    invalid_run = 4,       // an invariant broke or a worker stalled
    skip = 77,             // tests only: kernel lacks a feature
};

class Error : public std::runtime_error {
public:
    Error(ExitCode code, const std::string& what) : std::runtime_error(what), code_(code) {}
    ExitCode code() const noexcept { return code_; }

private:
    ExitCode code_;
};

// Bad input from the user: reported before anything is sent.
struct UsageError : Error {
    explicit UsageError(const std::string& what) : Error(ExitCode::usage, what) {}
};

// The machine or a device cannot do what was asked.
struct EnvError : Error {
    explicit EnvError(const std::string& what) : Error(ExitCode::environment, what) {}
};

}  // namespace lr
