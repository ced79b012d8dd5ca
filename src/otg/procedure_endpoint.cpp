#include "otg/procedure_endpoint.h"

#include "backend/backend.h"
#include "engine/session.h"
#include "otg/otg_error.h"
#include "procedures/procedures.h"
#include "report/procedure_report.h"
#include "spec/profile.h"
#include "util/error.h"

namespace lr::otg {

nlohmann::json run_procedure_profile(const std::string& body, const spec::OptionValues& serve_options,
                                     result::Sink* sink) {
    spec::RunSpec s;
    try {
        const auto profile = spec::parse_profile(body, "request.json");
        if (profile.procedure == spec::Procedure::run)
            throw OtgError("procedure", "name a procedure: sweep, throughput, latency, frame-loss or back-to-back");
        s = spec::build_profile_spec(profile, serve_options);
    } catch (const UsageError& e) {
        throw OtgError("", e.what());
    }
    s.quiet = true;
    try {
        engine::Session session(backend::make_backend(s.backend), s);
        const auto r = procedures::run_procedure(session, nullptr, sink);
        return report::procedure_report(s, session.environment(), r);
    } catch (const Error& e) {
        throw OtgError("", e.what(), e.code() == ExitCode::usage ? 400 : 500);
    }
}

}  // namespace lr::otg
