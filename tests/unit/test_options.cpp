// The option table: one vocabulary for the command line, profiles, the JSON spec and the docs.
#include <gtest/gtest.h>

#include <fstream>
#include <set>
#include <sstream>

#include <nlohmann/json.hpp>

#include "spec/options.h"
#include "util/error.h"

using namespace lr;

namespace {

template <class F>
std::string usage_error(F&& f) {
    try {
        f();
    } catch (const UsageError& e) {
        return e.what();
    }
    return "(no error)";
}

spec::OptionValues base() { return {{"tx", {"p"}}}; }

}  // namespace

TEST(Options, EveryRowParsesAndNamesAreUniquePerCommand) {
    for (auto cmd : {spec::Command::run, spec::Command::reflect}) {
        std::set<std::string> names, cli;
        for (const auto& row : spec::option_table()) {
            if (!row.applies_to(cmd)) continue;
            EXPECT_NE(row.apply, nullptr) << row.name;
            EXPECT_FALSE(row.help.empty()) << row.name;
            EXPECT_TRUE(names.insert(std::string(row.name)).second) << "duplicate " << row.name;
            EXPECT_TRUE(cli.insert(row.cli_names()).second) << "duplicate " << row.cli_names();
        }
    }
}

TEST(Options, EnumeratedValuesHaveOneNameTableForEveryCommand) {
    auto s = base();
    s["backend"] = {"afxdp"};
    for (const char* drv : {"drv", "native"}) {
        s["xdp-mode"] = {drv};
        EXPECT_EQ(spec::build_run_spec(s).afxdp.xdp_mode, spec::XdpMode::native) << drv;
        spec::OptionValues r{{"port", {"veth0"}}, {"xdp-mode", {drv}}};
        EXPECT_EQ(spec::build_reflect_draft(r).spec.afxdp.xdp_mode, spec::XdpMode::native) << drv;
    }
    s["xdp-mode"] = {"generic"};
    EXPECT_EQ(spec::build_run_spec(s).afxdp.xdp_mode, spec::XdpMode::skb);
    s["xsk-mode"] = {"zc"};
    EXPECT_EQ(spec::build_run_spec(s).afxdp.xsk_mode, spec::XskMode::zero_copy);
    s["xsk-mode"] = {"fast"};
    EXPECT_EQ(usage_error([&] { spec::build_run_spec(s); }),
              "invalid --xsk-mode \"fast\": expected auto, copy or zero-copy");
    EXPECT_EQ(spec::xdp_mode_choices().expected(), "auto, native or skb");
}

TEST(Options, AnOptionTheBackendCannotHonourIsRefused) {
    auto s = base();
    s["xsk-mode"] = {"copy"};
    EXPECT_EQ(usage_error([&] { spec::build_run_spec(s); }),
              "--xsk-mode applies to the afxdp backend only (this run uses dpdk)");
    s = base();
    s["backend"] = {"afxdp"};
    s["eal"] = {"--no-pci"};
    EXPECT_EQ(usage_error([&] { spec::build_run_spec(s); }),
              "EAL arguments after -- applies to the dpdk backend only (this run uses afxdp)");
    s = base();
    s["backend"] = {"afxdp"};
    s["mbufs"] = {"9000"};
    EXPECT_NE(usage_error([&] { spec::build_run_spec(s); }).find("--mbufs applies to the dpdk backend only"),
              std::string::npos);
    s = base();
    s["backend"] = {"afxdp"};
    s["ring-pair"] = {"a,b"};
    EXPECT_NE(usage_error([&] { spec::build_run_spec(s); }).find("--ring-pair applies to the dpdk backend only"),
              std::string::npos);
    s = base();
    s["rx-mode"] = {"xdp"};
    EXPECT_NE(usage_error([&] { spec::build_run_spec(s); }).find("--rx-mode applies to the afxdp backend only"),
              std::string::npos);
    EXPECT_EQ(usage_error([&] { spec::build_run_spec({{"tx", {"p"}}, {"frobnicate", {"1"}}}); }),
              "unknown option \"frobnicate\"");
}

TEST(Options, RangeErrorsNameTheValueGiven) {
    auto s = base();
    s["rx"] = {"q"};
    s["max-loss"] = {"150"};
    EXPECT_EQ(usage_error([&] { spec::build_run_spec(s); }),
              "invalid --max-loss \"150\": expected a percentage between 0 and 100");
    s["max-loss"] = {"-1"};
    EXPECT_NE(usage_error([&] { spec::build_run_spec(s); }).find("\"-1\""), std::string::npos);
    s = base();
    s["burst"] = {"513"};
    EXPECT_EQ(usage_error([&] { spec::build_run_spec(s); }), "invalid --burst \"513\": must be between 0 and 512");
}

TEST(Options, TheJsonSpecKeepsItsFields) {
    auto s = base();
    s["rx"] = {"q"};
    s["count"] = {"10k"};
    const auto j = spec::spec_json(spec::build_run_spec(s));
    for (const char* k : {"backend", "tx", "rx", "eal_args", "xdp_mode", "xsk_mode", "rx_mode", "cpus", "ring_pairs",
                          "frame", "flows", "signature", "nonce", "vary", "count", "rate_pps", "reflect", "outstanding",
                          "response_timeout_s", "duration_s", "interval_s", "drain_s", "stall_s", "burst", "descriptors",
                          "mbufs", "max_loss_pct", "trials"})
        EXPECT_TRUE(j.contains(k)) << k;
    for (const char* k : {"size", "l4", "ip", "vlan", "vlan_pcp", "src_mac", "dst_mac", "src_ip", "dst_ip", "src_port",
                          "dst_port", "ttl"})
        EXPECT_TRUE(j["frame"].contains(k)) << k;
    EXPECT_EQ(j["count"], 10000);
    EXPECT_EQ(j["backend"], "dpdk");
    EXPECT_EQ(j["burst"], 64);
}

TEST(Options, ReflectBuildsItsSpecFromTheSameTable) {
    const auto d = spec::build_reflect_draft(
        {{"port", {"veth1"}}, {"reflect-backend", {"afxdp"}}, {"queues", {"2"}}, {"dst-ports", {"2000-2003"}}});
    EXPECT_EQ(d.spec.backend, spec::BackendKind::afxdp);
    EXPECT_TRUE(d.spec.reflect);
    ASSERT_EQ(d.spec.tx.size(), 1u);
    EXPECT_EQ(d.spec.tx[0], (spec::PortQueues{"veth1", 2}));
    EXPECT_EQ(d.spec.rx, d.spec.tx);
    EXPECT_EQ(d.spec.flows, 4u);
    EXPECT_EQ(d.spec.frame.dst_port, 2000);
    EXPECT_DOUBLE_EQ(d.spec.duration_s, 60);
    EXPECT_NE(usage_error([] { spec::build_reflect_draft({{"queues", {"2"}}}); }).find("--port"), std::string::npos);
    EXPECT_NE(usage_error([] {
                  spec::build_reflect_draft({{"port", {"p"}}, {"reflect-backend", {"xdp"}}, {"eal", {"--no-pci"}}});
              }).find("applies to the dpdk backend only"),
              std::string::npos);
}

TEST(Options, TheDocsListEveryOptionAsTheTableDoes) {
    std::ifstream f(LINERATE_SOURCE_DIR "/docs/usage.md");
    ASSERT_TRUE(f) << "docs/usage.md";
    std::stringstream ss;
    ss << f.rdbuf();
    const std::string doc = ss.str();
    for (auto [cmd, name] : {std::pair{spec::Command::run, "run"}, std::pair{spec::Command::reflect, "reflect"},
                             std::pair{spec::Command::procedure, "procedures"}}) {
        const std::string begin = std::string("<!-- options ") + name + " begin (generated by `linerate options " +
                                  name + "`) -->\n";
        const std::string end = std::string("<!-- options ") + name + " end -->";
        const auto b = doc.find(begin), e = doc.find(end);
        ASSERT_NE(b, std::string::npos) << begin;
        ASSERT_NE(e, std::string::npos) << end;
        EXPECT_EQ(doc.substr(b + begin.size(), e - b - begin.size()), spec::options_markdown(cmd))
            << "docs/usage.md is out of date: regenerate it with `linerate options " << name << "`";
    }
}
