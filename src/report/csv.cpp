#include "report/csv.h"

#include <algorithm>
#include <map>

namespace lr::report {
namespace {

void cell(std::string& out, bool first, const std::string& s) {
    if (!first) out += ',';
    if (s.find_first_of(",\"\n") == std::string::npos) {
        out += s;
        return;
    }
    out += '"';
    for (char ch : s) {
        if (ch == '"') out += '"';
        out += ch;
    }
    out += '"';
}

std::string text(const nlohmann::json& v) { return v.is_string() ? v.get<std::string>() : v.is_null() ? "" : v.dump(); }

}  // namespace

std::string csv_line(const std::vector<nlohmann::json>& cells) {
    std::string out;
    for (size_t i = 0; i < cells.size(); ++i) cell(out, i == 0, text(cells[i]));
    return out + '\n';
}

std::string csv_line(const std::vector<std::string>& texts) {
    std::string out;
    for (size_t i = 0; i < texts.size(); ++i) cell(out, i == 0, texts[i]);
    return out + '\n';
}

std::string table_csv(const nlohmann::json& rows) {
    std::vector<std::string> cols;
    std::vector<std::map<std::string, nlohmann::json>> flat;
    for (const auto& row : rows) {
        std::map<std::string, nlohmann::json> f;
        auto put = [&](const std::string& k, const nlohmann::json& v) {
            if (v.is_array() || v.is_object()) return;
            if (std::find(cols.begin(), cols.end(), k) == cols.end()) cols.push_back(k);
            f[k] = v;
        };
        for (const auto& [k, v] : row.items()) {
            if (v.is_object())
                for (const auto& [k2, v2] : v.items()) put(k + "." + k2, v2);
            else
                put(k, v);
        }
        flat.push_back(std::move(f));
    }
    std::string out = csv_line(cols);
    for (const auto& f : flat) {
        std::vector<nlohmann::json> cells;
        for (const auto& c : cols) {
            const auto it = f.find(c);
            cells.push_back(it == f.end() ? nlohmann::json() : it->second);
        }
        out += csv_line(cells);
    }
    return out;
}

}  // namespace lr::report
