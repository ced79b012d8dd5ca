// The OTG server's traffic service on the in-memory backend: configurations, flows started,
// paused, resumed and stopped, their metrics exact when they stop, captures, refusals.
#include <gtest/gtest.h>

#include <chrono>
#include <thread>

#include "backend/loop/loop_backend.h"
#include "otg/metrics_reply.h"
#include "otg/traffic_service.h"
#include "spec/options.h"

using namespace lr;
using nlohmann::json;

namespace {

otg::TrafficService make_service() {
    auto base = spec::build_serve_spec({}).base;
    base.backend = spec::BackendKind::loop;
    base.drain_s = 0.5;
    base.settle_s = 0;
    return otg::TrafficService(base, [](spec::BackendKind) { return loop::make_loop_backend(); });
}

// A flow from port p1 (loop port a) to p2 (b), IPv4/UDP, with `extra` merged in.
json otg_flow(const std::string& name, json extra = json::object()) {
    json f = {{"name", name},
              {"tx_rx", {{"choice", "port"}, {"port", {{"tx_name", "p1"}, {"rx_names", {"p2"}}}}}},
              {"packet",
               {{{"choice", "ethernet"}, {"ethernet", {{"src", {{"choice", "value"}, {"value", "02:00:00:00:00:01"}}}}}},
                {{"choice", "ipv4"},
                 {"ipv4",
                  {{"src", {{"choice", "value"}, {"value", "198.18.0.1"}}},
                   {"dst", {{"choice", "value"}, {"value", "198.18.0.2"}}}}}},
                {{"choice", "udp"}, {"udp", {{"src_port", {{"choice", "value"}, {"value", 5000}}}}}}}},
              {"metrics", {{"enable", true}, {"loss", false}, {"timestamps", true},
                           {"latency", {{"enable", true}, {"mode", "store_forward"}}}}}};
    f.update(extra);
    return f;
}

json config(std::vector<json> flows, json extra = json::object()) {
    json c = {{"ports", {{{"name", "p1"}, {"location", "a"}}, {{"name", "p2"}, {"location", "b"}}}}, {"flows", flows}};
    c.update(extra);
    return c;
}

json transmit(const std::string& state, std::vector<std::string> names = {}) {
    json ft = {{"state", state}};
    if (!names.empty()) ft["flow_names"] = names;
    return {{"choice", "traffic"}, {"traffic", {{"choice", "flow_transmit"}, {"flow_transmit", ft}}}};
}

const otg::FlowView& flow_of(const otg::View& v, const std::string& name) {
    for (const auto& f : v.flows)
        if (f.name == name) return f;
    throw std::runtime_error("no flow " + name);
}

// Waits (up to 10 s) until `pred(view)` holds; returns the view (a failure when it never held).
template <class P>
otg::View wait_for(otg::TrafficService& s, P pred) {
    const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    for (;;) {
        auto v = s.view();
        if (pred(v)) return v;
        if (std::chrono::steady_clock::now() > until) {
            ADD_FAILURE() << "waited 10 s for a view that never came";
            return v;
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
}

int status_of(const std::function<void()>& f) {
    try {
        f();
    } catch (const otg::OtgError& e) {
        return e.http_status();
    }
    return 200;
}

}  // namespace

TEST(OtgService, AFixedFlowStopsByItselfWithExactCountsOnceItsFramesAreIn) {
    auto s = make_service();
    s.set_config(config({otg_flow("f1", {{"size", {{"choice", "fixed"}, {"fixed", 128}}},
                                     {"rate", {{"choice", "pps"}, {"pps", "20000"}}},
                                     {"duration", {{"choice", "fixed_packets"}, {"fixed_packets", {{"packets", 1000}, {"gap", 12}}}}}})}));
    s.set_state(transmit("start"));
    const auto v = wait_for(s, [](const otg::View& v) { return flow_of(v, "f1").transmit == otg::Transmit::stopped; });
    const auto& f = flow_of(v, "f1");
    ASSERT_EQ(f.transmit, otg::Transmit::stopped);
    EXPECT_EQ(f.n.frames_tx, 1000u) << "stopped means final";
    EXPECT_EQ(f.n.frames_rx, 1000u);
    EXPECT_EQ(f.n.bytes_tx, 128000u);
    EXPECT_EQ(f.n.bytes_rx, 128000u);
    EXPECT_EQ(f.n.lat_n, 1000u);
    EXPECT_GT(f.n.last_rx_ns, f.n.first_rx_ns);
    // The port view adds up the same frames.
    const auto p1 = v.ports[0], p2 = v.ports[1];
    EXPECT_EQ(p1.n.frames_tx, 1000u);
    EXPECT_EQ(p2.n.frames_rx, 1000u);
    // The OTG reply: every counter present, latency and timestamps as asked.
    const auto m = otg::metrics_reply({{"choice", "flow"}}, v);
    ASSERT_EQ(m["flow_metrics"].size(), 1u);
    const auto& j = m["flow_metrics"][0];
    EXPECT_EQ(j["transmit"], "stopped");
    EXPECT_EQ(j["frames_tx"], 1000);
    EXPECT_EQ(j["frames_rx"], 1000);
    EXPECT_EQ(j["loss"], 0.0);
    EXPECT_TRUE(j["latency"].contains("average_ns"));
    EXPECT_TRUE(j["timestamps"].contains("first_timestamp_ns"));
    const auto ports = otg::metrics_reply({{"choice", "port"}, {"port", {{"column_names", {"frames_tx"}}}}}, v);
    EXPECT_EQ(ports["port_metrics"][0], json({{"name", "p1"}, {"frames_tx", 1000}}));
    // Its flows all stopped, the run is only draining: a configuration and a start go through
    // (they wait for its end), and the start is a run of its own.
    EXPECT_EQ(status_of([&] { s.set_config(s.config()); }), 200);
    s.set_state(transmit("start"));
    const auto again = wait_for(s, [](const otg::View& v) { return flow_of(v, "f1").transmit == otg::Transmit::stopped; });
    EXPECT_EQ(flow_of(again, "f1").n.frames_rx, 1000u);
    s.set_state(transmit("start"));  // at once, while that run drains
    const auto third = wait_for(s, [](const otg::View& v) { return flow_of(v, "f1").transmit == otg::Transmit::stopped; });
    EXPECT_EQ(flow_of(third, "f1").n.frames_tx, 1000u) << "a whole new run, not a start inside the ending one";
    EXPECT_EQ(flow_of(third, "f1").n.frames_rx, 1000u);
}

TEST(OtgService, OneFlowsReceivedCountsAreLiveWhileItRuns) {
    auto s = make_service();
    s.set_config(config({otg_flow("only", {{"rate", {{"choice", "pps"}, {"pps", "5000"}}}})}));
    s.set_state(transmit("start"));
    const auto v = wait_for(s, [](const otg::View& v) { return flow_of(v, "only").n.frames_rx > 500; });
    EXPECT_EQ(flow_of(v, "only").transmit, otg::Transmit::started);
    EXPECT_LE(flow_of(v, "only").n.frames_rx, flow_of(v, "only").n.frames_tx);
    EXPECT_GT(flow_of(v, "only").rx_pps, 0) << "a rate from the live views";
    s.set_state(transmit("stop"));
    const auto& f = flow_of(s.view(), "only");
    EXPECT_EQ(f.n.frames_rx, f.n.frames_tx);
}

TEST(OtgService, FlowsStartPauseResumeAndStopOneByOne) {
    auto s = make_service();
    const json rate = {{"choice", "pps"}, {"pps", "5000"}};
    s.set_config(config({otg_flow("a", {{"rate", rate}}), otg_flow("b", {{"rate", rate}})}));
    s.set_state(transmit("start", {"a"}));
    auto v = wait_for(s, [](const otg::View& v) { return flow_of(v, "a").n.frames_rx > 200; });
    EXPECT_EQ(flow_of(v, "a").transmit, otg::Transmit::started);
    EXPECT_EQ(flow_of(v, "b").transmit, otg::Transmit::stopped) << "not named: held";
    EXPECT_EQ(flow_of(v, "b").n.frames_tx, 0u);
    s.set_state(transmit("start", {"b"}));
    v = wait_for(s, [](const otg::View& v) { return flow_of(v, "b").n.frames_rx > 200; });
    EXPECT_EQ(flow_of(v, "b").transmit, otg::Transmit::started);
    s.set_state(transmit("pause", {"a"}));
    v = s.view();
    EXPECT_EQ(flow_of(v, "a").transmit, otg::Transmit::paused);
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    const auto a1 = flow_of(s.view(), "a").n.frames_tx;
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    EXPECT_EQ(flow_of(s.view(), "a").n.frames_tx, a1) << "paused: nothing sent";
    EXPECT_GT(flow_of(s.view(), "b").n.frames_tx, flow_of(v, "b").n.frames_tx) << "b goes on";
    s.set_state(transmit("resume", {"a"}));
    wait_for(s, [&](const otg::View& v) { return flow_of(v, "a").n.frames_tx > a1 + 100; });
    s.set_state(transmit("stop", {"a"}));  // returns once a's frames are in
    v = s.view();
    EXPECT_EQ(flow_of(v, "a").transmit, otg::Transmit::stopped);
    EXPECT_EQ(flow_of(v, "a").n.frames_rx, flow_of(v, "a").n.frames_tx);
    EXPECT_EQ(flow_of(v, "b").transmit, otg::Transmit::started);
    EXPECT_EQ(status_of([&] { s.set_config(config({otg_flow("a")})); }), 409) << "no configuration while traffic runs";
    s.set_state(transmit("stop"));
    v = s.view();
    for (const auto& f : v.flows) {
        EXPECT_EQ(f.transmit, otg::Transmit::stopped);
        EXPECT_EQ(f.n.frames_rx, f.n.frames_tx) << f.name << ": final after the stop";
        EXPECT_GT(f.n.frames_tx, 0u);
    }
    // A new start clears the counters of the flows it starts, and only theirs.
    const auto b_before = flow_of(v, "b").n.frames_tx;
    s.set_state(transmit("start", {"a"}));
    v = s.view();
    EXPECT_LT(flow_of(v, "a").n.frames_tx, 1000u);
    EXPECT_EQ(flow_of(v, "b").n.frames_tx, b_before);
    s.set_state(transmit("stop"));
}

TEST(OtgService, ACaptureHoldsTheFramesReceivedWhileItWasStarted) {
    auto s = make_service();
    s.set_config(config({otg_flow("f1", {{"duration", {{"choice", "fixed_packets"}, {"fixed_packets", {{"packets", 50}}}}}})},
                        {{"captures", {{{"name", "c"}, {"port_names", {"p2"}}}}}}));
    s.set_state({{"choice", "port"}, {"port", {{"choice", "capture"}, {"capture", {{"port_names", {"p2"}}, {"state", "start"}}}}}});
    EXPECT_TRUE(s.view().ports[1].capturing);
    s.set_state(transmit("start"));
    wait_for(s, [](const otg::View& v) { return flow_of(v, "f1").transmit == otg::Transmit::stopped; });
    const auto pcap = s.capture("p2");
    ASSERT_GE(pcap.size(), 24u);
    EXPECT_EQ(static_cast<uint8_t>(pcap[0]), 0xd4) << "a pcap file (little-endian magic a1b2c3d4)";
    // 24-byte file header, then per frame a 16-byte record header and the frame (64 - FCS = 60 bytes).
    EXPECT_EQ(pcap.size(), 24u + 50u * (16 + 60));
    EXPECT_FALSE(s.view().ports[1].capturing) << "handing it over stops it";
    EXPECT_EQ(status_of([&] { s.capture("p1"); }), 400) << "no capture configured on p1";
}

TEST(OtgService, RequestsItCannotServeAreRefusedNamingWhat) {
    auto s = make_service();
    EXPECT_EQ(status_of([&] { s.set_state(transmit("start")); }), 400) << "no configuration yet";
    s.set_config(config({otg_flow("f1")}));
    EXPECT_EQ(status_of([&] { s.set_state(transmit("start", {"nope"})); }), 400);
    try {
        s.set_state(transmit("start", {"f1", "nope"}));
        FAIL() << "an unknown flow is refused";
    } catch (const otg::OtgError& e) {
        EXPECT_EQ(e.refusals().at(0).path, "traffic.flow_transmit.flow_names[1]");
    }
    EXPECT_EQ(status_of([&] { s.set_state(transmit("jump")); }), 400);
    EXPECT_EQ(status_of([&] { otg::metrics_reply({{"choice", "bgpv4"}}, s.view()); }), 400);
    EXPECT_EQ(status_of([&] { otg::metrics_reply({{"choice", "flow"}, {"flow", {{"flow_names", {"x"}}}}}, s.view()); }), 400);
    // Two ports at one location.
    auto c = config({otg_flow("f1")});
    c["ports"][1]["location"] = "a";
    try {
        s.set_config(c);
        FAIL() << "a location configured twice is refused";
    } catch (const otg::OtgError& e) {
        EXPECT_EQ(e.refusals().at(0).path, "ports[1].location");
    }
    EXPECT_EQ(s.config()["flows"][0]["name"], "f1") << "the configuration in place is kept";
}

TEST(OtgService, WhileAProcedureHasThePortsConfigurationsAndTrafficWait) {
    auto s = make_service();
    s.set_config(config({otg_flow("f1", {{"duration", {{"choice", "fixed_packets"}, {"fixed_packets", {{"packets", 100}}}}}})}));
    const int during = s.with_ports_free([&] {
        // From another thread, as an HTTP request would come.
        int config_status = 0, start_status = 0;
        std::thread t([&] {
            config_status = status_of([&] { s.set_config(config({otg_flow("f1")})); });
            start_status = status_of([&] { s.set_state(transmit("start")); });
        });
        t.join();
        EXPECT_EQ(start_status, 409);
        EXPECT_EQ(status_of([&] { s.with_ports_free([] { return 0; }); }), 409) << "one procedure at a time";
        return config_status;
    });
    EXPECT_EQ(during, 409);
    s.set_state(transmit("start"));  // the session opens again
    const auto v = wait_for(s, [](const otg::View& v) { return flow_of(v, "f1").transmit == otg::Transmit::stopped; });
    EXPECT_EQ(flow_of(v, "f1").n.frames_rx, 100u);
}
