// Profile files and the procedure options: sizes, goals, every error with its file, line and
// column, command-line overrides, and every example profile in config/ builds a valid spec.
#include <gtest/gtest.h>

#include <dirent.h>

#include "procedures/procedures.h"
#include "spec/options.h"
#include "spec/profile.h"
#include "util/error.h"

using namespace lr;

namespace {

std::string error_of(const std::string& text) {
    try {
        const auto p = spec::parse_profile(text, "p.toml");
        spec::build_profile_spec(p, {});
    } catch (const UsageError& e) {
        return e.what();
    }
    return "(no error)";
}

const char* kBase = "procedure = \"sweep\"\n[ports]\nbackend = \"afxdp\"\ntx = [\"veth0\"]\nrx = [\"veth1\"]\n";

}  // namespace

TEST(Sizes, ListsRangesAndTheRfc2544Set) {
    EXPECT_EQ(spec::parse_sizes("64:1518:*2", "--sizes"), (std::vector<unsigned>{64, 128, 256, 512, 1024}));
    EXPECT_EQ(spec::parse_sizes("64:512:+128", "--sizes"), (std::vector<unsigned>{64, 192, 320, 448}));
    EXPECT_EQ(spec::parse_sizes("rfc2544", "--sizes"), (std::vector<unsigned>{64, 128, 256, 512, 1024, 1280, 1518}));
    EXPECT_EQ(spec::parse_sizes("rfc2544+jumbo", "--sizes").back(), 9000u);
    EXPECT_EQ(spec::parse_sizes("1518,64,64,128", "--sizes"), (std::vector<unsigned>{64, 128, 1518})) << "sorted, unique";
    for (const char* bad : {"", "63", "9001", "64,,128", "64:32:*2", "64:128", "64:128:*1", "64:128:x2", "a:128:*2"}) {
        EXPECT_THROW(spec::parse_sizes(bad, "--sizes"), UsageError) << bad;
    }
}

TEST(Goals, PresetsWithOverridesKeepTheirProportions) {
    spec::ProcedureSpec p;
    p.preset = "csit";
    auto g = procedures::goals_for(p);
    ASSERT_EQ(g.size(), 2u);
    EXPECT_EQ(g[1].loss_ratio, 0.005);
    p.final_trial_s = 2;
    g = procedures::goals_for(p);
    EXPECT_EQ(g[0].final_trial_s, 2);
    EXPECT_EQ(g[0].duration_sum_s, 42) << "csit's sum is 21 final trials";
    p = {};
    p.goal_losses = {0, 0.001};
    p.width = 0.01;
    g = procedures::goals_for(p);
    ASSERT_EQ(g.size(), 2u);
    EXPECT_EQ(g[0].name, "NDR");
    EXPECT_EQ(g[1].name, "PDR0.1%");
    EXPECT_EQ(g[1].width, 0.01);
    EXPECT_EQ(g[0].final_trial_s, 60) << "rfc2544 by default";
}

TEST(Profiles, KeysAreOptionNamesAndBuildTheSameSpecAsTheCommandLine) {
    const auto p = spec::parse_profile(std::string(kBase) +
                                           "[frames]\nsizes = [64, 128]\nflows = 4\n[run]\nrate = \"10kpps\"\n"
                                           "[thresholds]\nmax-loss = 0.5\nmax-latency-p99 = \"1ms\"\n[output]\nquiet = "
                                           "true\n",
                                       "p.toml");
    EXPECT_EQ(p.procedure, spec::Procedure::sweep);
    EXPECT_EQ(p.name, "p.toml");
    const auto from_file = spec::build_profile_spec(p, {});
    const auto from_cli = spec::build_run_spec(
        {{"backend", {"afxdp"}}, {"tx", {"veth0"}}, {"rx", {"veth1"}}, {"sizes", {"64,128"}}, {"flows", {"4"}},
         {"rate", {"10kpps"}}, {"max-loss", {"0.5"}}, {"max-latency-p99", {"1ms"}}, {"quiet", {"true"}},
         {"nonce", {std::to_string(from_file.nonce)}}},
        spec::Procedure::sweep);
    auto a = spec::spec_json(from_file), b = spec::spec_json(from_cli);
    EXPECT_EQ(a, b);
    EXPECT_EQ(from_file.procedure.sizes, (std::vector<unsigned>{64, 128}));
    EXPECT_EQ(*from_file.thresholds.max_loss_pct, 0.5);
}

TEST(Profiles, TheCommandLineOverridesTheFile) {
    const auto p = spec::parse_profile(std::string(kBase) + "[run]\nrate = \"10kpps\"\n", "p.toml");
    const auto s = spec::build_profile_spec(p, {{"rate", {"20kpps"}}});
    EXPECT_EQ(s.rate.value, 20e3);
    try {
        spec::build_profile_spec(p, {{"rate", {"fast"}}});
        FAIL() << "a bad override must be refused";
    } catch (const UsageError& e) {
        EXPECT_NE(std::string(e.what()).find("the command line: invalid --rate \"fast\""), std::string::npos)
            << e.what();
    }
}

TEST(Profiles, EveryMistakeIsNamedWithFileLineAndColumn) {
    const std::string b = kBase;
    const std::pair<std::string, std::string> cases[] = {
        {b + "[run]\nrat = \"1k\"\n", "p.toml:7:1: unknown key \"rat\""},
        {b + "[runs]\nrate = \"1k\"\n", "p.toml:6:2: unknown section [runs]"},
        {b + "[run]\nrate = \"1k\"\nrate = \"2k\"\n", "p.toml:8:"},  // the TOML parser: redefinition
        {b + "[run]\nrate = \"1k\"\n[thresholds]\nrate = \"2k\"\n", "p.toml:9:1: rate is given twice (first at p.toml:7:1)"},
        {b + "[run]\nrate = true\n", "p.toml:7:8: rate: a boolean where a value is expected"},
        {b + "[output]\nquiet = \"yes\"\n", "p.toml:7:9: quiet: expected true or false"},
        {b + "[frames]\nsizes = [64, 10000]\n", "p.toml:7:9: invalid --sizes \"64,10000\": frame size \"10000\": must be between 64 and 9000"},
        {b + "[run]\nduration = \"10 parsecs\"\n", "p.toml:7:12: invalid --duration"},
        {b + "[thresholds]\nmax-loss = 101\n", "p.toml:7:12: invalid --max-loss \"101\": expected a percentage"},
        {b + "[run]\nrate = \"1k\"\n[run.x]\ny = 1\n", "sections do not nest"},
        {b + "[run]\nrate = \"1k\n", "p.toml:7:"},  // unterminated string
        {"procedure = \"sprint\"\n", "p.toml:1:13: invalid procedure \"sprint\""},
        {"procedure = \"run\"\n[ports]\ntx = [\"a\"]\nsizes = \"64\"\n", "p.toml:4:9: --sizes does not apply to run"},
        {b + "[run]\nrate = { a = 1 }\n", "p.toml:7:1: rate: a table where a value is expected"},
        {b + "[frames]\nsize = 64\nsizes = \"64,128\"\n", "p.toml: --size and --sizes: give one of them"},
        {"procedure = \"throughput\"\n[ports]\ntx = [\"a\"]\n", "p.toml: throughput measures what comes back"},
    };
    for (const auto& [text, want] : cases) {
        const auto got = error_of(text);
        EXPECT_NE(got.find(want), std::string::npos) << "profile:\n" << text << "\nerror: " << got << "\nwanted: " << want;
    }
}

TEST(Profiles, EveryExampleInConfigBuildsAValidSpec) {
    DIR* d = opendir(LINERATE_SOURCE_DIR "/config");
    ASSERT_NE(d, nullptr);
    unsigned n = 0;
    while (const dirent* e = readdir(d)) {
        const std::string name = e->d_name;
        if (!name.ends_with(".toml") && !name.ends_with(".json")) continue;
        ++n;
        try {
            const auto p = spec::load_profile(std::string(LINERATE_SOURCE_DIR "/config/") + name);
            const auto s = spec::build_profile_spec(p, {});
            EXPECT_FALSE(p.description.empty() && p.name == name) << name << ": give it a name or description";
            EXPECT_TRUE(s.thresholds.any()) << name << ": an acceptance profile judges something";
        } catch (const std::exception& ex) {
            ADD_FAILURE() << name << ": " << ex.what();
        }
    }
    closedir(d);
    EXPECT_GE(n, 4u);
}

TEST(Profiles, AJsonProfileIsTheSameProfileWithItsErrorsNamedByJsonPointer) {
    const std::string toml = std::string(kBase) +
                             "nonce = 7\n[frames]\nsizes = [64, 128]\n[run]\nrate = \"10kpps\"\n"
                             "[output]\nquiet = true\n";
    const std::string json = R"({"procedure": "sweep", "nonce": 7,
        "ports": {"backend": "afxdp", "tx": ["veth0"], "rx": ["veth1"]},
        "frames": {"sizes": [64, 128]}, "run": {"rate": "10kpps"}, "output": {"quiet": true}})";
    const auto a = spec::build_profile_spec(spec::parse_profile(toml, "p.toml"), {});
    const auto b = spec::build_profile_spec(spec::parse_profile(json, "p.json"), {});
    EXPECT_EQ(spec::spec_json(a), spec::spec_json(b));

    // Streams: the "stream" list of objects, as [[stream]] tables.
    const auto mix = spec::parse_profile(R"({"ports": {"tx": ["a"], "rx": ["b"]}, "rate": "100k",
        "stream": [{"name": "bulk", "size": "imix", "share": "80%"},
                   {"name": "voice", "size": 128, "vlan": 10, "share": "20%"}]})",
                                         "mix.json");
    ASSERT_EQ(mix.streams.size(), 2u);
    const auto s = spec::build_profile_spec(mix, {});
    ASSERT_EQ(s.streams.size(), 2u);
    EXPECT_EQ(s.streams[1].name, "voice");
    EXPECT_EQ(s.streams[1].frame.vlan, 10);
    EXPECT_EQ(s.streams[1].frame.frame_size, 128u);

    auto error_in = [](const std::string& text) {
        try {
            spec::build_profile_spec(spec::parse_profile(text, "p.json"), {});
        } catch (const UsageError& e) {
            return std::string(e.what());
        }
        return std::string("(no error)");
    };
    const std::pair<std::string, std::string> cases[] = {
        {R"({"run": {"rat": "1k"}})", "p.json:/run/rat: unknown key \"rat\""},
        {R"({"runs": {"rate": "1k"}})", "p.json:/runs: unknown section [runs]"},
        {R"({"run": {"rate": "1k"}, "thresholds": {"rate": "2k"}})", "p.json:/thresholds/rate: rate is given twice (first at p.json:/run/rate)"},
        {R"({"run": {"rate": true}})", "p.json:/run/rate: rate: a boolean where a value is expected"},
        {R"({"output": {"quiet": "yes"}})", "p.json:/output/quiet: quiet: expected true or false"},
        {R"({"ports": {"tx": ["a"]}, "frames": {"size": 10000}})", "p.json:/frames/size: invalid --size \"10000\""},
        {R"({"run": {"x": {"y": 1}}})", "p.json:/run/x: [x]: sections do not nest"},
        {R"({"run": {"rate": [1, {"a": 2}]}})", "p.json:/run/rate/1: rate: expected a string or a number, found an object"},
        {R"({"flows": [{"a": 1}]})", "the only array of tables a profile has is \"stream\""},
        {R"({"ports": {"tx": ["a"]}, "stream": [{"size": "imix", "flavour": 3}]})", "p.json:/stream/0/flavour: unknown key \"flavour\""},
        {R"({"ports": {"tx": ["a"]}, "stream": [{"size": 63}]})", "p.json:/stream/0/size: invalid --size \"63\""},
        {R"({"name": 5})", "p.json:/name: name: expected a string"},
        {R"({"run": {"rate": "1k")", "p.json: not valid JSON"},
        {R"({"run": {"rate": 1e999}})", "p.json: not valid JSON"},  // a number out of range (found by fuzzing)
        {R"(["rate"])", "p.json: a profile is a JSON object, not array"},
    };
    for (const auto& [text, want] : cases) {
        const auto got = error_in(text);
        EXPECT_NE(got.find(want), std::string::npos) << "profile:\n" << text << "\nerror: " << got << "\nwanted: " << want;
    }
}
