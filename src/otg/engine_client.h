// A controller's connection to one engine (`linerate serve` on its host): plain HTTP requests
// with timeouts, each failure an EngineError naming the engine, what was asked and why
// (unreachable, timed out, or the engine's own OTG Error lines).
#pragma once
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace httplib {
class Client;
}

namespace lr::otg {

class EngineError : public std::runtime_error {
public:
    EngineError(const std::string& what, int status, std::vector<std::string> lines)
        : std::runtime_error(what), status_(status), lines_(std::move(lines)) {}
    int status() const { return status_; }  // the engine's HTTP status; 0: no answer
    const std::vector<std::string>& lines() const { return lines_; }  // the engine's error lines

private:
    int status_;
    std::vector<std::string> lines_;
};

class EngineClient {
public:
    // `name`: "host:port" as messages and labels give it. `control_timeout_s`: how long a
    // command (a configuration, a stop that waits for the drain) may take; views are
    // polled with `poll_timeout_s`.
    EngineClient(std::string name, const std::string& host, int port, double control_timeout_s, double poll_timeout_s);
    ~EngineClient();
    const std::string& name() const { return name_; }

    nlohmann::json get(const std::string& path) const;   // a JSON reply
    nlohmann::json post(const std::string& path, const nlohmann::json& body) const;
    std::string get_text(const std::string& path) const;  // /metrics
    std::string post_bytes(const std::string& path, const nlohmann::json& body) const;  // a capture

private:
    std::string request(const char* method, const std::string& path, const std::string& body, bool poll) const;
    std::string name_;
    std::unique_ptr<httplib::Client> control_, poll_;  // one connection each: a slow stop does not hold up the views
};

}  // namespace lr::otg
