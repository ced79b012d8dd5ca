// The option table: one vocabulary for the command line, profiles, the JSON spec and the docs.
#include <gtest/gtest.h>

#include <fmt/format.h>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <tuple>

#include <nlohmann/json.hpp>

#include "procedures/search.h"
#include "spec/options.h"
#include "spec/parse.h"
#include "util/error.h"
#include "usage_error.h"

using namespace lr;

namespace {

using lr::test_support::usage_error;

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
    s["settle"] = {"11m"};
    EXPECT_EQ(usage_error([&] { spec::build_run_spec(s); }),
              "invalid --settle \"11m\": must be 0 or at most 10 minutes");
    s["settle"] = {"0x"};
    EXPECT_EQ(usage_error([&] { spec::build_run_spec(s); }),
              "invalid --settle \"0x\": unknown unit \"x\" (use s, ms, us, m or h)");
    s["settle"] = {"-5ms"};
    EXPECT_EQ(usage_error([&] { spec::build_run_spec(s); }), "invalid --settle \"-5ms\": must be 0 or more");
    s = base();
    for (const char* bad : {"-21", "20", "-", "", "x", "-1x", "+5"}) {
        s["sender-nice"] = {bad};
        EXPECT_EQ(usage_error([&] { spec::build_run_spec(s); }),
                  fmt::format("invalid --sender-nice \"{}\": must be keep or a nice value from -20 to 19", bad));
    }
    for (auto [given, nice] : {std::pair{"-20", std::optional<int>(-20)}, std::pair{"19", std::optional<int>(19)},
                               std::pair{"0", std::optional<int>(0)}, std::pair{"keep", std::optional<int>()}}) {
        s["sender-nice"] = {given};
        EXPECT_EQ(spec::build_run_spec(s).sender_nice, nice) << given;
    }
    s = base();
    s["duration"] = {"0s"};
    EXPECT_EQ(usage_error([&] { spec::build_run_spec(s); }), "invalid --duration \"0s\": must be greater than zero");
    s = base();
    for (auto [given, seconds] : {std::pair{"0", 0.0}, std::pair{"0ms", 0.0}, std::pair{"none", 0.0},
                                  std::pair{"250ms", 0.25}}) {
        s["settle"] = {given};
        EXPECT_EQ(spec::build_run_spec(s).settle_s, seconds) << given;
    }
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
                          "response_timeout_s", "duration_s", "interval_s", "drain_s", "settle_s", "stall_s", "burst", "descriptors",
                          "mbufs", "max_loss_pct", "trials"})
        EXPECT_TRUE(j.contains(k)) << k;
    for (const char* k : {"size", "l4", "ip", "vlan", "vlan_pcp", "src_mac", "dst_mac", "src_ip", "dst_ip", "src_port",
                          "dst_port", "ttl"})
        EXPECT_TRUE(j["frame"].contains(k)) << k;
    EXPECT_EQ(j["count"], 10000);
    EXPECT_EQ(j["backend"], "dpdk");
    EXPECT_EQ(j["burst"], 64);
}

TEST(Options, EveryValueOfTheJsonSpecHasTheOptionBehindIt) {
    std::map<std::string, std::string> owner;  // "frame.size" -> "--size"
    for (const auto& o : spec::shown_options())
        for (const auto& k : o.keys) {
            EXPECT_EQ(owner.count(k), 0u) << k << " shown by " << owner[k] << " and " << o.option;
            owner[k] = o.option;
        }
    EXPECT_EQ(owner.at("frame.size"), "--size");
    EXPECT_EQ(owner.at("catch_up_s"), "--catch-up");
    EXPECT_EQ(owner.at("rate_pps"), "--rate");
    EXPECT_EQ(owner.at("eal_args"), "-- ARGS");
    EXPECT_EQ(owner.at("max_loss_pct"), "--max-loss");
    auto s = base();
    s["rx"] = {"q"};
    for (const auto kind : {spec::Procedure::run, spec::Procedure::throughput}) {
        const auto j = spec::spec_json(spec::build_run_spec(s, kind));
        for (const auto& [k, v] : j.items()) {
            if (k == "reflect") continue;  // the reflector's own reports set it; no option does
            if (v.is_object()) {
                for (const auto& [k2, v2] : v.items()) EXPECT_EQ(owner.count(k + "." + k2), 1u) << k << "." << k2;
            } else {
                EXPECT_EQ(owner.count(k), 1u) << k;
            }
        }
    }
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

// One source for each default: applying the default a row prints changes nothing in the spec
// its command builds without the option; the defaults that depend on something say so, and
// the procedures use the values printed.
TEST(Options, EveryPrintedDefaultIsTheSpecsOwn) {
    const std::set<std::string> described = {"src-ip", "dst-ip", "duration", "ttl", "width", "sizes", "goals",
                                             "trial-duration", "duration-sum", "exceed-ratio", "min-rate",
                                             "initial-duration"};
    const auto json_of = [](spec::OptionValues o, spec::Procedure k) {
        o["nonce"] = {"7"};
        return spec::spec_json(spec::build_run_spec(o, k));
    };
    unsigned checked = 0;
    for (const auto& row : spec::option_table()) {
        if (row.default_text.empty() || row.kind == spec::OptionDef::Kind::flag) continue;
        const bool run = row.applies_to(spec::Command::run);
        if (!run && !row.applies_to(spec::Command::procedure)) continue;  // reflect's: below
        const auto kind = run ? spec::Procedure::run : spec::Procedure::throughput;
        auto given = base();
        given["rx"] = {"q"};
        if (!(row.backends & spec::kDpdk)) given["backend"] = {"afxdp"};
        const auto without = json_of(given, kind);
        std::string value = row.default_text;
        if (described.count(std::string(row.name))) {
            if (row.name != "duration" && row.name != "src-ip" && row.name != "dst-ip" && row.name != "ttl") continue;
            value = value.substr(0, value.find(" ("));  // "10s (reflect: 60s)": the run's part
        }
        given[std::string(row.name)] = {value};
        EXPECT_EQ(json_of(given, kind), without) << "--" << row.name << " " << value << " is not the default";
        ++checked;
    }
    EXPECT_GT(checked, 30u);
    // The searches' defaults are the procedures' own.
    spec::ProcedureSpec p;
    p.kind = spec::Procedure::back_to_back;
    const double b2b = p.default_width();
    p.kind = spec::Procedure::throughput;
    EXPECT_EQ(spec::find_option("width")->default_text, fmt::format("{:g} (back-to-back: {:g})", p.default_width() * 100, b2b * 100));
    for (const auto* preset : {"rfc2544", "csit", "tst009"})
        for (const auto& g : procedures::preset_goals(preset)) {
            EXPECT_DOUBLE_EQ(g.width, p.default_width()) << preset;
            EXPECT_DOUBLE_EQ(g.initial_trial_s,
                             spec::parse_duration(spec::find_option("initial-duration")->default_text, "d"))
                << preset;
        }
    EXPECT_EQ(spec::find_option("preset")->default_text, "rfc2544");
    // reflect's own rows.
    const auto plain = spec::build_reflect_draft({{"port", {"p"}}});
    for (const char* name : {"reflect-backend", "queues", "reflect-proto", "dst-ports"}) {
        const auto d = spec::build_reflect_draft({{"port", {"p"}}, {name, {spec::find_option(name)->default_text}}});
        EXPECT_TRUE(d.reflect_backend == plain.reflect_backend && d.queues == plain.queues &&
                    d.any_proto == plain.any_proto && d.spec.frame.dst_port == plain.spec.frame.dst_port &&
                    std::max(d.dst_port_hi, d.spec.frame.dst_port) == std::max(plain.dst_port_hi, plain.spec.frame.dst_port))
            << name;
    }
    EXPECT_EQ(spec::find_option("duration")->default_text,
              fmt::format("{} (reflect: {})", spec::format_duration(spec::RunSpec{}.duration_s),
                          spec::format_duration(
                              spec::build_reflect_draft({{"port", {"p"}}, {"reflect-backend", {"afxdp"}}}).spec.duration_s)));
}

// The rows only impair or connect take print their spec's own defaults too (the shared ones
// are checked above with run's).
TEST(Options, ImpairAndConnectPrintTheirOwnDefaults) {
    using spec::Command;
    const std::set<std::string> described = {"impair-rate", "impair-duration"};  // "none", "until stopped"
    unsigned checked = 0;
    for (const auto& row : spec::option_table()) {
        if (row.default_text.empty() || row.kind == spec::OptionDef::Kind::flag || described.count(std::string(row.name)))
            continue;
        if (row.applies_to(Command::run) || row.applies_to(Command::procedure)) continue;
        for (const auto cmd : {Command::impair, Command::connect}) {
            if (!row.applies_to(cmd)) continue;
            spec::OptionValues given = cmd == Command::impair ? spec::OptionValues{{"between", {"a,b"}}}
                                                               : spec::OptionValues{{"connect-port", {"p"}}};
            const auto build = [&](const spec::OptionValues& o) {
                return spec::spec_json(cmd == Command::impair ? spec::build_impair_spec(o) : spec::build_connect_spec(o));
            };
            const auto without = build(given);
            given[std::string(row.name)] = {row.default_text};
            EXPECT_EQ(build(given), without) << row.cli_names() << " " << row.default_text << " is not the default";
            ++checked;
        }
    }
    EXPECT_GE(checked, 18u);
}

TEST(Options, DurationsPrintAsTheyParse) {
    for (double s : {0.1, 0.25, 1.0, 2.0, 60.0, 3600.0, 0.000250, 1.5})
        EXPECT_DOUBLE_EQ(spec::parse_duration(spec::format_duration(s), "t"), s) << spec::format_duration(s);
    EXPECT_EQ(spec::format_duration(0.1), "100ms");
    EXPECT_EQ(spec::format_duration(60), "60s");
}

// The block of docs/`doc` between `linerate options `name``'s markers (scripts/regen_docs.py
// writes it), or a failure naming the missing marker.
::testing::AssertionResult doc_block_is(const std::string& doc, const std::string& name, const std::string& want) {
    std::ifstream f(std::string(LINERATE_SOURCE_DIR "/docs/") + doc);
    if (!f) return ::testing::AssertionFailure() << "no docs/" << doc;
    std::stringstream ss;
    ss << f.rdbuf();
    const std::string text = ss.str();
    const std::string begin = "<!-- options " + name + " begin (generated by `linerate options " + name + "`) -->\n";
    const std::string end = "<!-- options " + name + " end -->";
    const auto b = text.find(begin), e = text.find(end);
    if (b == std::string::npos || e == std::string::npos)
        return ::testing::AssertionFailure() << "docs/" << doc << " has no " << (b == std::string::npos ? begin : end);
    if (text.substr(b + begin.size(), e - b - begin.size()) != want)
        return ::testing::AssertionFailure() << "docs/" << doc << " is out of date for `linerate options " << name
                                             << "`: python3 scripts/regen_docs.py";
    return ::testing::AssertionSuccess();
}

TEST(Options, TheDocsListEveryOptionAsTheTableDoes) {
    using spec::Command;
    for (auto [doc, name, cmd] : {std::tuple{"usage.md", "run", Command::run},
                                  std::tuple{"usage.md", "reflect", Command::reflect},
                                  std::tuple{"usage.md", "procedures", Command::procedure},
                                  std::tuple{"otg.md", "serve", Command::serve},
                                  std::tuple{"impair.md", "impair", Command::impair},
                                  std::tuple{"connect.md", "connect", Command::connect}})
        EXPECT_TRUE(doc_block_is(doc, name, spec::options_markdown(cmd)));
    EXPECT_TRUE(doc_block_is("streams.md", "stream", spec::stream_keys_markdown()));
}
