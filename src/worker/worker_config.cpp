#include "worker/worker_config.h"

namespace lr::worker {

const char* role_str(Role r) {
    switch (r) {
        case Role::tx: return "tx";
        case Role::rx: return "rx";
        case Role::request_response: return "request/response";
        case Role::reflect: return "reflect";
    }
    return "?";
}

}  // namespace lr::worker
