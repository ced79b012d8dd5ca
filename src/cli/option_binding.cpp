#include "cli/option_binding.h"

namespace lr::cli {

void BoundOptions::bind(CLI::App& app, unsigned commands) {
    using K = spec::OptionDef::Kind;
    for (const auto& row : spec::option_table()) {
        if (!(row.commands & commands)) continue;
        const std::string name(row.name), help(row.help);
        CLI::Option* o = nullptr;
        switch (row.kind) {
            case K::flag: o = app.add_flag(row.cli_names(), flags_[name], help); break;
            case K::value: o = app.add_option(row.cli_names(), single_[name], help); break;
            // One value per occurrence (repeat the option for more): a list option just before
            // `--` must not take the EAL arguments after it.
            case K::list:
                o = app.add_option(row.cli_names(), lists_[name], help)->allow_extra_args(false);
                break;
            case K::positional: o = app.add_option(name, lists_[name], help); break;
        }
        o->group(std::string(row.group));
        if (!row.value_name.empty() && row.kind != K::positional) o->type_name(std::string(row.value_name));
        if (!row.default_text.empty()) o->default_str(std::string(row.default_text));
        if (row.choices) {
            // Every spelling maps to the canonical name; anything else is refused by CLI11
            // with the list of accepted names.
            std::map<std::string, std::string> names;
            for (const auto& c : row.choices->names) names[std::string(c.name)] = std::string(row.choices->name_of(c.value));
            o->transform(CLI::CheckedTransformer(names));
        }
        opts_.emplace_back(&row, o);
    }
}

spec::OptionValues BoundOptions::given() const {
    using K = spec::OptionDef::Kind;
    spec::OptionValues v;
    for (const auto& [row, o] : opts_) {
        if (o->count() == 0) continue;
        const std::string name(row->name);
        switch (row->kind) {
            case K::flag: v[name] = {flags_.at(name) ? "true" : "false"}; break;
            case K::value: v[name] = {single_.at(name)}; break;
            case K::list:
            case K::positional: v[name] = lists_.at(name); break;
        }
    }
    return v;
}

}  // namespace lr::cli
