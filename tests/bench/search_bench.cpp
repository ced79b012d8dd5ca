// Benchmark (not a test): MLRsearch against the RFC 2544 binary search on simulated devices,
// the same goals and the same width: trials, trial-seconds and the answer of each.
//
//   build/tests/bench/search_bench
#include <cstdio>
#include <string>
#include <vector>

#include "../unit/sim_device.h"
#include "procedures/search.h"

using namespace lr::procedures;

namespace {

template <class Make>
void compare(const char* device, const char* goals_name, const std::vector<Goal>& goals, Make make) {
    SearchLimits lim;
    lim.max_load = 14.88e6;
    lim.min_load = lim.max_load / 1000;
    auto d1 = make();
    auto d2 = make();
    const auto mlr = mlr_search(goals, lim, sim::measurer(d1));
    const auto bin = binary_search(goals, lim, sim::measurer(d2));
    for (size_t g = 0; g < goals.size(); ++g) {
        auto val = [](const GoalResult& r) { return r.lower ? *r.lower / 1e6 : -1.0; };
        std::printf("| %-8s | %-7s | %-4s | %5zu | %8.0f | %8.4f | %5zu | %8.0f | %8.4f | %5.2f |\n", device, goals_name,
                    goals[g].name.c_str(), mlr.trials.size(), mlr.trial_seconds, val(mlr.goals[g]), bin.trials.size(),
                    bin.trial_seconds, val(bin.goals[g]), mlr.trial_seconds / bin.trial_seconds);
    }
}

}  // namespace

int main() {
    std::printf("| device | goals | goal | MLR trials | MLR trial-s | MLR lower Mpps | binary trials | binary trial-s | "
                "binary lower Mpps | trial-s MLR/binary |\n|---|---|---|---|---|---|---|---|---|---|\n");
    const std::vector<Goal> ndr_pdr_60 = {{"NDR", 0, 0, 60, 60, 0.005, 1}, {"PDR", 0.005, 0, 60, 60, 0.005, 1}};
    for (const auto& [name, goals] : std::vector<std::pair<const char*, std::vector<Goal>>>{
             {"rfc2544", preset_goals("rfc2544")}, {"ndr+pdr", ndr_pdr_60}, {"csit", preset_goals("csit")}}) {
        compare("clean", name, goals, [] { return sim::Clean{3.7e6}; });
        compare("rising", name, goals, [] { return sim::Rising{2e6}; });
        compare("noisy", name, goals, [] { return sim::Noisy(5e6, 0.2, 7); });
    }
    return 0;
}
