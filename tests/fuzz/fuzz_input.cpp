// libFuzzer target: everything a user types or a profile file holds. The first byte picks
// the parser (a profile, or one option value); any input must give a value or a UsageError,
// never a crash, a hang, an out-of-bounds access or undefined behaviour. Run with ASan and
// UBSan (tests/fuzz/meson.build); seeds in tests/fuzz/corpus_input/.
#include <cstddef>
#include <cstdint>
#include <string>

#include "packet/addr.h"
#include "spec/options.h"
#include "spec/parse.h"
#include "spec/procedure_spec.h"
#include "spec/profile.h"
#include "spec/rate.h"
#include "spec/size_spec.h"

#include <nlohmann/json.hpp>
#include "util/error.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    if (size == 0) return 0;
    const std::string s(reinterpret_cast<const char*>(data) + 1, size - 1);
    try {
        if (data[0] >= 0xf0) {  // the values of impair's and connect's own options
            using lr::spec::OptionValues;
            switch (data[0] & 3) {
                case 0: (void)lr::spec::build_impair_spec(OptionValues{{"between", {"a,b"}}, {"loss-model", {s}}}); break;
                case 1:
                    (void)lr::spec::build_impair_spec(
                        OptionValues{{"between", {"a,b"}}, {"delay", {s}}, {"jitter", {s}}, {"impair-rate", {s}}});
                    break;
                case 2: (void)lr::spec::build_connect_spec(OptionValues{{"connect-port", {"p"}}, {"src-ports", {s}}}); break;
                case 3:
                    (void)lr::spec::build_connect_spec(
                        OptionValues{{"connect-port", {"p"}}, {"connect-rate", {s}}, {"connect-outstanding", {s}}});
                    break;
            }
            return 0;
        }
        switch (data[0] % 14) {
            case 0: {
                // A profile: JSON when it opens with '{' (never valid TOML), TOML otherwise.
                const auto p = lr::spec::parse_profile(s, s.starts_with('{') ? "fuzz.json" : "fuzz.toml");
                (void)lr::spec::build_profile_spec(p, {});
                break;
            }
            case 1: {
                const auto r = lr::spec::parse_rate(s, "--rate");
                (void)lr::spec::to_pps(r, 64 + (size % 9000), size % 2 ? 10e9 : 0);
                (void)r.str();
                break;
            }
            case 2: (void)lr::spec::parse_duration(s, "--duration"); break;
            case 3: (void)lr::spec::parse_count(s, "--count"); break;
            case 4: (void)lr::spec::parse_sizes(s, "--sizes"); break;
            case 5: (void)lr::packet::parse_ip(s, "--dst-ip").str(); break;
            case 6: (void)lr::spec::parse_port_queues(s, "--tx"); break;
            case 7: (void)lr::spec::parse_bits_per_second(s, "--line-rate"); break;
            case 8: (void)lr::spec::build_run_spec({{"tx", {"p"}}, {"rx", {"q"}}, {"size", {s}}, {"rate", {s}}},
                                                   lr::spec::Procedure::sweep);
                break;
            case 9: (void)lr::spec::parse_pattern(s, "--pattern").str(); break;
            case 10: (void)lr::spec::parse_listen(s, "--metrics"); break;
            case 11: (void)lr::spec::build_reflect_draft({{"port", {"p"}}, {"dst-ports", {s}}, {"queues", {s}}}); break;
            case 12: {
                const auto z = lr::spec::parse_size_spec(s, "--size");
                (void)z.str();
                (void)z.mean();
                (void)z.period(size);
                break;
            }
            case 13: {
                const auto spec = lr::spec::build_run_spec({{"tx", {"p"}}, {"rx", {"q"}}, {"stream", {s}}});
                (void)lr::spec::streams_json(spec);
                break;
            }
        }
    } catch (const lr::UsageError&) {
        // the expected answer to bad input
    }
    return 0;
}
