#include "otg/engine_client.h"

#include <fmt/format.h>
#include <httplib.h>

namespace lr::otg {
namespace {

std::unique_ptr<httplib::Client> client(const std::string& host, int port, double timeout_s) {
    auto c = std::make_unique<httplib::Client>(host, port);
    const auto us = std::chrono::microseconds(static_cast<int64_t>(timeout_s * 1e6));
    c->set_connection_timeout(std::chrono::duration_cast<std::chrono::seconds>(us).count(),
                              static_cast<time_t>(us.count() % 1'000'000));
    c->set_read_timeout(std::chrono::duration_cast<std::chrono::seconds>(us).count(),
                        static_cast<time_t>(us.count() % 1'000'000));
    c->set_write_timeout(std::chrono::duration_cast<std::chrono::seconds>(us).count(),
                         static_cast<time_t>(us.count() % 1'000'000));
    c->set_keep_alive(true);
    c->set_tcp_nodelay(true);
    return c;
}

// Why a request got no answer, in words.
std::string no_answer(httplib::Error e) {
    switch (e) {
        case httplib::Error::Connection: return "couldn't connect (refused: nothing listens there, or no route)";
        case httplib::Error::ConnectionTimeout: return "timed out connecting";
        case httplib::Error::Read: return "the connection broke, or the answer took too long";
        case httplib::Error::Write: return "the connection broke while sending";
        default: return httplib::to_string(e);
    }
}

}  // namespace

EngineClient::EngineClient(std::string name, const std::string& host, int port, double control_timeout_s,
                           double poll_timeout_s)
    : name_(std::move(name)), control_(client(host, port, control_timeout_s)), poll_(client(host, port, poll_timeout_s)) {}

EngineClient::~EngineClient() = default;

std::string EngineClient::request(const char* method, const std::string& path, const std::string& body, bool poll) const {
    auto& c = poll ? *poll_ : *control_;
    const bool is_get = std::string_view(method) == "GET";
    auto res = is_get ? c.Get(path) : c.Post(path, body, "application/json");
    if (!res)
        throw EngineError(fmt::format("engine {} did not answer {} {}: {}", name_, method, path, no_answer(res.error())), 0,
                          {});
    if (res->status != 200) {
        std::vector<std::string> lines;
        try {
            const auto body = nlohmann::json::parse(res->body);
            for (const auto& e : body.at("errors")) lines.push_back(e.get<std::string>());
        } catch (const std::exception&) {
            lines.push_back(res->body.substr(0, 300));
        }
        std::string joined;
        for (const auto& l : lines) joined += (joined.empty() ? "" : "; ") + l;
        throw EngineError(fmt::format("engine {} refused {} {} (HTTP {}): {}", name_, method, path, res->status, joined),
                          res->status, lines);
    }
    return res->body;
}

nlohmann::json EngineClient::get(const std::string& path) const {
    const bool poll = path.find("/view") != std::string::npos;
    const auto body = request("GET", path, "", poll);
    try {
        return nlohmann::json::parse(body);
    } catch (const nlohmann::json::exception& e) {
        throw EngineError(fmt::format("engine {} answered GET {} with something else than JSON: {}", name_, path, e.what()),
                          500, {});
    }
}

nlohmann::json EngineClient::post(const std::string& path, const nlohmann::json& body) const {
    const auto reply = request("POST", path, body.dump(), false);
    try {
        return nlohmann::json::parse(reply);
    } catch (const nlohmann::json::exception& e) {
        throw EngineError(fmt::format("engine {} answered POST {} with something else than JSON: {}", name_, path, e.what()),
                          500, {});
    }
}

std::string EngineClient::get_text(const std::string& path) const { return request("GET", path, "", true); }

std::string EngineClient::post_bytes(const std::string& path, const nlohmann::json& body) const {
    return request("POST", path, body.dump(), false);
}

}  // namespace lr::otg
