// The multi-host controller's parts that need no engine: location maps and endpoints, the
// merged Prometheus exposition, merged views and histograms, views as JSON, clock state.
#include <gtest/gtest.h>

#include <stdlib.h>

#include <cstdlib>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <string>
#include <tuple>
#include <vector>

#include "otg/clock_info.h"
#include "otg/location_map.h"
#include "otg/prom_merge.h"
#include "otg/view_json.h"
#include "otg/view_merge.h"
#include "usage_error.h"
#include "util/error.h"

using namespace lr;
using lr::test_support::usage_error;
using nlohmann::json;
using result::LatencyBucket;

namespace {

// ---- location_map ----

TEST(ParseEndpoint, Ipv4HostPortAndLocalPort) {
    const auto e = otg::parse_endpoint("198.19.0.2:8443;veth0");
    ASSERT_TRUE(e);
    EXPECT_EQ(e->host, "198.19.0.2");
    EXPECT_EQ(e->port, 8443);
    EXPECT_EQ(e->local, "veth0");
    EXPECT_EQ(e->engine(), "198.19.0.2:8443");
}

TEST(ParseEndpoint, BracketedIpv6) {
    const auto e = otg::parse_endpoint("[2001:2::1]:8443;ens1f0");
    ASSERT_TRUE(e);
    EXPECT_EQ(e->host, "2001:2::1");
    EXPECT_EQ(e->port, 8443);
    EXPECT_EQ(e->local, "ens1f0");
    EXPECT_EQ(e->engine(), "[2001:2::1]:8443");
}

TEST(ParseEndpoint, Refusals) {
    for (const char* bad : {"198.19.0.2:8443", "198.19.0.2:8443;", "198.19.0.2:0;veth0", "198.19.0.2:65536;veth0",
                            "198.19.0.2:https;veth0", "198.19.0.2:84x3;veth0", "198.19.0.2:;veth0", "198.19.0.2;veth0",
                            ":8443;veth0", "2001:2::1:8443;ens1f0", "[2001:2::1]8443;ens1f0", "[2001:2::1;ens1f0",
                            "[]:8443;ens1f0", "198.19.0.2:8443;veth 0", "198.19.0.2:8443;veth0;veth1"})
        EXPECT_FALSE(otg::parse_endpoint(bad)) << bad;
    EXPECT_TRUE(otg::parse_endpoint("engine-a:65535;0000:3b:00.0")) << "a DPDK device as the local port";
    EXPECT_TRUE(otg::parse_endpoint("engine-a:1;x"));
}

struct TempDir {
    std::string path;
    TempDir() {
        char t[] = "/tmp/lr-locmap-XXXXXX";
        path = mkdtemp(t);
    }
    ~TempDir() { std::system(("rm -rf '" + path + "'").c_str()); }
    std::string write(const std::string& name, const std::string& text) const {
        const auto p = path + "/" + name;
        std::ofstream(p) << text;
        return p;
    }
};

TEST(LocationMap, LoadsAndResolves) {
    TempDir d;
    const auto path = d.write("map.yaml", R"(location_map:
  - location: p1
    endpoint: "engine-a:8443;ens1f0"
  - location: p2
    endpoint: "[2001:db8::5]:9000;0000:3b:00.1"
)");
    const auto m = otg::LocationMap::load(path);
    EXPECT_EQ(m.size(), 2u);
    EXPECT_EQ(m.path(), path);
    const auto p1 = m.resolve("p1");
    EXPECT_EQ(p1.host, "engine-a");
    EXPECT_EQ(p1.port, 8443);
    EXPECT_EQ(p1.local, "ens1f0");
    const auto p2 = m.resolve("p2");
    EXPECT_EQ(p2.engine(), "[2001:db8::5]:9000");
    EXPECT_EQ(p2.local, "0000:3b:00.1");
    // Not in the map but an endpoint itself.
    const auto direct = m.resolve("198.19.0.2:8443;veth0");
    EXPECT_EQ(direct.engine(), "198.19.0.2:8443");
    EXPECT_EQ(direct.local, "veth0");
    try {
        m.resolve("p3");
        ADD_FAILURE() << "p3 resolved";
    } catch (const std::invalid_argument& e) {
        EXPECT_NE(std::string(e.what()).find(path), std::string::npos) << e.what();
        EXPECT_NE(std::string(e.what()).find("p3"), std::string::npos) << e.what();
    }
}

TEST(LocationMap, WithoutAFileOnlyEndpointsResolve) {
    const otg::LocationMap m;
    EXPECT_EQ(m.resolve("10.0.0.5:8443;ens1f0").engine(), "10.0.0.5:8443");
    try {
        m.resolve("p1");
        ADD_FAILURE() << "p1 resolved";
    } catch (const std::invalid_argument& e) {
        EXPECT_NE(std::string(e.what()).find("--location-map"), std::string::npos) << e.what();
    }
}

TEST(LocationMap, MalformedFilesNameTheEntry) {
    TempDir d;
    const std::string ok = "  - location: p1\n    endpoint: \"a:1;x\"\n";
    struct Case {
        std::string text, expect;
    };
    const std::vector<Case> cases = {
        {"location_map:\n" + ok + "  - location: p2\n", "location_map[1]: needs location and endpoint"},
        {"location_map:\n" + ok + "  - endpoint: \"a:1;y\"\n", "location_map[1]: needs location and endpoint"},
        {"location_map:\n" + ok + "  - location: p2\n    endpoint: \"a:99999;y\"\n", "location_map[1]: endpoint \"a:99999;y\""},
        {"location_map:\n" + ok + "  - location: p2\n    endpoint: b:2;y\n" + ok, "location_map[2]: location p1 is listed twice"},
        {"location_map:\n  - p1\n", "location_map[0]: needs location and endpoint"},
        {"location_map: {location: p1, endpoint: \"a:1;x\"}\n", "needs a list"},
        {"locations:\n" + ok, "needs a list"},
        {"location_map: [\n", "not YAML"},
        {"", "needs a list"},
        {"p1\n", "needs a list"},
        {"location_map:\n  - location: [a, b]\n    endpoint: \"a:1;x\"\n", "location_map[0]: needs location and endpoint"},
        {"location_map:\n" + ok + "  - location: p2\n    endpoint: {host: a}\n", "location_map[1]: needs location and endpoint"},
        {"location_map:\n  - location:\n    endpoint: \"a:1;x\"\n", "location_map[0]: needs location and endpoint"},
    };
    for (size_t i = 0; i < cases.size(); ++i) {
        const auto path = d.write("bad" + std::to_string(i) + ".yaml", cases[i].text);
        const auto msg = usage_error([&] { otg::LocationMap::load(path); });
        EXPECT_NE(msg.find(cases[i].expect), std::string::npos) << "case " << i << ": " << msg;
        EXPECT_NE(msg.find(path), std::string::npos) << "case " << i << ": " << msg;
    }
    const auto missing = d.path + "/absent.yaml";
    const auto msg = usage_error([&] { otg::LocationMap::load(missing); });
    EXPECT_NE(msg.find("cannot read"), std::string::npos) << msg;
    EXPECT_NE(msg.find(missing), std::string::npos) << msg;
}

// ---- prom_merge ----

TEST(PromMerge, HostLabelAddedPrependedOrReplaced) {
    EXPECT_EQ(otg::with_host_label("lr_up 1", "engine-a:8443"), "lr_up{host=\"engine-a:8443\"} 1");
    EXPECT_EQ(otg::with_host_label("lr_up{} 1", "h"), "lr_up{host=\"h\"} 1");
    EXPECT_EQ(otg::with_host_label("lr_tx_total{port=\"p1\",dir=\"tx\"} 12 1700000000000", "[2001:db8::2]:8443"),
              "lr_tx_total{host=\"[2001:db8::2]:8443\",port=\"p1\",dir=\"tx\"} 12 1700000000000");
    // The engine's own host label goes; a value with an escaped quote, a comma and a brace stays.
    EXPECT_EQ(otg::with_host_label(R"(lr_x{flow="a\"b,c}",host="pod-1",port="p1"} 5)", "engine-a:8443"),
              R"(lr_x{host="engine-a:8443",flow="a\"b,c}",port="p1"} 5)");
    EXPECT_EQ(otg::with_host_label(R"(lr_x{host="pod-1"} 5)", "e"), R"(lr_x{host="e"} 5)");
    EXPECT_EQ(otg::with_host_label(R"(lr_x{flow="f\\",host="a,host=\"b\""} 5)", "e"), R"(lr_x{host="e",flow="f\\"} 5)");
    // A name needing escapes is escaped.
    EXPECT_EQ(otg::with_host_label("lr_up 1", "a\"b"), "lr_up{host=\"a\\\"b\"} 1");
}

TEST(PromMerge, NonSampleLinesIntact) {
    for (const std::string line : {"", "lr_up", "lr_x{flow=f1} 3", "lr_x{flow=\"unterminated 3", "lr_x{flow} 3",
                                   "lr_x{flow=\"f1\""})
        EXPECT_EQ(otg::with_host_label(line, "e"), line);
}

const char* kEngineA = R"(# HELP lr_flow_frames_total Frames of a flow.
# TYPE lr_flow_frames_total counter
lr_flow_frames_total{flow="f1",dir="tx",host="pod-a"} 100
lr_flow_frames_total{flow="f1",dir="rx",host="pod-a"} 0
# HELP lr_flow_latency_seconds Latency of a flow's frames.
# TYPE lr_flow_latency_seconds histogram
lr_flow_latency_seconds_bucket{flow="f1",le="1e-06"} 0
lr_flow_latency_seconds_bucket{flow="f1",le="+Inf"} 0
lr_flow_latency_seconds_sum{flow="f1"} 0
lr_flow_latency_seconds_count{flow="f1"} 0
)";
const char* kEngineB = R"(# HELP lr_flow_frames_total Frames of a flow.
# TYPE lr_flow_frames_total counter
lr_flow_frames_total{flow="f1",dir="tx",host="pod-b"} 0
lr_flow_frames_total{flow="f1",dir="rx",host="pod-b"} 98

# HELP lr_flow_latency_seconds Latency of a flow's frames.
# TYPE lr_flow_latency_seconds histogram
lr_flow_latency_seconds_bucket{flow="f1",le="1e-06"} 40
lr_flow_latency_seconds_bucket{flow="f1",le="+Inf"} 98
lr_flow_latency_seconds_sum{flow="f1"} 0.000196
lr_flow_latency_seconds_count{flow="f1"} 98
)";

std::vector<std::string> lines_of(const std::string& text) {
    std::vector<std::string> out;
    std::istringstream in(text);
    for (std::string l; std::getline(in, l);) out.push_back(l);
    return out;
}

TEST(PromMerge, FamiliesOnceWithEveryEnginesSamples) {
    const auto out = otg::merge_expositions({{"a:8443", kEngineA}, {"[2001:db8::2]:8443", kEngineB}});
    const auto lines = lines_of(out);
    const std::vector<std::string> expected = {
        "# HELP lr_flow_frames_total Frames of a flow.",
        "# TYPE lr_flow_frames_total counter",
        R"(lr_flow_frames_total{host="a:8443",flow="f1",dir="tx"} 100)",
        R"(lr_flow_frames_total{host="a:8443",flow="f1",dir="rx"} 0)",
        R"(lr_flow_frames_total{host="[2001:db8::2]:8443",flow="f1",dir="tx"} 0)",
        R"(lr_flow_frames_total{host="[2001:db8::2]:8443",flow="f1",dir="rx"} 98)",
        "# HELP lr_flow_latency_seconds Latency of a flow's frames.",
        "# TYPE lr_flow_latency_seconds histogram",
        R"(lr_flow_latency_seconds_bucket{host="a:8443",flow="f1",le="1e-06"} 0)",
        R"(lr_flow_latency_seconds_bucket{host="a:8443",flow="f1",le="+Inf"} 0)",
        R"(lr_flow_latency_seconds_sum{host="a:8443",flow="f1"} 0)",
        R"(lr_flow_latency_seconds_count{host="a:8443",flow="f1"} 0)",
        R"(lr_flow_latency_seconds_bucket{host="[2001:db8::2]:8443",flow="f1",le="1e-06"} 40)",
        R"(lr_flow_latency_seconds_bucket{host="[2001:db8::2]:8443",flow="f1",le="+Inf"} 98)",
        R"(lr_flow_latency_seconds_sum{host="[2001:db8::2]:8443",flow="f1"} 0.000196)",
        R"(lr_flow_latency_seconds_count{host="[2001:db8::2]:8443",flow="f1"} 98)",
    };
    EXPECT_EQ(lines, expected) << out;
}

TEST(PromMerge, FamilyOfOneEngineOnly) {
    const std::string extra = "# HELP lr_impair_held Held.\n# TYPE lr_impair_held gauge\nlr_impair_held{dir=\"ab\"} 3\n";
    const auto out = otg::merge_expositions({{"a:1", kEngineA}, {"b:1", extra + kEngineB}});
    const auto lines = lines_of(out);
    size_t helps = 0, types = 0;
    for (const auto& l : lines) {
        helps += l.rfind("# HELP ", 0) == 0;
        types += l.rfind("# TYPE ", 0) == 0;
    }
    EXPECT_EQ(helps, 3u) << out;
    EXPECT_EQ(types, 3u) << out;
    ASSERT_EQ(lines.size(), 3u * 2 + 4 + 8 + 1) << out;
    EXPECT_EQ(lines[16], "# HELP lr_impair_held Held.");
    EXPECT_EQ(lines[17], "# TYPE lr_impair_held gauge");
    EXPECT_EQ(lines[18], "lr_impair_held{host=\"b:1\",dir=\"ab\"} 3");
}

// ---- view_merge: buckets ----

TEST(ViewMerge, MergeBucketsAddsIdenticalRangesSorted) {
    const std::vector<LatencyBucket> a = {{10, 11, 2}, {128, 129, 1}, {1024, 1032, 4}};
    const std::vector<LatencyBucket> b = {{5, 6, 1}, {128, 129, 3}, {2048, 2064, 1}};
    const auto m = otg::merge_buckets({a, b, {}});
    ASSERT_EQ(m.size(), 5u);
    const std::vector<std::tuple<uint64_t, uint64_t, uint64_t>> want = {
        {5, 6, 1}, {10, 11, 2}, {128, 129, 4}, {1024, 1032, 4}, {2048, 2064, 1}};
    for (size_t i = 0; i < m.size(); ++i)
        EXPECT_EQ(std::make_tuple(m[i].lower_ns, m[i].upper_ns, m[i].count), want[i]) << i;
    EXPECT_TRUE(otg::merge_buckets({}).empty());
}

TEST(ViewMerge, MergeBucketsJoinsLastBucketsStretchedToEachEnginesMaximum) {
    // Each engine's last bucket reaches its own largest value + 1: one bucket, the higher end.
    const std::vector<LatencyBucket> a = {{8960, 9024, 3}}, b = {{8960, 9100, 2}};
    const auto m = otg::merge_buckets({a, b});
    ASSERT_EQ(m.size(), 1u);
    EXPECT_EQ(std::make_tuple(m[0].lower_ns, m[0].upper_ns, m[0].count), std::make_tuple(8960u, 9100u, 5u));
}

TEST(ViewMerge, BucketQuantile) {
    EXPECT_EQ(otg::bucket_quantile({}, 0.5), 0u);
    const std::vector<LatencyBucket> b = {{10, 11, 5}, {20, 22, 3}, {1000, 1008, 2}};  // 10 values
    EXPECT_EQ(otg::bucket_quantile(b, 0.0), 10u);
    EXPECT_EQ(otg::bucket_quantile(b, 0.5), 10u);   // rank 4: the 5th value
    EXPECT_EQ(otg::bucket_quantile(b, 0.7), 21u);   // rank 6: the midpoint of [20, 22)
    EXPECT_EQ(otg::bucket_quantile(b, 0.99), 1004u);  // rank 8: the midpoint of [1000, 1008)
    EXPECT_EQ(otg::bucket_quantile(b, 1.0), 1004u);
    // Single-nanosecond buckets hold one value: it, exactly.
    const std::vector<LatencyBucket> exact = {{97, 98, 25}, {99, 100, 74}, {127, 128, 1}};  // 100 values
    EXPECT_EQ(otg::bucket_quantile(exact, 0.2), 97u);   // rank 19
    EXPECT_EQ(otg::bucket_quantile(exact, 0.5), 99u);   // rank 49
    EXPECT_EQ(otg::bucket_quantile(exact, 0.99), 99u);  // rank 98
    EXPECT_EQ(otg::bucket_quantile(exact, 1.0), 127u);  // rank 99
}

// ---- view_merge: views ----

constexpr int64_t kEpoch0 = 1'732'600'000'000'000'000 - 5'000'000'000'000;  // engine 0's realtime - monotonic
constexpr int64_t kEpoch1 = kEpoch0 + 2000;                                  // engine 1's

otg::PortView port(const std::string& name, const std::string& location, uint64_t tx, uint64_t rx) {
    otg::PortView p;
    p.name = name;
    p.location = location;
    p.link_up = true;
    p.n = {tx, tx * 64, rx, rx * 64};
    return p;
}

// Two engines, two flows, three ports: f0 from p1 (engine 0) to p2 (engine 1); f1 from p3 to p2
// (both engine 1). Each engine reports every flow and port, counting only its own.
struct Scenario {
    otg::MergePlan plan;
    std::vector<otg::EngineView> engines;
    Scenario() {
        plan.flow_tx_engine = {0, 1};
        plan.flow_rx_engines = {{1}, {1}};
        plan.port_engine = {0, 1, 1};
        plan.port_location = {"p1-loc", "p2-loc", "p3-loc"};
        engines.resize(2);
        engines[0].clock.boot_id = engines[1].clock.boot_id = "boot-1";
        auto& v0 = engines[0].view;
        auto& v1 = engines[1].view;
        v0.realtime_minus_monotonic_ns = kEpoch0;
        v1.realtime_minus_monotonic_ns = kEpoch1;
        for (auto* v : {&v0, &v1}) {
            v->flows.resize(2);
            v->flows[0].name = "f0", v->flows[0].tx_port = "p1", v->flows[0].rx_port = "p2";
            v->flows[1].name = "f1", v->flows[1].tx_port = "p3", v->flows[1].rx_port = "p2";
            for (auto& f : v->flows) f.latency = f.timestamps = true;
        }
        v0.ports = {port("p1", "veth0", 1000, 0), port("p2", otg::kElsewhere, 0, 0), port("p3", otg::kElsewhere, 0, 0)};
        v1.ports = {port("p1", otg::kElsewhere, 0, 0), port("p2", "veth1", 0, 1495), port("p3", "veth2", 500, 0)};
        // f0: sent by engine 0, received by engine 1.
        auto& s0 = v0.flows[0];
        s0.transmit = otg::Transmit::stopped;
        s0.n.frames_tx = 1000, s0.n.bytes_tx = 64000;
        s0.tx_pps = 100;
        auto& r0 = v1.flows[0];
        r0.transmit = otg::Transmit::stopped;
        r0.n.frames_tx = 7, r0.n.bytes_tx = 448;  // not the sender: ignored
        r0.n.frames_rx = 995, r0.n.bytes_rx = 63680, r0.n.reordered = 3, r0.n.duplicates = 2, r0.n.late = 1;
        r0.n.lat_n = 995, r0.n.lat_sum_ns = 995 * 1500, r0.n.lat_min_ns = 1200, r0.n.lat_max_ns = 9000;
        r0.n.first_rx_ns = 10'000, r0.n.last_rx_ns = 90'000;
        r0.n.lat_buckets = {{1200, 1216, 900}, {8960, 9024, 95}};
        r0.rx_pps = 99.5;
        // f1: sent and received by engine 1.
        auto& f1 = v1.flows[1];
        f1.transmit = otg::Transmit::stopped;
        f1.n.frames_tx = 500, f1.n.bytes_tx = 32000, f1.n.frames_rx = 500, f1.n.bytes_rx = 32000;
        f1.n.lat_n = 500, f1.n.lat_sum_ns = 500 * 100, f1.n.lat_min_ns = 90, f1.n.lat_max_ns = 110;
        f1.n.first_rx_ns = 20'000, f1.n.last_rx_ns = 80'000;
        f1.n.lat_buckets = {{90, 91, 250}, {110, 111, 250}};
    }
    // f0 also reaches a port of engine 0 (rx on both engines): engine 0's share of it.
    void engine0_receives_f0() {
        plan.flow_rx_engines[0] = {0, 1};
        auto& n = engines[0].view.flows[0].n;
        n.frames_rx = 4, n.bytes_rx = 256, n.reordered = 1, n.duplicates = 1, n.late = 2;
        n.lat_n = 4, n.lat_sum_ns = 4 * 800, n.lat_min_ns = 700, n.lat_max_ns = 9500;
        n.first_rx_ns = 9'000, n.last_rx_ns = 91'500;  // in epoch: 3000 ns before and 500 ns before engine 1's
        n.lat_buckets = {{700, 701, 2}, {1200, 1216, 1}, {9472, 9536, 1}};
    }
};

TEST(ViewMerge, TxFromSenderRxSummedPortsFromTheirEngine) {
    Scenario s;
    const auto m = otg::merge_views(s.plan, s.engines);
    ASSERT_EQ(m.view.flows.size(), 2u);
    EXPECT_EQ(m.view.realtime_minus_monotonic_ns, 0);
    const auto& f0 = m.view.flows[0];
    EXPECT_EQ(f0.name, "f0");
    EXPECT_EQ(f0.n.frames_tx, 1000u);
    EXPECT_EQ(f0.n.bytes_tx, 64000u);
    EXPECT_EQ(f0.tx_pps, 100);
    EXPECT_EQ(f0.n.frames_rx, 995u);
    EXPECT_EQ(f0.n.bytes_rx, 63680u);
    EXPECT_EQ(f0.rx_pps, 99.5);
    EXPECT_EQ(f0.n.lat_n, 995u);
    EXPECT_EQ(f0.n.lat_min_ns, 1200u);
    EXPECT_EQ(f0.n.first_rx_ns, static_cast<uint64_t>(10'000 + kEpoch1));
    EXPECT_EQ(f0.n.last_rx_ns, static_cast<uint64_t>(90'000 + kEpoch1));
    EXPECT_EQ(m.latency_clock[0].basis, otg::LatencyBasis::one_clock);
    EXPECT_FALSE(m.rx_over_tx[0]);
    const auto& f1 = m.view.flows[1];
    EXPECT_EQ(f1.n.frames_tx, 500u);
    EXPECT_EQ(f1.n.frames_rx, 500u);
    EXPECT_EQ(f1.n.lat_n, 500u);
    EXPECT_EQ(f1.n.first_rx_ns, static_cast<uint64_t>(20'000 + kEpoch1));
    ASSERT_EQ(m.view.ports.size(), 3u);
    const std::vector<std::tuple<std::string, uint64_t, uint64_t>> ports = {
        {"p1-loc", 1000, 0}, {"p2-loc", 0, 1495}, {"p3-loc", 500, 0}};
    for (size_t p = 0; p < 3; ++p) {
        EXPECT_EQ(std::make_tuple(m.view.ports[p].location, m.view.ports[p].n.frames_tx, m.view.ports[p].n.frames_rx),
                  ports[p])
            << p;
        EXPECT_TRUE(m.view.ports[p].link_up) << p;
    }
    EXPECT_EQ(m.view.ports[0].name, "p1");
}

TEST(ViewMerge, ReceiversOnTwoEnginesAddUp) {
    Scenario s;
    s.engine0_receives_f0();
    const auto m = otg::merge_views(s.plan, s.engines);
    const auto& n = m.view.flows[0].n;
    EXPECT_EQ(n.frames_tx, 1000u);
    EXPECT_EQ(n.bytes_tx, 64000u);
    EXPECT_EQ(n.frames_rx, 999u);
    EXPECT_EQ(n.bytes_rx, 63936u);
    EXPECT_EQ(n.reordered, 4u);
    EXPECT_EQ(n.duplicates, 3u);
    EXPECT_EQ(n.late, 3u);
    EXPECT_EQ(n.lat_n, 999u);
    EXPECT_EQ(n.lat_sum_ns, 995u * 1500 + 4 * 800);
    EXPECT_EQ(n.lat_min_ns, 700u);
    EXPECT_EQ(n.lat_max_ns, 9500u);
    // Arrival times in epoch ns, each engine's own offset: the last is engine 1's although its
    // monotonic reading (90'000) is below engine 0's (91'500).
    EXPECT_EQ(n.first_rx_ns, static_cast<uint64_t>(9'000 + kEpoch0));
    EXPECT_EQ(n.last_rx_ns, static_cast<uint64_t>(90'000 + kEpoch1));
    ASSERT_EQ(m.buckets[0].size(), 4u);
    EXPECT_EQ(m.buckets[0][0].lower_ns, 700u);
    EXPECT_EQ(m.buckets[0][1].lower_ns, 1200u);
    EXPECT_EQ(m.buckets[0][1].count, 901u);
    EXPECT_EQ(m.buckets[0][2].lower_ns, 8960u);
    EXPECT_EQ(m.buckets[0][3].lower_ns, 9472u);
    ASSERT_EQ(n.lat_buckets.size(), 4u);
    EXPECT_EQ(n.lat_buckets[1].count, 901u);
}

TEST(ViewMerge, ArrivalTimesUseEachEnginesOffset) {
    Scenario s;
    s.engine0_receives_f0();
    // Engine 1's offset 5000 ns below engine 0's: its first arrival (10'000 monotonic, above
    // engine 0's 9'000) is the earliest in epoch time.
    s.engines[1].view.realtime_minus_monotonic_ns = kEpoch0 - 5000;
    const auto m = otg::merge_views(s.plan, s.engines);
    EXPECT_EQ(m.view.flows[0].n.first_rx_ns, static_cast<uint64_t>(10'000 + kEpoch0 - 5000));
    EXPECT_EQ(m.view.flows[0].n.last_rx_ns, static_cast<uint64_t>(91'500 + kEpoch0));
}

// Both hosts' clocks synchronised: the latency read across them is given, with the bound.
void synchronised(otg::ClockInfo& c, double bound_ns) {
    c.sync.source = "chrony";
    c.sync.synchronised = true;
    c.sync.bound_ns = bound_ns;
}

TEST(ViewMerge, LatencyAcrossSynchronisedHostsCarriesTheBound) {
    Scenario s;
    s.engine0_receives_f0();  // f0 also arrives on the sender's own engine
    s.engines[1].clock.boot_id = "boot-2";
    synchronised(s.engines[0].clock, 1500);
    synchronised(s.engines[1].clock, 250);
    const auto m = otg::merge_views(s.plan, s.engines);
    EXPECT_EQ(m.latency_clock[0].basis, otg::LatencyBasis::synchronised);
    EXPECT_EQ(m.latency_clock[0].bound_ns, 1750);
    EXPECT_EQ(m.view.flows[0].n.lat_n, 999u) << "both receivers' latency";
    // f1 is sent and received by engine 1: one clock, whatever the other host's.
    EXPECT_EQ(m.latency_clock[1].basis, otg::LatencyBasis::one_clock);
    EXPECT_EQ(m.view.flows[1].n.lat_n, 500u);
}

TEST(ViewMerge, LatencyAcrossUnsynchronisedHostsIsIndicative) {
    Scenario s;
    s.engines[1].clock.boot_id = "boot-2";
    synchronised(s.engines[1].clock, 250);  // the receiver's is; the sender's is not known to be
    const auto m = otg::merge_views(s.plan, s.engines);
    EXPECT_EQ(m.latency_clock[0].basis, otg::LatencyBasis::indicative);
    EXPECT_EQ(m.latency_clock[0].bound_ns, 0);
    EXPECT_EQ(m.view.flows[0].n.lat_n, 995u);
    EXPECT_EQ(m.view.flows[0].n.lat_min_ns, 1200u);
    EXPECT_EQ(m.buckets[0].size(), 2u);
    EXPECT_EQ(m.latency_clock[1].basis, otg::LatencyBasis::one_clock);
}

TEST(ViewMerge, SynchronisedWithoutABoundIsIndicative) {
    Scenario s;
    s.engines[1].clock.boot_id = "boot-2";
    synchronised(s.engines[0].clock, 100);
    synchronised(s.engines[1].clock, 100);
    s.engines[1].clock.sync.bound_ns.reset();
    EXPECT_EQ(otg::merge_views(s.plan, s.engines).latency_clock[0].basis, otg::LatencyBasis::indicative);
}

TEST(ViewMerge, StoppedSenderStillCountingReceiverReadsStarted) {
    Scenario s;
    s.engines[1].view.flows[0].transmit = otg::Transmit::started;
    auto m = otg::merge_views(s.plan, s.engines);
    EXPECT_EQ(m.view.flows[0].transmit, otg::Transmit::started);
    EXPECT_EQ(m.view.flows[1].transmit, otg::Transmit::stopped);
    s.engines[1].view.flows[0].transmit = otg::Transmit::stopped;
    m = otg::merge_views(s.plan, s.engines);
    EXPECT_EQ(m.view.flows[0].transmit, otg::Transmit::stopped);
}

TEST(ViewMerge, RxOverTxClampedOnlyWhileStarted) {
    Scenario s;
    s.engines[1].view.flows[0].n.frames_rx = 1003;  // read after the sender: ahead of its view
    s.engines[0].view.flows[0].transmit = otg::Transmit::started;
    auto m = otg::merge_views(s.plan, s.engines);
    EXPECT_EQ(m.view.flows[0].transmit, otg::Transmit::started);
    EXPECT_EQ(m.view.flows[0].n.frames_rx, 1000u);
    EXPECT_EQ(m.view.flows[0].n.frames_tx, 1000u);
    s.engines[0].view.flows[0].transmit = otg::Transmit::stopped;
    m = otg::merge_views(s.plan, s.engines);
    EXPECT_EQ(m.view.flows[0].transmit, otg::Transmit::stopped);
    EXPECT_EQ(m.view.flows[0].n.frames_rx, 1003u);
    EXPECT_TRUE(m.rx_over_tx[0]);
    EXPECT_FALSE(m.rx_over_tx[1]);
}

TEST(ViewMerge, MismatchedViewsThrow) {
    Scenario s;
    s.engines[1].view.flows.pop_back();
    EXPECT_THROW(otg::merge_views(s.plan, s.engines), std::runtime_error);
    Scenario p;
    p.engines[0].view.ports.pop_back();
    EXPECT_THROW(otg::merge_views(p.plan, p.engines), std::runtime_error);
}

// ---- view_json ----

otg::View sample_view() {
    otg::View v;
    v.realtime_minus_monotonic_ns = -1'234'567'890'123;
    const otg::Transmit states[] = {otg::Transmit::started, otg::Transmit::paused, otg::Transmit::stopped};
    for (int i = 0; i < 3; ++i) {
        otg::FlowView f;
        f.name = "f" + std::to_string(i);
        f.tx_port = "p" + std::to_string(i);
        f.rx_port = "q" + std::to_string(i);
        f.transmit = states[i];
        const uint64_t k = 1000 * (i + 1);
        f.n = {k + 1, k + 2, k + 3, k + 4, k + 5, k + 6, k + 7, k + 8, k + 9, k + 10, k + 11,
               18'000'000'000'000'000'000ull + k, 18'000'000'000'000'000'001ull + k, 12.75 + i, {}};
        f.n.lat_buckets = {{k, k + 1, 3}, {k + 128, k + 130, 5 + static_cast<uint64_t>(i)}};
        f.tx_pps = 1.5 + i, f.rx_pps = 2.25 + i, f.tx_l2_bps = 3e9 + i, f.rx_l2_bps = 4e9 + i;
        f.tx_l1_bps = 5.125e9 + i, f.rx_l1_bps = 6.0625e9 + i;
        f.latency = i != 1;
        f.timestamps = i == 1;
        v.flows.push_back(f);
    }
    for (int i = 0; i < 3; ++i) {
        otg::PortView p;
        p.name = "p" + std::to_string(i);
        p.location = i == 2 ? otg::kElsewhere : "veth" + std::to_string(i);
        p.link_up = i == 0;
        p.capturing = i == 1;
        p.transmit = states[2 - i];
        p.n = {10u + i, 20u + i, 30u + i, 40u + i};
        p.tx_pps = 0.5 + i, p.rx_pps = 0.25 + i, p.tx_bytes_per_s = 7e8 + i, p.rx_bytes_per_s = 8e8 + i;
        p.speed_bps = i == 2 ? 0 : 1e11;
        v.ports.push_back(p);
    }
    return v;
}

void expect_same(const otg::View& a, const otg::View& b) {
    EXPECT_EQ(a.realtime_minus_monotonic_ns, b.realtime_minus_monotonic_ns);
    ASSERT_EQ(a.flows.size(), b.flows.size());
    for (size_t i = 0; i < a.flows.size(); ++i) {
        SCOPED_TRACE("flow " + std::to_string(i));
        const auto &x = a.flows[i], &y = b.flows[i];
        EXPECT_EQ(std::tie(x.name, x.tx_port, x.rx_port, x.transmit, x.latency, x.timestamps),
                  std::tie(y.name, y.tx_port, y.rx_port, y.transmit, y.latency, y.timestamps));
        EXPECT_EQ(std::tie(x.tx_pps, x.rx_pps, x.tx_l2_bps, x.rx_l2_bps, x.tx_l1_bps, x.rx_l1_bps),
                  std::tie(y.tx_pps, y.rx_pps, y.tx_l2_bps, y.rx_l2_bps, y.tx_l1_bps, y.rx_l1_bps));
        const auto &m = x.n, &n = y.n;
        EXPECT_EQ(std::tie(m.frames_tx, m.bytes_tx, m.frames_rx, m.bytes_rx, m.reordered, m.duplicates, m.late),
                  std::tie(n.frames_tx, n.bytes_tx, n.frames_rx, n.bytes_rx, n.reordered, n.duplicates, n.late));
        EXPECT_EQ(std::tie(m.lat_n, m.lat_sum_ns, m.lat_min_ns, m.lat_max_ns, m.first_rx_ns, m.last_rx_ns, m.jitter_ns),
                  std::tie(n.lat_n, n.lat_sum_ns, n.lat_min_ns, n.lat_max_ns, n.first_rx_ns, n.last_rx_ns, n.jitter_ns));
        ASSERT_EQ(m.lat_buckets.size(), n.lat_buckets.size());
        for (size_t b = 0; b < m.lat_buckets.size(); ++b)
            EXPECT_EQ(std::tie(m.lat_buckets[b].lower_ns, m.lat_buckets[b].upper_ns, m.lat_buckets[b].count),
                      std::tie(n.lat_buckets[b].lower_ns, n.lat_buckets[b].upper_ns, n.lat_buckets[b].count));
    }
    ASSERT_EQ(a.ports.size(), b.ports.size());
    for (size_t i = 0; i < a.ports.size(); ++i) {
        SCOPED_TRACE("port " + std::to_string(i));
        const auto &x = a.ports[i], &y = b.ports[i];
        EXPECT_EQ(std::tie(x.name, x.location, x.link_up, x.capturing, x.transmit),
                  std::tie(y.name, y.location, y.link_up, y.capturing, y.transmit));
        EXPECT_EQ(std::tie(x.n.frames_tx, x.n.bytes_tx, x.n.frames_rx, x.n.bytes_rx),
                  std::tie(y.n.frames_tx, y.n.bytes_tx, y.n.frames_rx, y.n.bytes_rx));
        EXPECT_EQ(std::tie(x.tx_pps, x.rx_pps, x.tx_bytes_per_s, x.rx_bytes_per_s, x.speed_bps),
                  std::tie(y.tx_pps, y.rx_pps, y.tx_bytes_per_s, y.rx_bytes_per_s, y.speed_bps));
    }
}

TEST(ViewJson, RoundTripKeepsEveryField) {
    const auto v = sample_view();
    // Through text, as an engine's answer travels.
    const auto back = otg::view_from_json(json::parse(otg::view_to_json(v).dump()));
    expect_same(v, back);
    // A positive offset (the usual: realtime far ahead of monotonic) as well.
    auto w = v;
    w.realtime_minus_monotonic_ns = 1'732'600'000'123'456'789;
    EXPECT_EQ(otg::view_from_json(json::parse(otg::view_to_json(w).dump())).realtime_minus_monotonic_ns,
              1'732'600'000'123'456'789);
}

TEST(ViewJson, MissingOrWrongFieldsThrow) {
    const auto good = otg::view_to_json(sample_view());
    const std::vector<std::pair<json::json_pointer, std::string>> removals = {
        {json::json_pointer("/realtime_minus_monotonic_ns"), "realtime_minus_monotonic_ns"},
        {json::json_pointer("/flows/1/n/lat_buckets"), "lat_buckets"},
        {json::json_pointer("/flows/0/n/jitter_ns"), "jitter_ns"},
        {json::json_pointer("/flows/2/timestamps"), "timestamps"},
        {json::json_pointer("/ports/1/speed_bps"), "speed_bps"},
        {json::json_pointer("/ports/0/n/bytes_rx"), "bytes_rx"},
        {json::json_pointer("/ports"), "ports"},
    };
    for (const auto& [ptr, key] : removals) {
        auto j = good;
        j[ptr.parent_pointer()].erase(ptr.back());
        try {
            otg::view_from_json(j);
            ADD_FAILURE() << ptr.to_string() << " missing was accepted";
        } catch (const std::runtime_error& e) {
            EXPECT_NE(std::string(e.what()).find(key), std::string::npos) << e.what();
        }
    }
    auto j = good;
    j["flows"][0]["transmit"] = "running";
    EXPECT_THROW(otg::view_from_json(j), std::runtime_error);
    j = good;
    j["flows"][0]["n"]["frames_tx"] = "12";
    EXPECT_THROW(otg::view_from_json(j), std::runtime_error);
    j = good;
    j["flows"][0]["n"]["lat_buckets"][0] = json::array({1, 2});
    EXPECT_THROW(otg::view_from_json(j), std::runtime_error);
}

// ---- clock_info ----

const char* kTracking =
    "A9FEA97B,169.254.169.123,4,1732600000.123456789,-0.000001234,0.000000567,0.000012345,-12.345,-0.001,0.012,"
    "0.000456789,0.000123456,64.2,Normal";

TEST(ClockInfo, ChronyTracking) {
    const auto s = otg::parse_chrony_tracking(kTracking);
    ASSERT_TRUE(s);
    EXPECT_EQ(s->source, "chrony");
    EXPECT_TRUE(s->synchronised);
    ASSERT_TRUE(s->bound_ns);
    // |offset| 1234 ns + root dispersion 123456 ns + root delay 456789 ns / 2.
    EXPECT_NEAR(*s->bound_ns, 1234 + 123456 + 228394.5, 1.0);
    EXPECT_NE(s->detail.find("169.254.169.123"), std::string::npos) << s->detail;
    EXPECT_NE(s->detail.find("stratum 4"), std::string::npos) << s->detail;
}

TEST(ClockInfo, ChronyNotSynchronised) {
    std::string line = kTracking;
    line.replace(line.rfind(',') + 1, std::string::npos, "Not synchronised");
    const auto s = otg::parse_chrony_tracking(line);
    ASSERT_TRUE(s);
    EXPECT_FALSE(s->synchronised);
    EXPECT_NE(s->detail.find("Not synchronised"), std::string::npos) << s->detail;
}

TEST(ClockInfo, ChronyUnreadable) {
    EXPECT_FALSE(otg::parse_chrony_tracking(""));
    EXPECT_FALSE(otg::parse_chrony_tracking("A9FEA97B,169.254.169.123,4,1732600000.1,-0.000001234"));
    EXPECT_FALSE(otg::parse_chrony_tracking("506 Cannot talk to daemon"));
    EXPECT_FALSE(otg::parse_chrony_tracking("a,b,c,d,e,f,g,h,i,j,k,l,m,n"));
    EXPECT_FALSE(otg::parse_chrony_tracking(
        "A9FEA97B,169.254.169.123,4,1732600000.1,offset,0,0,0,0,0,0.000456789,0.000123456,64.2,Normal"));
}

TEST(ClockInfo, JsonRoundTrip) {
    otg::ClockInfo c;
    c.boot_id = "0b6f5a3e-6c0d-4d8e-9a51-8f1c2d3e4f50";
    c.sync = *otg::parse_chrony_tracking(kTracking);
    c.realtime_minus_monotonic_ns = 1'764'000'000'123'456'789;
    const auto back = otg::clock_from_json(json::parse(otg::clock_json(c).dump()));
    EXPECT_EQ(back.stamps, "CLOCK_MONOTONIC");
    EXPECT_EQ(back.boot_id, c.boot_id);
    EXPECT_EQ(back.realtime_minus_monotonic_ns, c.realtime_minus_monotonic_ns);
    EXPECT_EQ(back.sync.source, "chrony");
    EXPECT_TRUE(back.sync.synchronised);
    EXPECT_EQ(back.sync.detail, c.sync.detail);
    ASSERT_TRUE(back.sync.bound_ns);
    EXPECT_DOUBLE_EQ(*back.sync.bound_ns, *c.sync.bound_ns);
    // No source: no bound, and none comes back.
    otg::ClockInfo none;
    none.boot_id = "b";
    none.sync.detail = "neither chronyc nor pmc (ptp4l) answered";
    const auto j = otg::clock_json(none);
    EXPECT_FALSE(j["sync"].contains("bound_ns"));
    const auto n = otg::clock_from_json(j);
    EXPECT_EQ(n.sync.source, "none");
    EXPECT_FALSE(n.sync.synchronised);
    EXPECT_FALSE(n.sync.bound_ns);
    EXPECT_EQ(n.sync.detail, none.sync.detail);
    EXPECT_EQ(n.boot_id, "b");
}

}  // namespace

TEST(EngineTrial, JsonRoundTrip) {
    result::TrialResult r;
    r.interrupted = false;
    r.violations = {"received 5 distinct test frames, more than the 4 sent"};
    r.outages.push_back({"veth0", 0.25, 0.5, 0.25, 100, 3, 7});
    r.tx.packets = 16000, r.tx.skipped = 12, r.tx.stalls = 3, r.tx.longest_stall_ns = 4'500'000;
    r.tx_cpu_wait.longest_s = 0.004;
    r.tx_seconds = 1.0005;
    r.rx.unique = 15990;
    r.loss.egress_dropped = 2, r.loss.host_rx_dropped = 8;
    auto j = otg::engine_trial_json(r);
    j["finished"] = 3;
    const auto t = otg::engine_trial_from_json(json::parse(j.dump()));
    EXPECT_EQ(t.finished, 3u);
    EXPECT_EQ(t.violations, r.violations);
    ASSERT_EQ(t.outages.size(), 1u);
    EXPECT_EQ(t.outages[0].port, "veth0");
    EXPECT_EQ(t.outages[0].to, 0.5);
    EXPECT_EQ(t.outages[0].egress_dropped, 3u);
    EXPECT_EQ(t.outages[0].received, 7u);
    EXPECT_EQ(t.tx_packets, 16000u);
    EXPECT_EQ(t.tx_skipped, 12u);
    EXPECT_EQ(t.stalls, 3u);
    EXPECT_DOUBLE_EQ(t.longest_stall_s, 0.0045);
    EXPECT_DOUBLE_EQ(t.tx_cpu_wait_longest_s, 0.004);
    EXPECT_EQ(t.rx_unique, 15990u);
    EXPECT_EQ(t.egress_dropped, 2u);
    EXPECT_EQ(t.host_rx_dropped, 8u);
    // An engine that has finished no trial answers {}.
    EXPECT_EQ(otg::engine_trial_from_json(json::object()).finished, 0u);
    EXPECT_THROW(otg::engine_trial_from_json(json::parse(R"({"finished": 1})")), std::exception);
}
