#include "worker/worker_config.h"

#include "spec/run_spec.h"
#include "worker/queue_ops.h"

static_assert(lr::worker::kMaxBurstFrames == lr::spec::kMaxBurst, "one limit for every burst array");

namespace lr::worker {

const char* role_str(Role r) {
    switch (r) {
        case Role::tx: return "tx";
        case Role::rx: return "rx";
        case Role::request_response: return "request/response";
        case Role::reflect: return "reflect";
        case Role::forward: return "forward";
        case Role::connect: return "connect";
    }
    return "?";
}

}  // namespace lr::worker
