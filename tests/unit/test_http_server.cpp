// The OTG HTTP server's life: a stop ends serve() whenever it comes, even before the listen
// loop runs (a signal right after `linerate serve` printed its address once left the server
// accepting forever).
#include <gtest/gtest.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <future>
#include <thread>

#include "otg/controller_service.h"
#include "otg/http_server.h"

using namespace lr;
using namespace std::chrono_literals;

namespace {

// A loopback port nobody listens on now.
int free_port() {
    const int fd = socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof(a);
    const bool ok = fd >= 0 && ::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof(a)) == 0 &&
                    getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len) == 0;
    if (fd >= 0) close(fd);
    return ok ? ntohs(a.sin_port) : 0;
}

// Serves on another thread once `stop_first` (if asked) already stopped the server; returns
// whether serve() ended within 5 s. If it did not, stops it again (the loop runs by then) so
// the test fails instead of hanging.
bool serve_ends(bool stop_first, std::chrono::microseconds stop_after = 0us) {
    otg::ControllerService service(otg::ControllerOptions{});
    otg::ServerOptions so;
    so.port = free_port();
    so.log_requests = false;
    EXPECT_NE(so.port, 0);
    otg::HttpServer http(service, [] { return std::string(); }, {}, so);
    http.bind();
    if (stop_first) http.stop();
    auto served = std::async(std::launch::async, [&] { http.serve(); });
    if (!stop_first) {
        std::this_thread::sleep_for(stop_after);
        http.stop();
    }
    const bool ended = served.wait_for(5s) == std::future_status::ready;
    if (!ended) http.stop();
    served.wait();
    return ended;
}

TEST(HttpServerStop, AStopBeforeServeEndsIt) { EXPECT_TRUE(serve_ends(true)); }

TEST(HttpServerStop, AStopWhileServeStartsEndsIt) {
    // Every interleaving of the two threads' first steps: right away, then a little later.
    for (int i = 0; i < 50; ++i)
        EXPECT_TRUE(serve_ends(false, std::chrono::microseconds(i * 20))) << "stop after " << i * 20 << " us";
}

TEST(HttpServerStop, AStopWhileServingEndsIt) { EXPECT_TRUE(serve_ends(false, 100ms)); }

}  // namespace
