// A result type's fields, declared once, in order. Every output writes a result from its one
// list: the JSON report and the JSON lines take json(), the CSV files take columns() and
// cells(), and the Prometheus exporter reads json(), so no output can spell, compute or leave
// out a field its own way (report/result_fields.h holds the lists).
//
// A field is a value (a number, a bool, a string or null), or a part: another type's fields
// under one key ("tx": {"packets", ...}; CSV columns "tx.packets", ...), null in JSON and
// empty cells in CSV when the part is absent. A part can also be spread into the object that
// holds it (its keys beside the others'). A field given a condition is left out of the JSON
// object, and its cells are empty, where the condition does not hold.
#pragma once
#include <functional>
#include <initializer_list>
#include <stdexcept>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

namespace lr::report {

template <class T>
class Fields {
public:
    using Json = nlohmann::json;
    using When = std::function<bool(const T&)>;

    struct Field {
        std::string key;  // empty: a part spread into the object that holds it
        std::function<Json(const T&)> json;
        std::vector<std::string> columns;                         // CSV columns (a value: its key)
        std::function<void(const T&, std::vector<Json>&)> cells;  // appends one cell per column (unset: json())
        When when;                                                // unset: always there
    };

    Fields(std::initializer_list<Field> fields) : fields_(fields) {}
    explicit Fields(std::vector<Field> fields) : fields_(std::move(fields)) {}

    // A value: get(x) is a number, a bool, a string, or a Json (null where there is none).
    template <class Get>
    static Field value(std::string key, Get get, When when = {}) {
        Field f;
        f.key = key;
        if constexpr (std::is_empty_v<Get> && std::is_default_constructible_v<Get>) {
            // A getter without state (a lambda capturing nothing) becomes a function pointer: every
            // such field of a T then shares one std::function instantiation, which keeps the
            // compile time of the long field lists down.
            f.json = &json_of<Get>;
        } else {
            f.json = [get](const T& x) { return Json(get(x)); };
        }
        f.columns = {std::move(key)};
        f.when = std::move(when);
        return f;  // its one cell: the JSON value
    }

    // A part under `key`, written with `sub`: get(x) is a std::optional<U> or a pointer to a U
    // (empty: the part is absent).
    template <class U, class Get>
    static Field part(std::string key, const Fields<U>& sub, Get get, When when = {}) {
        Field f = spread(sub, std::move(get), std::move(when));
        for (auto& c : f.columns) c = key + "." + c;
        f.key = std::move(key);
        return f;
    }

    // A part whose fields sit beside this type's own (same rules as part()).
    template <class U, class Get>
    static Field spread(const Fields<U>& sub, Get get, When when = {}) {
        Field f;
        f.json = [sub, get](const T& x) {
            const auto p = get(x);
            return p ? sub.json(*p) : Json();
        };
        f.columns = sub.columns();
        f.cells = [sub, get](const T& x, std::vector<Json>& out) {
            const auto p = get(x);
            if (p) {
                for (auto& c : sub.cells(*p)) out.push_back(std::move(c));
            } else {
                out.resize(out.size() + sub.columns().size());
            }
        };
        f.when = std::move(when);
        return f;
    }

    Json json(const T& x) const {
        Json j = Json::object();
        for (const auto& f : fields_) {
            if (f.when && !f.when(x)) continue;
            if (!f.key.empty()) {
                j[f.key] = f.json(x);
            } else if (auto part = f.json(x); part.is_object()) {
                j.update(part);
            }
        }
        return j;
    }

    std::vector<std::string> columns() const {
        std::vector<std::string> c;
        for (const auto& f : fields_) c.insert(c.end(), f.columns.begin(), f.columns.end());
        return c;
    }

    // One cell per column; null where a value or a part is absent.
    std::vector<Json> cells(const T& x) const {
        std::vector<Json> out;
        for (const auto& f : fields_) {
            if (f.when && !f.when(x)) {
                out.resize(out.size() + f.columns.size());
            } else if (f.cells) {
                f.cells(x, out);
            } else {
                out.push_back(f.json(x));
            }
        }
        return out;
    }

    // The keys of the JSON object, in order (a spread part's keys in its place).
    std::vector<std::string> keys() const {
        std::vector<std::string> k;
        for (const auto& f : fields_) {
            if (!f.key.empty()) {
                k.push_back(f.key);
                continue;
            }
            for (const auto& c : f.columns)  // a spread part's columns: its keys, then their parts'
                if (const auto top = c.substr(0, c.find('.')); k.empty() || k.back() != top) k.push_back(top);
        }
        return k;
    }

    // The fields named, in this list's order. Throws std::logic_error for a name it does not
    // have (a misspelt selection fails the first test that builds it, not an output).
    Fields only(std::initializer_list<std::string_view> names) const {
        std::vector<Field> out;
        for (const auto n : names) {
            bool found = false;
            for (const auto& f : fields_) found = found || f.key == n;
            if (!found) throw std::logic_error("no field \"" + std::string(n) + "\" to select");
        }
        for (const auto& f : fields_)
            for (const auto n : names)
                if (f.key == n) out.push_back(f);
        return Fields(std::move(out));
    }

private:
    template <class Get>
    static Json json_of(const T& x) {
        return Json(Get{}(x));
    }

    std::vector<Field> fields_;
};

// Every item of `items` with `f`, as a JSON array.
template <class T, class Items>
nlohmann::json json_array(const Fields<T>& f, const Items& items) {
    auto a = nlohmann::json::array();
    for (const auto& x : items) a.push_back(f.json(x));
    return a;
}

}  // namespace lr::report
