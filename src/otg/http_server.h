// The OTG HTTP API of `linerate serve` (cpp-httplib): the paths snappi 1.62.0 calls, every
// other one answered 501 with an OTG Error; linerate's extensions under /linerate/ and the
// Prometheus exposition at /metrics. Every reply is JSON (application/json) but a capture
// (application/octet-stream) and /metrics (text/plain). Errors are {code, kind, errors}, each
// error naming the JSON path of what was refused. Bodies above a limit are refused (413).
#pragma once
#include <atomic>
#include <functional>
#include <memory>
#include <string>

#include "otg/otg_service.h"
#include "otg/traffic_service.h"
#include "spec/options.h"

namespace httplib {
class Server;
}

namespace lr::otg {

// The OTG version linerate speaks (snappi's version check compares it with its own).
inline constexpr const char* kOtgApiVersion = "1.62.0";
// The largest request body taken (a config of thousands of flows is a few MiB).
inline constexpr size_t kMaxBodyBytes = 64u << 20;

struct ServerOptions {
    std::string host = "127.0.0.1";
    int port = 8443;
    std::string tls_cert, tls_key;  // both: HTTPS with this certificate and key
    bool tls_self_signed = false;   // HTTPS with a certificate made at start (snappi never checks it)
    bool log_requests = true;
};

class HttpServer {
public:
    // `metrics`: the Prometheus exposition text (GET /metrics); `procedure`: runs a procedure
    // profile (POST /linerate/procedure) and returns its report (none: 501); `engine`: the
    // endpoints a controller drives an engine with (/linerate/engine/...), none for a controller;
    // `engine_info`: GET /linerate/engine.
    HttpServer(OtgService& service, std::function<std::string()> metrics,
               std::function<nlohmann::json(const std::string&)> procedure, const ServerOptions& o,
               TrafficService* engine = nullptr, std::function<nlohmann::json()> engine_info = {});
    ~HttpServer();
    // Binds; throws EnvError naming the address and the reason.
    void bind();
    // Serves until stop() (from another thread or a signal's watcher). A stop asked before
    // serve() began, or while it is entering its loop, still ends it: serve() then returns at once
    // or stop() waits until the loop can be stopped.
    void serve();
    void stop();
    std::string url() const;

private:
    void routes();
    void engine_routes();
    OtgService& service_;
    TrafficService* engine_;
    std::function<nlohmann::json()> engine_info_;
    std::function<std::string()> metrics_;
    std::function<nlohmann::json(const std::string&)> procedure_;
    ServerOptions o_;
    std::unique_ptr<httplib::Server> server_;
    std::atomic<bool> stop_asked_{false};  // stop() was called
    std::atomic<bool> in_serve_{false};    // serve() is between its check of stop_asked_ and its return
};

}  // namespace lr::otg
