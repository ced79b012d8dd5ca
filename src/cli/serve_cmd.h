// `linerate serve`: the Open Traffic Generator API over HTTP(S), so snappi (and any OTG
// client) scripts drive linerate's ports (docs/otg.md).
#pragma once
#include <CLI/CLI.hpp>
#include <string>

#include "cli/option_binding.h"

namespace lr::cli {

class ServeCommand {
public:
    void add_to(CLI::App& app);
    bool chosen() const { return app_ && app_->parsed(); }
    int run();

private:
    CLI::App* app_ = nullptr;
    BoundOptions opts_;
    std::string listen_ = "127.0.0.1:8443";
    std::string tls_cert_, tls_key_;
    bool tls_ = false;
};

}  // namespace lr::cli
