#include "spec/profile.h"

#include <fmt/format.h>
#include <fstream>
#include <set>
#include <sstream>
#include <toml++/toml.h>

#include "util/error.h"

namespace lr::spec {
namespace {

const std::set<std::string, std::less<>>& section_names() {
    static const std::set<std::string, std::less<>> s = {"ports",      "frames", "run",   "procedures",
                                                          "thresholds", "tuning", "output"};
    return s;
}

std::string where(const std::string& path, const toml::source_region& r) {
    return fmt::format("{}:{}:{}", path, r.begin.line, r.begin.column);
}

// One scalar as the command line would give it.
std::string scalar_text(const toml::node& v, const std::string& at, std::string_view key) {
    if (auto s = v.as_string()) return s->get();
    if (auto i = v.as_integer()) return fmt::format("{}", i->get());
    if (auto f = v.as_floating_point()) return fmt::format("{}", f->get());
    if (v.is_boolean())
        throw UsageError(fmt::format("{}: {}: a boolean where a value is expected (booleans are for switches such as "
                                     "quiet or ipv6)",
                                     at, key));
    std::ostringstream type;
    type << v.type();
    throw UsageError(fmt::format("{}: {}: expected a string or a number, found a {}", at, key, type.str()));
}

struct Loader {
    Profile p;
    std::map<std::string, std::string, std::less<>> seen;  // key -> where, over all sections

    void key_value(const toml::key& k, const toml::node& v) {
        const std::string key(k.str());
        const auto at = where(p.path, k.source());
        if (const auto it = seen.find(key); it != seen.end())
            throw UsageError(fmt::format("{}: {} is given twice (first at {})", at, key, it->second));
        seen[key] = at;
        if (key == "procedure") {
            try {
                p.procedure = parse_procedure(scalar_text(v, at, key), "procedure");
            } catch (const UsageError& e) {
                throw UsageError(fmt::format("{}: {}", where(p.path, v.source()), e.what()));
            }
            return;
        }
        if (key == "name" || key == "description") {
            if (!v.is_string()) throw UsageError(fmt::format("{}: {}: expected a string", at, key));
            (key == "name" ? p.name : p.description) = v.as_string()->get();
            return;
        }
        const OptionDef* o = find_option(key);
        if (!o || !(o->applies_to(Command::run) || o->applies_to(Command::procedure)))
            throw UsageError(fmt::format("{}: unknown key \"{}\" (keys are the options of linerate run and of the "
                                         "procedures, without dashes: docs/profiles.md)",
                                         at, key));
        const auto vat = where(p.path, v.source());
        std::vector<std::string> vals;
        if (o->kind == OptionDef::Kind::flag) {
            if (!v.is_boolean()) throw UsageError(fmt::format("{}: {}: expected true or false", vat, key));
            vals.push_back(v.as_boolean()->get() ? "true" : "false");
        } else if (const auto* a = v.as_array()) {
            if (a->empty()) throw UsageError(fmt::format("{}: {}: an empty list", vat, key));
            std::string joined;
            for (const auto& e : *a) {
                const auto s = scalar_text(e, where(p.path, e.source()), key);
                if (o->kind == OptionDef::Kind::value) joined += (joined.empty() ? "" : ",") + s;
                else vals.push_back(s);
            }
            if (o->kind == OptionDef::Kind::value) vals.push_back(joined);
        } else {
            vals.push_back(scalar_text(v, vat, key));
        }
        p.values[key] = vals;
        p.origins[key] = vat;
    }

    // One [[stream]]: its keys as --stream would give them, each with its file:line:col.
    void stream(const toml::table& t) {
        StreamInput in;
        in.text = fmt::format("{} [[stream]]", where(p.path, t.source()));
        for (const auto& [k, v] : t) {
            const std::string key(k.str());
            const auto vat = where(p.path, v.source());
            std::string value;
            if (v.is_boolean()) {
                value = v.as_boolean()->get() ? "true" : "false";
            } else if (const auto* a = v.as_array()) {
                if (a->empty()) throw UsageError(fmt::format("{}: {}: an empty list", vat, key));
                for (const auto& e : *a)
                    value += (value.empty() ? "" : ",") + scalar_text(e, where(p.path, e.source()), key);
            } else if (v.is_table()) {
                throw UsageError(fmt::format("{}: {}: a table where a value is expected", vat, key));
            } else {
                value = scalar_text(v, vat, key);
            }
            in.keys.push_back({key, value, vat});
        }
        if (in.keys.empty()) throw UsageError(fmt::format("{}: an empty stream", in.text));
        p.streams.push_back(std::move(in));
    }

    void table(const toml::table& t, bool top) {
        for (const auto& [k, v] : t) {
            if (const auto* sub = v.as_table()) {
                const auto at = where(p.path, k.source());
                if (sub->is_inline())
                    throw UsageError(fmt::format("{}: {}: a table where a value is expected", at, k.str()));
                if (!top) throw UsageError(fmt::format("{}: [{}]: sections do not nest", at, k.str()));
                if (!section_names().count(k.str()))
                    throw UsageError(fmt::format("{}: unknown section [{}] (sections: ports, frames, run, "
                                                 "procedures, thresholds, tuning, output)",
                                                 at, k.str()));
                table(*sub, false);
            } else if (v.is_array_of_tables()) {
                if (!top || k.str() != "stream")
                    throw UsageError(fmt::format("{}: [[{}]]: the only array of tables a profile has is [[stream]]",
                                                 where(p.path, k.source()), k.str()));
                for (const auto& e : *v.as_array()) stream(*e.as_table());
            } else {
                key_value(k, v);
            }
        }
    }
};

}  // namespace

Profile parse_profile(const std::string& text, const std::string& path) {
    toml::table t;
    try {
        t = toml::parse(text, path);
    } catch (const toml::parse_error& e) {
        throw UsageError(fmt::format("{}: {}", where(path, e.source()), e.description()));
    }
    Loader l;
    l.p.path = path;
    l.table(t, true);
    if (l.p.name.empty()) {
        const auto slash = path.find_last_of('/');
        l.p.name = slash == std::string::npos ? path : path.substr(slash + 1);
    }
    return l.p;
}

Profile load_profile(const std::string& path) {
    std::ifstream f(path);
    if (!f) throw UsageError(fmt::format("couldn't read the profile {}: no such file, or not readable", path));
    std::stringstream ss;
    ss << f.rdbuf();
    return parse_profile(ss.str(), path);
}

RunSpec build_profile_spec(const Profile& p, const OptionValues& overrides) {
    OptionValues v = p.values;
    auto origins = p.origins;
    for (const auto& [k, vals] : overrides) {
        v[k] = vals;
        origins[k] = "the command line";
    }
    try {
        return build_run_spec(v, p.procedure, &origins, &p.streams);
    } catch (const OptionError&) {
        throw;  // already says where
    } catch (const UsageError& e) {
        const std::string what = e.what();
        if (what.starts_with(p.path + ":")) throw;  // already says where in the file
        throw UsageError(fmt::format("{}: {}", p.path, what));
    }
}

}  // namespace lr::spec
