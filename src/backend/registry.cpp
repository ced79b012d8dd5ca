#include "backend/backend.h"

#include <fmt/format.h>

#include "util/error.h"
#ifdef LINERATE_HAVE_DPDK
#include "backend/dpdk/dpdk_backend.h"
#endif
#ifdef LINERATE_HAVE_AFXDP
#include "backend/afxdp/afxdp_backend.h"
#endif

namespace lr::backend {

std::unique_ptr<Backend> make_backend(spec::BackendKind kind) {
#ifdef LINERATE_HAVE_DPDK
    if (kind == spec::BackendKind::dpdk) return dpdk::make_dpdk_backend();
#endif
#ifdef LINERATE_HAVE_AFXDP
    if (kind == spec::BackendKind::afxdp) return afxdp::make_afxdp_backend();
#endif
    throw UsageError(fmt::format("backend \"{}\" is not available in this build", spec::to_string(kind)));
}

}  // namespace lr::backend
