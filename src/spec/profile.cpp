#include "spec/profile.h"

#include <fmt/format.h>
#include <fstream>
#include <set>
#include <sstream>
#include <nlohmann/json.hpp>
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

// A profile as read from its file, TOML or JSON alike: every value with where it was written
// (file:line:col in TOML, file:/json/pointer in JSON), so one Loader applies the rules.
struct Node {
    enum class Kind { boolean, text, other, list, table, tables } kind = Kind::other;
    std::string text;      // boolean: "true"/"false"; text: a string or a number as typed
    std::string type;      // what it is, for errors ("a table", "an array", ...)
    std::string at;        // where the value is
    bool string = false;   // text that was a string (not a number)
    bool inline_table = false;
    std::vector<Node> items;  // list, tables; a table's values
    std::vector<std::string> keys, key_at;  // a table's keys, and where each is
};

// A JSON pointer's reference token (RFC 6901): "~" and "/" escaped.
std::string pointer_token(const std::string& key) {
    std::string out;
    for (char c : key) out += c == '~' ? "~0" : c == '/' ? "~1" : std::string(1, c);
    return out;
}

Node from_toml(const toml::node& v, const std::string& path) {
    Node n;
    n.at = where(path, v.source());
    if (auto b = v.as_boolean()) {
        n.kind = Node::Kind::boolean;
        n.text = b->get() ? "true" : "false";
    } else if (auto s = v.as_string()) {
        n.kind = Node::Kind::text;
        n.string = true;
        n.text = s->get();
    } else if (auto i = v.as_integer()) {
        n.kind = Node::Kind::text;
        n.text = fmt::format("{}", i->get());
    } else if (auto f = v.as_floating_point()) {
        n.kind = Node::Kind::text;
        n.text = fmt::format("{}", f->get());
    } else if (const auto* t = v.as_table()) {
        n.kind = Node::Kind::table;
        n.inline_table = t->is_inline();
        for (const auto& [k, e] : *t) {
            n.keys.emplace_back(k.str());
            n.key_at.push_back(where(path, k.source()));
            n.items.push_back(from_toml(e, path));
        }
    } else if (const auto* a = v.as_array()) {
        n.kind = v.is_array_of_tables() ? Node::Kind::tables : Node::Kind::list;
        for (const auto& e : *a) n.items.push_back(from_toml(e, path));
    }
    std::ostringstream type;
    type << v.type();
    n.type = "a " + type.str();
    return n;
}

Node from_json(const nlohmann::json& v, const std::string& path, const std::string& pointer) {
    Node n;
    n.at = fmt::format("{}:{}", path, pointer.empty() ? "/" : pointer);
    n.type = std::string(v.is_object() ? "an " : "a ") + (v.is_object() ? "object" : v.type_name());
    if (v.is_boolean()) {
        n.kind = Node::Kind::boolean;
        n.text = v.get<bool>() ? "true" : "false";
    } else if (v.is_string()) {
        n.kind = Node::Kind::text;
        n.string = true;
        n.text = v.get<std::string>();
    } else if (v.is_number_unsigned()) {
        n.kind = Node::Kind::text;
        n.text = fmt::format("{}", v.get<uint64_t>());
    } else if (v.is_number_integer()) {
        n.kind = Node::Kind::text;
        n.text = fmt::format("{}", v.get<int64_t>());
    } else if (v.is_number_float()) {
        n.kind = Node::Kind::text;
        n.text = fmt::format("{}", v.get<double>());
    } else if (v.is_object()) {
        n.kind = Node::Kind::table;
        for (const auto& [k, e] : v.items()) {
            const auto at = pointer + "/" + pointer_token(k);
            n.keys.push_back(k);
            n.key_at.push_back(fmt::format("{}:{}", path, at));
            n.items.push_back(from_json(e, path, at));
        }
    } else if (v.is_array()) {
        bool all_objects = !v.empty();
        for (size_t i = 0; i < v.size(); ++i) {
            n.items.push_back(from_json(v[i], path, fmt::format("{}/{}", pointer, i)));
            all_objects = all_objects && v[i].is_object();
        }
        n.kind = all_objects ? Node::Kind::tables : Node::Kind::list;
    }
    return n;
}

// One scalar as the command line would give it.
std::string scalar_text(const Node& v, const std::string& at, std::string_view key) {
    if (v.kind == Node::Kind::text) return v.text;
    if (v.kind == Node::Kind::boolean)
        throw UsageError(fmt::format("{}: {}: a boolean where a value is expected (booleans are for switches such as "
                                     "quiet or ipv6)",
                                     at, key));
    throw UsageError(fmt::format("{}: {}: expected a string or a number, found {}", at, key, v.type));
}

struct Loader {
    Profile p;
    bool json = false;
    std::map<std::string, std::string, std::less<>> seen;  // key -> where, over all sections

    void key_value(const std::string& key, const std::string& at, const Node& v) {
        if (const auto it = seen.find(key); it != seen.end())
            throw UsageError(fmt::format("{}: {} is given twice (first at {})", at, key, it->second));
        seen[key] = at;
        if (key == "procedure") {
            try {
                p.procedure = parse_procedure(scalar_text(v, at, key), "procedure");
            } catch (const UsageError& e) {
                throw UsageError(fmt::format("{}: {}", v.at, e.what()));
            }
            return;
        }
        if (key == "name" || key == "description") {
            if (!v.string)
                throw UsageError(fmt::format("{}: {}: expected a string", at, key));
            (key == "name" ? p.name : p.description) = v.text;
            return;
        }
        const OptionDef* o = find_option(key);
        if (!o || !(o->applies_to(Command::run) || o->applies_to(Command::procedure)))
            throw UsageError(fmt::format("{}: unknown key \"{}\" (keys are the options of linerate run and of the "
                                         "procedures, without dashes: docs/profiles.md)",
                                         at, key));
        const auto& vat = v.at;
        std::vector<std::string> vals;
        if (o->kind == OptionDef::Kind::flag) {
            if (v.kind != Node::Kind::boolean) throw UsageError(fmt::format("{}: {}: expected true or false", vat, key));
            vals.push_back(v.text);
        } else if (v.kind == Node::Kind::list) {  // (a list of tables never gets here: table() takes it)
            if (v.items.empty()) throw UsageError(fmt::format("{}: {}: an empty list", vat, key));
            std::string joined;
            for (const auto& e : v.items) {
                const auto s = scalar_text(e, e.at, key);
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

    // One [[stream]] (an object of the JSON "stream" list): its keys as --stream would give
    // them, each with where it was written.
    void stream(const Node& t) {
        StreamInput in;
        in.text = json ? t.at : fmt::format("{} [[stream]]", t.at);
        for (size_t i = 0; i < t.keys.size(); ++i) {
            const auto& key = t.keys[i];
            const auto& v = t.items[i];
            std::string value;
            if (v.kind == Node::Kind::boolean) {
                value = v.text;
            } else if (v.kind == Node::Kind::list || v.kind == Node::Kind::tables) {
                if (v.items.empty()) throw UsageError(fmt::format("{}: {}: an empty list", v.at, key));
                for (const auto& e : v.items) value += (value.empty() ? "" : ",") + scalar_text(e, e.at, key);
            } else if (v.kind == Node::Kind::table) {
                throw UsageError(fmt::format("{}: {}: a table where a value is expected", v.at, key));
            } else {
                value = scalar_text(v, v.at, key);
            }
            in.keys.push_back({key, value, v.at});
        }
        if (in.keys.empty()) throw UsageError(fmt::format("{}: an empty stream", in.text));
        p.streams.push_back(std::move(in));
    }

    void table(const Node& t, bool top) {
        const char* stream_name = json ? "\"stream\"" : "[[stream]]";
        for (size_t i = 0; i < t.keys.size(); ++i) {
            const auto& key = t.keys[i];
            const auto& at = t.key_at[i];
            const auto& v = t.items[i];
            if (v.kind == Node::Kind::table) {
                if (v.inline_table)
                    throw UsageError(fmt::format("{}: {}: a table where a value is expected", at, key));
                if (!top) throw UsageError(fmt::format("{}: [{}]: sections do not nest", at, key));
                if (!section_names().count(key))
                    throw UsageError(fmt::format("{}: unknown section [{}] (sections: ports, frames, run, "
                                                 "procedures, thresholds, tuning, output)",
                                                 at, key));
                table(v, false);
            } else if (v.kind == Node::Kind::tables) {
                if (!top || key != "stream")
                    throw UsageError(fmt::format("{}: [[{}]]: the only array of tables a profile has is {}", at, key,
                                                 stream_name));
                for (const auto& e : v.items) stream(e);
            } else {
                key_value(key, at, v);
            }
        }
    }
};

Profile load(const Node& root, const std::string& path, bool json) {
    Loader l;
    l.json = json;
    l.p.path = path;
    l.table(root, true);
    if (l.p.name.empty()) {
        const auto slash = path.find_last_of('/');
        l.p.name = slash == std::string::npos ? path : path.substr(slash + 1);
    }
    return l.p;
}

bool is_json(const std::string& path) { return path.size() >= 5 && path.compare(path.size() - 5, 5, ".json") == 0; }

}  // namespace

Profile parse_profile(const std::string& text, const std::string& path) {
    if (is_json(path)) {
        nlohmann::json j;
        try {
            j = nlohmann::json::parse(text);
        } catch (const nlohmann::json::exception& e) {  // a syntax error, or a number out of range
            throw UsageError(fmt::format("{}: not valid JSON: {}", path, e.what()));
        }
        if (!j.is_object()) throw UsageError(fmt::format("{}: a profile is a JSON object, not {}", path, j.type_name()));
        return load(from_json(j, path, ""), path, true);
    }
    toml::table t;
    try {
        t = toml::parse(text, path);
    } catch (const toml::parse_error& e) {
        throw UsageError(fmt::format("{}: {}", where(path, e.source()), e.description()));
    }
    return load(from_toml(t, path), path, false);
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
