#include "otg/prom_merge.h"

#include <map>
#include <sstream>

namespace lr::otg {
namespace {

std::string escaped(const std::string& v) {
    std::string out;
    for (char c : v) {
        if (c == '\\' || c == '"') out += '\\';
        if (c == '\n') {
            out += "\\n";
            continue;
        }
        out += c;
    }
    return out;
}

struct Family {
    std::string help, type;
    std::vector<std::string> samples;
};

}  // namespace

std::string with_host_label(const std::string& line, const std::string& host) {
    const std::string label = "host=\"" + escaped(host) + "\"";
    const auto name_end = line.find_first_of("{ ");
    if (name_end == std::string::npos) return line;
    if (line[name_end] == ' ') return line.substr(0, name_end) + "{" + label + "}" + line.substr(name_end);
    // Walk the labels (quoted values may hold commas, braces and escaped quotes), dropping host.
    std::string kept;
    size_t i = name_end + 1;
    while (i < line.size() && line[i] != '}') {
        const size_t start = i;
        const auto eq = line.find('=', i);
        if (eq == std::string::npos || eq + 1 >= line.size() || line[eq + 1] != '"') return line;  // not a sample
        size_t j = eq + 2;
        while (j < line.size() && line[j] != '"') j += line[j] == '\\' ? 2 : 1;
        if (j >= line.size()) return line;
        const std::string name = line.substr(start, eq - start);
        const std::string pair = line.substr(start, j + 1 - start);
        if (name != "host") kept += (kept.empty() ? "" : ",") + pair;
        i = j + 1;
        if (i < line.size() && line[i] == ',') ++i;
    }
    if (i >= line.size()) return line;
    return line.substr(0, name_end) + "{" + label + (kept.empty() ? "" : "," + kept) + line.substr(i);
}

std::string merge_expositions(const std::vector<std::pair<std::string, std::string>>& engines) {
    std::vector<std::string> order;
    std::map<std::string, Family> families;
    const auto family = [&](const std::string& name) -> Family& {
        if (!families.count(name)) order.push_back(name);
        return families[name];
    };
    for (const auto& [host, text] : engines) {
        std::istringstream in(text);
        std::string current;
        for (std::string line; std::getline(in, line);) {
            if (line.empty()) continue;
            if (line.rfind("# HELP ", 0) == 0 || line.rfind("# TYPE ", 0) == 0) {
                std::istringstream w(line.substr(7));
                std::string name;
                w >> name;
                current = name;
                auto& f = family(name);
                (line[2] == 'H' ? f.help : f.type) = line;
                continue;
            }
            if (line[0] == '#') continue;
            const auto name = line.substr(0, line.find_first_of("{ "));
            // A histogram's or summary's _bucket, _sum and _count belong to the family above them.
            const bool own = !current.empty() && name.rfind(current, 0) == 0;
            family(own ? current : name).samples.push_back(with_host_label(line, host));
        }
    }
    std::string out;
    for (const auto& name : order) {
        const auto& f = families[name];
        if (!f.help.empty()) out += f.help + "\n";
        if (!f.type.empty()) out += f.type + "\n";
        for (const auto& s : f.samples) out += s + "\n";
    }
    return out;
}

}  // namespace lr::otg
