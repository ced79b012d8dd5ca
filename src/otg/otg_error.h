// What an OTG request is refused for: every problem found, each at the JSON path its user
// knows it by ("flows[0].packet[2].udp.src_port.increment.count", "ports[1].location").
// The server answers with the HTTP status and one "path: message" line per refusal.
#pragma once
#include <exception>
#include <string>
#include <vector>

namespace lr::otg {

struct Refusal {
    std::string path;     // empty: the request as a whole
    std::string message;
    std::string line() const { return path.empty() ? message : path + ": " + message; }
};

class OtgError : public std::exception {
public:
    explicit OtgError(std::vector<Refusal> refusals, int http_status = 400);
    // One refusal.
    OtgError(std::string path, std::string message, int http_status = 400)
        : OtgError(std::vector<Refusal>{{std::move(path), std::move(message)}}, http_status) {}
    const std::vector<Refusal>& refusals() const { return refusals_; }
    int http_status() const { return http_status_; }
    // One "path: message" line per refusal, joined by newlines.
    const char* what() const noexcept override { return text_.c_str(); }

private:
    std::vector<Refusal> refusals_;
    int http_status_;
    std::string text_;
};

}  // namespace lr::otg
