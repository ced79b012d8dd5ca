// CSV as every linerate CSV file writes it: columns named after the JSON keys (a nested key
// as "parent.key", so a column is the path jq would use), a cell per column, empty where the
// JSON has null or nothing, strings quoted when they need it (RFC 4180).
#pragma once
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "report/fields.h"

namespace lr::report {

// One line (with its newline) of cells: null empty, strings as they are (quoted when needed),
// numbers and booleans as in JSON.
std::string csv_line(const std::vector<nlohmann::json>& cells);
std::string csv_line(const std::vector<std::string>& texts);

// The items with `f`: a header of f.columns(), then a line per item.
template <class T, class Items>
std::string csv_table(const Fields<T>& f, const Items& items) {
    std::string out = csv_line(f.columns());
    for (const auto& x : items) out += csv_line(f.cells(x));
    return out;
}

// Rows of JSON objects of differing shapes (the procedures' per-size tables): one level of
// nesting flattened into "parent.key" columns, arrays left out, columns in order of first
// appearance.
std::string table_csv(const nlohmann::json& rows);

}  // namespace lr::report
