// Registers the rows of the option table (spec/options.h) for one command with CLI11 and
// hands back what the user gave, by option name, for spec::build_run_spec. CLI11 does the
// tokenising, the help text and, for enumerated options, the check against the name table.
#pragma once
#include <CLI/CLI.hpp>
#include <map>
#include <string>
#include <vector>

#include "spec/options.h"

namespace lr::cli {

class BoundOptions {
public:
    void bind(CLI::App& app, spec::Command cmd) { bind(app, unsigned(cmd)); }
    // The rows of any of the commands in `commands` (a mask of spec::Command bits).
    void bind(CLI::App& app, unsigned commands);
    // The options given on the command line, in the form the table's parsers take.
    spec::OptionValues given() const;

private:
    std::map<std::string, std::string> single_;
    std::map<std::string, std::vector<std::string>> lists_;
    std::map<std::string, bool> flags_;
    std::vector<std::pair<const spec::OptionDef*, CLI::Option*>> opts_;
};

}  // namespace lr::cli
