// Profile files: a TOML file whose keys are the option names of the command line (same
// names, same parsers), grouped in sections that only group ([ports], [frames], [run],
// [procedure], [thresholds], [output], [tuning]), plus `procedure` (what to run) and
// `name`/`description`. Unknown keys, unknown sections, duplicate keys (also across
// sections), wrong types and bad values are errors that name the file, line and column.
#pragma once
#include <map>
#include <string>

#include "spec/options.h"
#include "spec/procedure_spec.h"

namespace lr::spec {

struct Profile {
    std::string path;
    std::string name;          // the profile's name (default: the file name)
    std::string description;
    Procedure procedure = Procedure::run;
    OptionValues values;       // by option name, as the command line gives them
    std::map<std::string, std::string, std::less<>> origins;  // option name -> "file:line:col"
    std::vector<StreamInput> streams;  // [[stream]] tables, in order (replaced by --stream on the command line)
};

// Throws UsageError (exit 2) with file:line:col, or EnvError when the file can't be read.
Profile load_profile(const std::string& path);
// The same from text (tests); `path` names it in errors.
Profile parse_profile(const std::string& text, const std::string& path);

// The spec the profile describes, with `overrides` (options given on the command line) in
// place of the file's values. Value errors name where the value came from.
RunSpec build_profile_spec(const Profile& p, const OptionValues& overrides);

}  // namespace lr::spec
