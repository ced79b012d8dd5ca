// `linerate serve`: the Open Traffic Generator API over HTTP(S), so snappi (and any OTG
// client) scripts drive linerate's ports (docs/otg.md). cli/serve_cmd.cpp is the server;
// cli/serve_absent.cpp stands in for it in a build without it (-Dotg=disabled).
#pragma once
#include <CLI/CLI.hpp>

#include "cli/option_binding.h"
#include "spec/options.h"

namespace lr::otg {
struct ServerOptions;
}

namespace lr::cli {

class ServeCommand {
public:
    void add_to(CLI::App& app);
    bool chosen() const { return app_ && app_->parsed(); }
    int run();

private:
    // serve --controller: an OTG server driving other engines (otg/controller_service.h).
    int run_controller(const spec::ServeSpec& serve, const otg::ServerOptions& so);
    CLI::App* app_ = nullptr;
    BoundOptions opts_;
};

}  // namespace lr::cli
