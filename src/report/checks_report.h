// Checks as people, programs and CI servers read them: PASS/FAIL lines, a JSON array and a
// JUnit XML file (one testcase per check; a failure carries the measured value and the
// threshold; an invalid run is an error testcase of its own).
#pragma once
#include <cstdio>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "result/checks.h"
#include "result/result.h"

namespace lr::report {

// "PASS  loss 64B  0.000000 % (0 of 1000000)  <= 0.1 %" per check, then the verdict line.
void print_checks(std::FILE* out, const std::vector<result::Check>& checks, result::Verdict v,
                  const std::string& reason);
nlohmann::json checks_json(const std::vector<result::Check>& checks);

struct JunitSuite {
    std::string name;        // "linerate throughput" or the profile's name
    std::string classname;   // "linerate.throughput"
    double seconds = 0;
    std::vector<result::Check> checks;
    bool invalid = false;         // an error testcase: the run was invalid, or could not start
    std::string invalid_reason;
    std::string error_case = "valid run";  // its name ("setup" when the ports could not be opened)
    std::vector<std::pair<std::string, std::string>> properties;  // profile, backend, ports...
};
// Writes atomically. Throws lr::EnvError when the file can't be written.
void write_junit(const std::string& path, const JunitSuite& suite);
// The XML text (for tests).
std::string junit_xml(const JunitSuite& suite);

}  // namespace lr::report
