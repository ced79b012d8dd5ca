#include "otg/http_server.h"

#include <chrono>
#include <fmt/format.h>
#include <httplib.h>
#include <openssl/evp.h>
#include <openssl/x509.h>
#include <sys/socket.h>
#include <thread>

#include "otg/metrics_reply.h"
#include "otg/otg_error.h"
#include "util/error.h"

namespace lr::otg {
namespace {

using nlohmann::json;

const char* kJson = "application/json";

// An OTG Error body: kind follows the status (4xx: the request, 5xx: the server).
std::string error_body(int status, const std::vector<std::string>& errors) {
    return json{{"code", status}, {"kind", status < 500 ? "validation" : "internal"}, {"errors", errors}}.dump();
}

void reply_error(httplib::Response& res, int status, const std::vector<std::string>& errors) {
    res.status = status;
    res.set_content(error_body(status, errors), kJson);
}

void reply_warnings(httplib::Response& res, const std::vector<std::string>& warnings) {
    res.status = 200;
    res.set_content(json{{"warnings", warnings}}.dump(), kJson);
}

// The request's JSON body; an empty body is an empty object (snappi sends none for GETs).
json body_of(const httplib::Request& req) {
    if (req.body.empty()) return json::object();
    try {
        return json::parse(req.body);
    } catch (const json::parse_error& e) {
        throw OtgError("", fmt::format("the body is not JSON: {}", e.what()));
    }
}

// Runs a handler, turning what it throws into an OTG Error reply.
template <class F>
void guarded(httplib::Response& res, F&& f) {
    try {
        f();
    } catch (const OtgError& e) {
        std::vector<std::string> lines;
        for (const auto& r : e.refusals()) lines.push_back(r.line());
        reply_error(res, e.http_status(), lines);
    } catch (const Error& e) {
        reply_error(res, e.code() == ExitCode::usage ? 400 : 500, {e.what()});
    } catch (const std::exception& e) {
        reply_error(res, 500, {fmt::format("internal error: {}", e.what())});
    }
}

// A certificate made at start, for HTTPS with nothing to configure: snappi never checks it.
struct SelfSigned {
    EVP_PKEY* key = nullptr;
    X509* cert = nullptr;
    SelfSigned() {
        key = EVP_EC_gen("P-256");
        cert = X509_new();
        if (!key || !cert) throw EnvError("couldn't make a TLS key (OpenSSL)");
        X509_set_version(cert, 2);
        ASN1_INTEGER_set(X509_get_serialNumber(cert), 1);
        X509_gmtime_adj(X509_getm_notBefore(cert), 0);
        X509_gmtime_adj(X509_getm_notAfter(cert), 3650L * 86400);
        X509_set_pubkey(cert, key);
        X509_NAME* name = X509_get_subject_name(cert);
        X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_ASC, reinterpret_cast<const unsigned char*>("linerate"), -1, -1, 0);
        X509_set_issuer_name(cert, name);
        if (!X509_sign(cert, key, EVP_sha256())) throw EnvError("couldn't sign a TLS certificate (OpenSSL)");
    }
    ~SelfSigned() {
        X509_free(cert);
        EVP_PKEY_free(key);
    }
};

}  // namespace

HttpServer::HttpServer(OtgService& service, std::function<std::string()> metrics,
                       std::function<json(const std::string&)> procedure, const ServerOptions& o,
                       TrafficService* engine, std::function<json()> engine_info)
    : service_(service), engine_(engine), engine_info_(std::move(engine_info)), metrics_(std::move(metrics)),
      procedure_(std::move(procedure)), o_(o) {
    if (!o.tls_cert.empty() || !o.tls_key.empty()) {
        auto s = std::make_unique<httplib::SSLServer>(o.tls_cert.c_str(), o.tls_key.c_str());
        if (!s->is_valid())
            throw EnvError(fmt::format("couldn't use the TLS certificate {} and key {}: unreadable, or they do not match",
                                       o.tls_cert, o.tls_key));
        server_ = std::move(s);
    } else if (o.tls_self_signed) {
        const SelfSigned ss;  // the server keeps its own references
        auto s = std::make_unique<httplib::SSLServer>(ss.cert, ss.key);
        if (!s->is_valid()) throw EnvError("couldn't start HTTPS with a self-signed certificate");
        server_ = std::move(s);
    } else {
        server_ = std::make_unique<httplib::Server>();
    }
    server_->set_payload_max_length(kMaxBodyBytes);
    // Replies leave at once (without it, a reply's last segment waits for the client's delayed
    // ACK: 40 ms a request); and a port in use is an error, not a second server sharing it
    // (httplib's default is SO_REUSEPORT).
    server_->set_tcp_nodelay(true);
    server_->set_socket_options([](int sock) {
        const int yes = 1;
        setsockopt(sock, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof(yes));
    });
    routes();
}

HttpServer::~HttpServer() = default;

std::string HttpServer::url() const {
    const bool tls = !o_.tls_cert.empty() || o_.tls_self_signed;
    return fmt::format("{}://{}:{}", tls ? "https" : "http", o_.host.find(':') != std::string::npos ? "[" + o_.host + "]" : o_.host,
                       o_.port);
}

void HttpServer::routes() {
    auto& s = *server_;
    // A location given with a trailing slash makes snappi ask for //config: any number of slashes.
    s.Post("/+config", [this](const httplib::Request& req, httplib::Response& res) {
        guarded(res, [&] { reply_warnings(res, service_.set_config(body_of(req))); });
    });
    s.Get("/+config", [this](const httplib::Request&, httplib::Response& res) {
        guarded(res, [&] { res.set_content(service_.config().dump(), kJson); });
    });
    s.Post("/+control/state", [this](const httplib::Request& req, httplib::Response& res) {
        guarded(res, [&] { reply_warnings(res, service_.set_state(body_of(req))); });
    });
    s.Post("/+monitor/metrics", [this](const httplib::Request& req, httplib::Response& res) {
        guarded(res, [&] { res.set_content(metrics_reply(body_of(req), service_.view()).dump(), kJson); });
    });
    s.Post("/+monitor/capture", [this](const httplib::Request& req, httplib::Response& res) {
        guarded(res, [&] {
            const auto b = body_of(req);
            if (!b.contains("port_name") || !b["port_name"].is_string())
                throw OtgError("port_name", "required: the port whose capture to return");
            if (b.contains("packets") && b["packets"].is_object() && b["packets"].value("choice", "all") != "all")
                throw OtgError("packets.choice", "only all: linerate returns the whole capture");
            res.set_content(service_.capture(b["port_name"].get<std::string>()), "application/octet-stream");
        });
    });
    s.Get("/+capabilities/version", [](const httplib::Request&, httplib::Response& res) {
        res.set_content(
            json{{"api_spec_version", kOtgApiVersion}, {"sdk_version", kOtgApiVersion}, {"app_version", LINERATE_VERSION}}
                .dump(),
            kJson);
    });
    s.Get("/+metrics", [this](const httplib::Request&, httplib::Response& res) {
        guarded(res, [&] { res.set_content(metrics_(), "text/plain; version=0.0.4"); });
    });
    s.Get("/+linerate/flows", [this](const httplib::Request&, httplib::Response& res) {
        guarded(res, [&] { res.set_content(service_.extended_flows().dump(), kJson); });
    });
    if (procedure_)
        s.Post("/+linerate/procedure", [this](const httplib::Request& req, httplib::Response& res) {
            guarded(res, [&] { res.set_content(procedure_(req.body).dump(), kJson); });
        });
    if (engine_info_)
        s.Get("/+linerate/engine", [this](const httplib::Request&, httplib::Response& res) {
            guarded(res, [&] { res.set_content(engine_info_().dump(), kJson); });
        });
    if (engine_) engine_routes();
    // Every other path and method: not implemented, as an OTG Error.
    const auto not_implemented = [](const httplib::Request& req, httplib::Response& res) {
        reply_error(res, 501, {fmt::format("{} {}: not implemented by linerate (docs/otg.md lists what is)", req.method,
                                           req.path)});
    };
    s.Get(".*", not_implemented);
    s.Post(".*", not_implemented);
    s.Put(".*", not_implemented);
    s.Patch(".*", not_implemented);
    s.Delete(".*", not_implemented);
    s.Options(".*", not_implemented);
    // What httplib answers itself (a body over the limit, a malformed request): an OTG Error too.
    s.set_error_handler([](const httplib::Request&, httplib::Response& res) {
        if (!res.body.empty()) return;
        const std::string why = res.status == 413 ? fmt::format("the body is larger than {} MiB", kMaxBodyBytes >> 20)
                                                  : fmt::format("HTTP status {}", res.status);
        res.set_content(error_body(res.status, {why}), kJson);
    });
    if (o_.log_requests)
        s.set_logger([](const httplib::Request& req, const httplib::Response& res) {
            fmt::print("linerate serve: {} {} {}\n", req.method, req.path, res.status);
            std::fflush(stdout);
        });
}

void HttpServer::engine_routes() {
    auto& s = *server_;
    s.Post("/+linerate/engine/config", [this](const httplib::Request& req, httplib::Response& res) {
        guarded(res, [&] { res.set_content(engine_->set_engine_config(body_of(req)).dump(), kJson); });
    });
    s.Post("/+linerate/engine/arm", [this](const httplib::Request& req, httplib::Response& res) {
        guarded(res, [&] { reply_warnings(res, engine_->arm(body_of(req))); });
    });
    s.Post("/+linerate/engine/go", [this](const httplib::Request& req, httplib::Response& res) {
        guarded(res, [&] { res.set_content(engine_->go(body_of(req)).dump(), kJson); });
    });
    s.Get("/+linerate/engine/view", [this](const httplib::Request&, httplib::Response& res) {
        guarded(res, [&] { res.set_content(engine_->engine_view().dump(), kJson); });
    });
}

void HttpServer::bind() {
    if (!server_->bind_to_port(o_.host, o_.port))
        throw EnvError(fmt::format("couldn't listen on {}:{} (in use, or not an address of this host)", o_.host, o_.port));
}

// cpp-httplib's stop() does nothing unless the listen loop already runs, so a stop that came
// first (a signal right after the server printed its address) would be lost and the server would
// accept forever. serve() marks itself in before it looks for a stop; stop() marks the stop
// before it looks for serve(): whichever comes second sees the other.
void HttpServer::serve() {
    in_serve_ = true;
    if (!stop_asked_) server_->listen_after_bind();
    in_serve_ = false;
}

void HttpServer::stop() {
    stop_asked_ = true;
    while (in_serve_ && !server_->is_running()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
    server_->stop();
}

}  // namespace lr::otg
