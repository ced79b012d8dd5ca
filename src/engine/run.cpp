#include "engine/run.h"

#include <fmt/format.h>
#include <sys/utsname.h>
#include <thread>

#include "engine/control.h"
#include "report/console.h"
#include "report/json_report.h"
#include "stats/tsc_clock.h"
#include "util/error.h"
#ifdef LINERATE_HAVE_DPDK
#include "backend/dpdk/dpdk_backend.h"
#endif
#ifdef LINERATE_HAVE_AFXDP
#include "backend/afxdp/afxdp_backend.h"
#endif

namespace lr::engine {

std::unique_ptr<Backend> make_backend(const std::string& name) {
#ifdef LINERATE_HAVE_DPDK
    if (name == "dpdk") return dpdk::make_dpdk_backend();
#endif
#ifdef LINERATE_HAVE_AFXDP
    if (name == "afxdp") return afxdp::make_afxdp_backend();
#endif
    throw UsageError(fmt::format("backend \"{}\" is not available in this build", name));
}

namespace {

nlohmann::json host_environment() {
    utsname u{};
    uname(&u);
    return {{"linerate_version", LINERATE_VERSION},
            {"kernel", std::string(u.sysname) + " " + u.release},
            {"machine", u.machine},
            {"hostname", u.nodename},
            {"cpus_online", std::thread::hardware_concurrency()}};
}

}  // namespace

int run(const spec::RunSpec& spec) {
    auto be = make_backend(spec.backend);
    be->open(spec);
    stats::tsc_rate();  // calibrate the workers' burst clock (~20 ms) before any of them starts
    if (spec.tx_enabled() && spec.signed_frames())
        fmt::print("linerate: signing frames ({}) with run nonce {}; receive-only runs need --nonce {}\n",
                   packet::sig_level_str(spec.sig_level()), spec.nonce, spec.nonce);
    if (!spec.quiet) report::print_header(stdout, spec.live_latency());
    IntervalSink sink;
    if (!spec.quiet) sink = [](const stats::IntervalRow& r) { report::print_interval(stdout, r); };
    const RunResult res = run_control(*be, spec, sink);

    auto env = host_environment();
    env.update(be->environment());
    report::print_summary(stdout, spec, res);
    if (!spec.json_path.empty()) report::write_json(spec.json_path, report::make_report(spec, env, res));
    be->close();
    switch (res.verdict) {
        case Verdict::pass: return static_cast<int>(ExitCode::ok);
        case Verdict::fail: return static_cast<int>(ExitCode::threshold_failed);
        case Verdict::invalid: return static_cast<int>(ExitCode::invalid_run);
    }
    return static_cast<int>(ExitCode::invalid_run);
}

}  // namespace lr::engine
