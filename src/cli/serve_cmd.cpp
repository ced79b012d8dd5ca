#include "cli/serve_cmd.h"

#include <algorithm>
#include <chrono>
#include <fmt/format.h>
#include <thread>
#include <unistd.h>

#include "backend/backend.h"
#include "engine/interrupt.h"
#include "otg/clock_info.h"
#include "otg/controller_service.h"
#include "otg/http_server.h"
#include "otg/controller_procedures.h"
#include "otg/procedure_endpoint.h"
#include "otg/traffic_service.h"
#include "report/metrics.h"
#include "spec/parse.h"
#include "util/cpus.h"
#include "util/error.h"

namespace lr::cli {

void ServeCommand::add_to(CLI::App& app) {
    app_ = app.add_subcommand("serve", "Serve the Open Traffic Generator (OTG) API: snappi scripts drive linerate");
    app_->footer(fmt::format(R"(An OTG server (API {}, the version snappi {} speaks) on --listen: POST /config, /control/state,
/monitor/metrics, /monitor/capture and GET /capabilities/version; Prometheus at /metrics;
linerate's extensions under /linerate/ (docs/otg.md). A port's location names a port of the
backend, as --tx or --rx would (an interface for afxdp, a DPDK device for dpdk).

Example:
  linerate serve --backend afxdp
  python3 -c 'import snappi; api = snappi.api(location="http://127.0.0.1:8443"); ...'

Listens on loopback unless told otherwise; plain HTTP unless --tls or --tls-cert/--tls-key.
Exit codes: 0 stopped by a signal, 2 usage error, 3 environment error (the address is in use).)",
                             otg::kOtgApiVersion, otg::kOtgApiVersion));
    opts_.bind(*app_, spec::Command::serve);
}

namespace {

// What GET /linerate/engine says of this engine: who it is and the clock it stamps with.
nlohmann::json engine_info(const std::string& host_label, spec::BackendKind backend) {
    return {{"host", host_label},
            {"version", LINERATE_VERSION},
            {"backend", spec::to_string(backend)},
            {"clock", otg::clock_json(otg::read_clock_info())}};
}

std::string host_name() {
    char buf[256] = {};
    return gethostname(buf, sizeof(buf) - 1) == 0 ? std::string(buf) : std::string("unknown");
}

// A signal ends the server: the running traffic stops and drains, the ports close.
void serve_until_signal(otg::HttpServer& http) {
    std::atomic<bool> done{false};
    std::thread watcher([&] {
        while (!done && !engine::interrupt_requested()) std::this_thread::sleep_for(std::chrono::milliseconds(100));
        http.stop();
    });
    http.serve();
    done = true;
    watcher.join();
    fmt::print("linerate serve: stopped\n");
}

}  // namespace

int ServeCommand::run_controller(const spec::ServeSpec& serve, const otg::ServerOptions& so) {
    // The options that choose a backend and its ports are each engine's own.
    for (const auto& [name, values] : opts_.given())
        if (name != "controller" && name != "location-map" && name != "listen" && name != "tls" && name != "tls-cert" &&
            name != "tls-key" && name != "quiet" && name != "nonce")
            throw UsageError(fmt::format("--{}: an engine's option; --controller drives engines (each a `linerate "
                                         "serve` with its own options) and takes --location-map, --listen, --tls, "
                                         "--tls-cert, --tls-key, --nonce and --quiet",
                                         name));
    otg::ControllerOptions co;
    if (!serve.server.location_map.empty()) co.locations = otg::LocationMap::load(serve.server.location_map);
    if (serve.base.nonce_given) co.nonce = serve.base.nonce;
    engine::install_interrupt_handlers();
    otg::ControllerService service(std::move(co));
    otg::HttpServer http(
        service, [&] { return service.metrics(); },
        [&](const std::string& body) { return otg::run_controller_procedure(service, body); }, so);
    http.bind();
    fmt::print("linerate serve: OTG API {} at {} (controller of linerate engines); snappi: snappi.api(location=\"{}\")\n",
               otg::kOtgApiVersion, http.url(), http.url());
    std::fflush(stdout);
    serve_until_signal(http);
    return 0;
}

int ServeCommand::run() {
    const auto given = opts_.given();
    const auto serve = spec::build_serve_spec(given);
    const auto& base = serve.base;
    const auto where = spec::parse_listen(serve.server.listen, "--listen");
    otg::ServerOptions so;
    so.host = where.host;
    so.port = where.port;
    so.tls_cert = serve.server.tls_cert;
    so.tls_key = serve.server.tls_key;
    so.tls_self_signed = serve.server.tls_self_signed;
    so.log_requests = !base.quiet;
    if (serve.server.controller) return run_controller(serve, so);
    if (!serve.server.location_map.empty()) throw UsageError("--location-map: only with --controller");
    // What the procedures' profiles share with the server: its options that apply to them.
    spec::OptionValues shared;
    for (const auto& [name, values] : given)
        if (const auto* row = spec::find_option(name); row && row->applies_to(spec::Command::procedure))
            shared[name] = values;
    // The server's own threads (HTTP, the traffic runs' control threads) stay off the workers'
    // CPUs: the first allowed CPU, which automatic placement leaves to them, or those --cpus
    // leaves free. Workers are pinned to theirs.
    auto own = util::allowed_cpus();
    if (base.cpus.empty()) own.resize(1);
    else own.erase(std::remove_if(own.begin(), own.end(), [&](int c) {
                       return std::find(base.cpus.begin(), base.cpus.end(), c) != base.cpus.end();
                   }), own.end());
    if (util::allowed_cpus().size() > 1) util::restrict_current_thread(own);
    engine::install_interrupt_handlers();
    const std::string host_label = serve.server.host_label.empty() ? host_name() : serve.server.host_label;
    report::MetricsSink metrics({{"host", host_label}}, true);
    otg::TrafficService service(base, backend::make_backend, {&metrics});
    otg::HttpServer http(
        service, [&] { return metrics.exposition(); },
        [&](const std::string& body) {
            return service.with_ports_free([&] { return otg::run_procedure_profile(body, shared, &metrics); });
        },
        so, &service, [&] { return engine_info(host_label, base.backend); });
    http.bind();
    fmt::print("linerate serve: OTG API {} at {} ({} backend); snappi: snappi.api(location=\"{}\")\n",
               otg::kOtgApiVersion, http.url(), spec::to_string(base.backend), http.url());
    std::fflush(stdout);
    serve_until_signal(http);
    return 0;
}

}  // namespace lr::cli
