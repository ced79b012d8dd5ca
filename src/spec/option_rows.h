// Shared by the files that write rows of the option table (spec/options.cpp,
// spec/procedure_options.cpp): value helpers and the command masks.
#pragma once
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "util/error.h"

#include "spec/options.h"
#include "spec/parse.h"

namespace lr::spec::option_rows {

using J = nlohmann::json;
using Values = std::vector<std::string>;
constexpr unsigned kRun = unsigned(Command::run), kReflect = unsigned(Command::reflect),
                   kProc = unsigned(Command::procedure), kAll = kRun | kReflect | kProc, kMeasure = kRun | kProc,
                   kServe = unsigned(Command::serve), kImpair = unsigned(Command::impair),
                   kConnect = unsigned(Command::connect);

inline const std::string& one(const Values& v) { return v.back(); }  // a repeated single option: the last wins

inline bool parse_bool(const std::string& s, std::string_view what) {
    if (s == "true" || s == "1" || s == "yes" || s == "on") return true;
    if (s == "false" || s == "0" || s == "no" || s == "off") return false;
    throw UsageError(fmt::format("invalid {} \"{}\": expected true or false", what, s));
}

inline double parse_percent(const std::string& s, std::string_view what) {
    size_t pos = 0;
    double v = 0;
    try {
        v = std::stod(s, &pos);
    } catch (const std::exception&) {
        pos = 0;
    }
    if (s.empty() || pos != s.size() || !(v >= 0 && v <= 100))
        throw UsageError(fmt::format("invalid {} \"{}\": expected a percentage between 0 and 100", what, s));
    return v;
}

template <class T>
J opt(const std::optional<T>& v) {
    return v ? J(*v) : J(nullptr);
}

// The rows of the procedures (sweep, throughput, latency, frame-loss, back-to-back) and the
// thresholds, appended to the table; `ds`, a default RunSpec, gives their printed defaults.
void add_procedure_rows(std::vector<OptionDef>& t, const RunSpec& ds);
// The serve command's own rows, and `serve` added to the rows it shares with the others.
void add_serve_rows(std::vector<OptionDef>& t);
// The impair command's own rows, and `impair` added to the rows it shares with the others.
void add_impair_rows(std::vector<OptionDef>& t);
// The connect command's own rows, and `connect` added to the rows it shares with the others.
void add_connect_rows(std::vector<OptionDef>& t);

}  // namespace lr::spec::option_rows

namespace lr::spec {

// Applies every given option that `cmd` takes to the draft (spec/options.cpp); an option it
// does not take, or an unknown one, is refused naming it (and the profile it came from).
void apply_all(Draft& d, const OptionValues& given, Command cmd, const OptionOrigins* origins = nullptr);
// Refuses a given option the backend `b` does not honour.
void check_backend_support(const OptionValues& given, BackendKind b, Command cmd);

}  // namespace lr::spec
