// `linerate serve` in a build without the OTG server (-Dotg=disabled: scripts/demo.sh builds
// only what its runs use). The command stays on the command line and says how to get it.
#include "cli/serve_cmd.h"

#include "util/error.h"

namespace lr::cli {

void ServeCommand::add_to(CLI::App& app) {
    app_ = app.add_subcommand("serve", "Serve the Open Traffic Generator (OTG) API (not in this build)");
    app_->allow_extras();
}

int ServeCommand::run() {
    throw UsageError(
        "this linerate was built without the OTG server (linerate serve): scripts/build.sh builds it, "
        "or meson configure build -Dotg=enabled && ninja -C build");
}

}  // namespace lr::cli
