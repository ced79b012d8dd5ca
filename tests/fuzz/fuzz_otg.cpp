// libFuzzer target: what an OTG client sends `linerate serve` (POST /config), read as the
// server reads it: any body must give a configuration or an OtgError (each refusal at a
// path), never a crash, a hang, an out-of-bounds access or undefined behaviour, and a
// configuration it takes must build into streams a session accepts. Run with ASan and UBSan
// (tests/fuzz/meson.build); seeds in tests/fuzz/corpus_otg/ (snappi's own bodies).
#include <cstddef>
#include <cstdint>
#include <string>

#include <nlohmann/json.hpp>

#include "otg/config.h"
#include "util/error.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    const auto body = nlohmann::json::parse(data, data + size, nullptr, false);
    if (body.is_discarded()) return 0;  // not JSON: the HTTP layer refuses it before the reader
    try {
        auto cfg = lr::otg::parse_config(body);
        // Every port at a known speed, as the server resolves rates and counts once ports are open.
        lr::otg::resolve_counts_and_rates(cfg, [](const std::string&) { return std::optional<double>(10e9); });
        for (const auto& f : cfg.flows) (void)f.stream.str();
    } catch (const lr::otg::OtgError& e) {
        if (e.refusals().empty()) __builtin_trap();  // a refusal always says what
    } catch (const lr::UsageError&) {
        // a stream linerate's own rules refuse (named by the flow's path)
    }
    return 0;
}
