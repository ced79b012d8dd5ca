#include "otg/otg_error.h"

#include <utility>

namespace lr::otg {

OtgError::OtgError(std::vector<Refusal> refusals, int http_status)
    : refusals_(std::move(refusals)), http_status_(http_status) {
    for (const auto& r : refusals_) {
        if (!text_.empty()) text_ += '\n';
        text_ += r.line();
    }
}

}  // namespace lr::otg
