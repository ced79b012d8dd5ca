#include "report/checks_report.h"

#include <chrono>
#include <ctime>
#include <fmt/format.h>
#include <unistd.h>

#include "report/json_report.h"
#include "util/error.h"

namespace lr::report {
namespace {

std::string comparison(const result::Check& c) {
    return c.option.rfind("min-", 0) == 0 ? ">=" : "<=";
}

std::string xml_escape(const std::string& s) {
    std::string o;
    o.reserve(s.size());
    for (const char ch : s) {
        switch (ch) {
            case '&': o += "&amp;"; break;
            case '<': o += "&lt;"; break;
            case '>': o += "&gt;"; break;
            case '"': o += "&quot;"; break;
            case '\'': o += "&apos;"; break;
            default:
                // XML 1.0 allows no control characters but tab, newline and carriage return.
                if (static_cast<unsigned char>(ch) < 0x20 && ch != '\t' && ch != '\n' && ch != '\r') o += '?';
                else o += ch;
        }
    }
    return o;
}

}  // namespace

void print_checks(std::FILE* out, const std::vector<result::Check>& checks, result::Verdict v,
                  const std::string& reason) {
    for (const auto& c : checks)
        fmt::print(out, "{}  {:<28} {}  {} {}\n", c.pass ? "PASS" : "FAIL", c.name, c.measured_text, comparison(c),
                   c.threshold_text);
    fmt::print(out, "verdict: {}{}\n", result::verdict_str(v), reason.empty() ? "" : " (" + reason + ")");
}

nlohmann::json checks_json(const std::vector<result::Check>& checks) {
    auto a = nlohmann::json::array();
    for (const auto& c : checks)
        a.push_back({{"name", c.name},
                     {"option", c.option},
                     {"pass", c.pass},
                     {"measured", c.measured},
                     {"threshold", c.threshold},
                     {"unit", c.unit},
                     {"measured_text", c.measured_text},
                     {"threshold_text", c.threshold_text}});
    return a;
}

std::string junit_xml(const JunitSuite& s) {
    size_t failures = 0;
    for (const auto& c : s.checks) failures += !c.pass;
    const size_t tests = s.checks.size() + (s.invalid ? 1 : 0);
    const auto now = std::time(nullptr);
    char stamp[32];
    std::strftime(stamp, sizeof stamp, "%Y-%m-%dT%H:%M:%S", std::gmtime(&now));
    char host[256] = "localhost";
    gethostname(host, sizeof host - 1);
    std::string x = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n";
    x += fmt::format("<testsuites name=\"linerate\" tests=\"{}\" failures=\"{}\" errors=\"{}\" time=\"{:.3f}\">\n",
                     tests, failures, s.invalid ? 1 : 0, s.seconds);
    x += fmt::format("  <testsuite name=\"{}\" tests=\"{}\" failures=\"{}\" errors=\"{}\" skipped=\"0\" "
                     "time=\"{:.3f}\" timestamp=\"{}\" hostname=\"{}\">\n",
                     xml_escape(s.name), tests, failures, s.invalid ? 1 : 0, s.seconds, stamp, xml_escape(host));
    if (!s.properties.empty()) {
        x += "    <properties>\n";
        for (const auto& [k, v] : s.properties)
            x += fmt::format("      <property name=\"{}\" value=\"{}\"/>\n", xml_escape(k), xml_escape(v));
        x += "    </properties>\n";
    }
    if (s.invalid)
        x += fmt::format("    <testcase name=\"{}\" classname=\"{}\" time=\"0\">\n"
                         "      <error type=\"{}\" message=\"{}\">{}</error>\n    </testcase>\n",
                         xml_escape(s.error_case), xml_escape(s.classname),
                         s.error_case == "valid run" ? "invalid" : "setup", xml_escape(s.invalid_reason),
                         xml_escape(s.invalid_reason));
    for (const auto& c : s.checks) {
        x += fmt::format("    <testcase name=\"{}\" classname=\"{}\" time=\"0\">\n", xml_escape(c.name),
                         xml_escape(s.classname));
        const auto text = fmt::format("measured {} {} threshold {} (--{})", c.measured_text, comparison(c),
                                      c.threshold_text, c.option);
        if (c.pass)
            x += fmt::format("      <system-out>{}</system-out>\n", xml_escape(text));
        else
            x += fmt::format("      <failure type=\"threshold\" message=\"{}\">measured: {}\nthreshold: {} {}\n"
                             "option: --{}</failure>\n",
                             xml_escape(text), xml_escape(c.measured_text), xml_escape(comparison(c)),
                             xml_escape(c.threshold_text), xml_escape(c.option));
        x += "    </testcase>\n";
    }
    x += "  </testsuite>\n</testsuites>\n";
    return x;
}

void write_junit(const std::string& path, const JunitSuite& suite) { write_file(path, junit_xml(suite), "JUnit file"); }

}  // namespace lr::report
