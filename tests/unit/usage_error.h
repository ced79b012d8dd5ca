// The message of the UsageError a call throws, for tests of input errors.
#pragma once
#include <gtest/gtest.h>

#include <string>

#include "util/error.h"

namespace lr::test_support {

// The UsageError message of `f` ("(no error)" when it throws none); its exit code is usage.
template <class F>
std::string usage_error(F&& f) {
    try {
        f();
    } catch (const UsageError& e) {
        EXPECT_EQ(e.code(), ExitCode::usage);
        return e.what();
    }
    return "(no error)";
}

}  // namespace lr::test_support
