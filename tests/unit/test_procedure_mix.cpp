// Procedures over a stream mix on the in-memory backend: one row, the mix; every stream
// scaled by one load in proportion to its rate; the mix's rates in bits/s at its mean frame;
// what has no place in a procedure refused before anything is sent.
#include <gtest/gtest.h>

#include "backend/loop/loop_backend.h"
#include "procedures/procedures.h"
#include "report/procedure_report.h"
#include "result/sink.h"
#include "spec/options.h"
#include "spec/rate.h"
#include "usage_error.h"

using namespace lr;
using lr::test_support::usage_error;

namespace {

spec::RunSpec make_spec(spec::OptionValues o, spec::Procedure kind) {
    auto s = spec::build_run_spec(o, kind);
    s.backend = spec::BackendKind::loop;
    s.interval_s = 0.05;
    s.settle_s = 0;
    s.procedure.rate_tolerance = 1e6;  // the procedures' logic, not this host's pacing
    return s;
}

// Every trial's streams, as the engine counted them.
struct StreamsSeen final : result::Sink {
    std::vector<std::vector<result::StreamResult>> trials;
    void trial_finished(const result::TrialResult& r) override { trials.push_back(r.streams); }
};

constexpr double kImixMean = (7 * 64 + 4 * 570 + 1518) / 12.0;  // 353.83 B

}  // namespace

TEST(ProcedureMix, EveryStreamIsScaledInProportionToItsRate) {
    // 30 kpps and 10 kpps: 3 to 1 at every load the frame-loss walk offers.
    const auto spec = make_spec({{"tx", {"a"}},
                                 {"rx", {"b"}},
                                 {"max-rate", {"80k"}},
                                 {"step", {"25"}},
                                 {"trial-duration", {"100ms"}},
                                 {"stream", {"name=bulk,size=imix,rate=30k", "name=voice,size=128,vlan=10,rate=10kpps"}}},
                                spec::Procedure::frame_loss);
    engine::Session s(loop::make_loop_backend(), spec);
    StreamsSeen seen;
    const auto r = procedures::run_procedure(s, nullptr, &seen);
    ASSERT_FALSE(r.invalid) << r.invalid_reason;
    ASSERT_EQ(r.frame_loss.size(), 1u);
    EXPECT_EQ(r.frame_loss[0].size, 0u) << "the row is the mix";
    EXPECT_EQ(r.mix_label, "the mix of 2 streams");
    // The mean frame: 3 parts IMIX to 1 part 128 B.
    EXPECT_NEAR(r.mix_mean_size, (3 * kImixMean + 128) / 4, 1e-9);
    ASSERT_EQ(r.frame_loss[0].steps.size(), 2u) << "100 % and 75 %, both clean";
    // The generator's capacity probes come first; the walk's two trials last.
    ASSERT_EQ(seen.trials.size(), r.trials.size());
    ASSERT_GE(seen.trials.size(), 2u);
    const auto& top = seen.trials[seen.trials.size() - 2];
    ASSERT_EQ(top.size(), 2u);
    // The top step: 80 kpps for 100 ms = 8000 frames, 6000 bulk and 2000 voice, each exact.
    EXPECT_EQ(r.frame_loss[0].steps[0].sent, 8000u);
    EXPECT_EQ(top[0].sent, 6000u);
    EXPECT_EQ(top[1].sent, 2000u);
    EXPECT_EQ(top[0].received, 6000u);
    EXPECT_EQ(top[1].received, 2000u);
    // IMIX's 6000 frames are 500 exact periods.
    EXPECT_EQ(top[0].sent_bytes, 500u * (7 * 64 + 4 * 570 + 1518));
    const auto& next = seen.trials.back();
    EXPECT_EQ(next[0].sent, 4500u);
    EXPECT_EQ(next[1].sent, 1500u);
}

TEST(ProcedureMix, AnImixThroughputIsReportedInPacketsAndInL1AndL2BitsAtTheMeanFrame) {
    const auto spec = make_spec({{"tx", {"a"}},
                                 {"rx", {"b"}},
                                 {"size", {"imix"}},
                                 {"max-rate", {"100k"}},
                                 {"search", {"binary"}},
                                 {"goals", {"0"}},
                                 {"trial-duration", {"100ms"}},
                                 {"min-throughput", {"100Mbps"}}},
                                spec::Procedure::throughput);
    ASSERT_EQ(spec.procedure.sizes, std::vector<unsigned>{0});
    engine::Session s(loop::make_loop_backend(), spec);
    const auto r = procedures::run_procedure(s, nullptr);
    ASSERT_FALSE(r.invalid) << r.invalid_reason;
    ASSERT_EQ(r.throughput.size(), 1u);
    EXPECT_EQ(r.mix_label, "--size imix");
    EXPECT_NEAR(r.mix_mean_size, kImixMean, 1e-9);
    const auto& g = r.throughput[0].search.goals.at(0);
    ASSERT_TRUE(g.conditional);
    EXPECT_GT(*g.conditional, 90e3) << "a lossless wire: the NDR is near the top";
    const auto j = report::procedure_report(s.spec(), nlohmann::json::object(), r);
    EXPECT_EQ(j["mix"]["label"], "--size imix");
    ASSERT_TRUE(j["rows"][0]["size"].is_null());
    const auto& tp = j["rows"][0]["goals"][0]["throughput"];
    EXPECT_NEAR(tp["pps"].get<double>(), *g.conditional, 1e-6);
    EXPECT_NEAR(tp["l1_bps"].get<double>(), *g.conditional * (kImixMean + 20) * 8, 1e-3);
    EXPECT_NEAR(tp["l2_bps"].get<double>(), *g.conditional * kImixMean * 8, 1e-3);
    // The threshold in bits/s is judged at the mean frame too: 90 kpps of IMIX is ~254 Mb/s.
    ASSERT_EQ(r.checks.size(), 1u);
    EXPECT_TRUE(r.checks[0].pass) << r.checks[0].measured_text;
    EXPECT_GT(r.checks[0].threshold, 100e6 / ((kImixMean + 20) * 8) - 1);
    EXPECT_LT(r.checks[0].threshold, 100e6 / (kImixMean * 8) + 1);
}

TEST(ProcedureMix, WhatHasNoPlaceInAProcedureIsRefused) {
    const auto err = [](std::vector<std::string> streams, spec::OptionValues extra = {}) {
        spec::OptionValues o{{"tx", {"a"}}, {"rx", {"b"}}, {"stream", streams}};
        o.insert(extra.begin(), extra.end());
        return usage_error([&] { (void)spec::build_run_spec(o, spec::Procedure::throughput); });
    };
    EXPECT_EQ(err({"name=a,count=100", "name=b"}),
              "stream a: throughput runs each trial at a load it chooses and for as long as it says; count= has no "
              "place in it");
    EXPECT_NE(err({"bursts=3,burst-frames=10"}).find("bursts= has no place in it"), std::string::npos);
    EXPECT_NE(err({"name=a,count=100", "name=b,after=a"}).find("stream a: throughput"), std::string::npos);
    EXPECT_NE(err({"name=a,delay=1s"}).find("delay= has no place"), std::string::npos);
    EXPECT_EQ(err({"rate=10k", "size=128"}),
              "throughput scales the streams in proportion to their rates: give every stream a rate= (any unit) or "
              "none of them (share= or equal parts)");
    EXPECT_NE(err({"rate=max", "rate=10k"}).find("rate=max has no share of a load"), std::string::npos);
    EXPECT_EQ(err({"size=imix"}, {{"sizes", {"64,128"}}}),
              "--sizes with a stream mix: the mix's sizes are its streams' own; run one procedure per mix");
    EXPECT_EQ(err({"share=25%", "share=75%,size=1518"}), "(no error)");
}
