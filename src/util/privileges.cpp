#include "util/privileges.h"

#include <atomic>
#include <cap-ng.h>
#include <fmt/format.h>
#include <linux/capability.h>
#include <mutex>

#include "util/error.h"

namespace lr::util {
namespace {

std::mutex g_mutex;               // one libcap-ng working set at a time
std::vector<int> g_keep;          // the set drop_all_but() chose
std::atomic<unsigned> g_generation{0};  // bumps with each drop_all_but()
thread_local unsigned t_adopted = 0;
CapRecord g_record;

std::vector<std::string> effective_names() {
    capng_get_caps_process();
    std::vector<std::string> v;
    for (int c = 0; c <= CAP_LAST_CAP; ++c)
        if (capng_have_capability(CAPNG_EFFECTIVE, static_cast<unsigned>(c))) v.push_back(cap_name(c));
    return v;
}

void apply(const std::vector<int>& keep) {
    capng_get_caps_process();
    const bool may_bound = capng_have_capability(CAPNG_EFFECTIVE, CAP_SETPCAP);
    capng_clear(CAPNG_SELECT_ALL);
    for (int c : keep)
        if (capng_update(CAPNG_ADD, static_cast<capng_type_t>(CAPNG_EFFECTIVE | CAPNG_PERMITTED),
                         static_cast<unsigned>(c)) != 0)
            throw EnvError(fmt::format("couldn't keep capability {}", cap_name(c)));
    // Without CAP_SETPCAP the bounding set cannot shrink; the rest still applies.
    const int rc = capng_apply(may_bound ? CAPNG_SELECT_ALL
                                         : static_cast<capng_select_t>(CAPNG_SELECT_CAPS | CAPNG_SELECT_AMBIENT));
    if (rc != 0) throw EnvError(fmt::format("couldn't drop capabilities after setup (libcap-ng error {})", rc));
}

}  // namespace

std::string cap_name(int cap) {
    const char* n = capng_capability_to_name(static_cast<unsigned>(cap));
    std::string s = n ? n : fmt::format("{}", cap);
    for (auto& ch : s) ch = static_cast<char>(std::toupper(static_cast<unsigned char>(ch)));
    return "CAP_" + s;
}

bool has_capability(int cap) {
    std::lock_guard lock(g_mutex);
    capng_get_caps_process();
    return capng_have_capability(CAPNG_EFFECTIVE, static_cast<unsigned>(cap));
}

CapRecord capability_record() {
    std::lock_guard lock(g_mutex);
    return g_record;
}

void require_capabilities(const std::vector<CapNeed>& needs, const std::string& what) {
    std::string missing, names, flags;
    for (const auto& n : needs) {
        if (has_capability(n.cap)) continue;
        missing += fmt::format("{}{} ({})", missing.empty() ? "" : ", ", cap_name(n.cap), n.why);
        auto lower = cap_name(n.cap).substr(4);
        for (auto& ch : lower) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
        flags += fmt::format("{}+{}", flags.empty() ? "" : ",", lower);
    }
    if (missing.empty()) return;
    throw EnvError(fmt::format("{} needs capabilities this process does not hold: {}. Run as root, or grant them: "
                               "setpriv --inh-caps {} --ambient-caps {} linerate ... (see docs/privileges.md)",
                               what, missing, flags, flags));
}

void drop_all_but(const std::vector<int>& keep) {
    std::lock_guard lock(g_mutex);
    g_keep = keep;
    g_record.before = effective_names();
    apply(keep);
    g_record.after = effective_names();
    g_record.dropped = true;
    t_adopted = g_generation.fetch_add(1) + 1;
}

bool adopt_dropped() noexcept {
    const unsigned gen = g_generation.load(std::memory_order_acquire);
    if (gen == 0 || t_adopted == gen) return true;
    try {
        std::lock_guard lock(g_mutex);
        apply(g_keep);
        t_adopted = gen;
        return true;
    } catch (...) {
        return false;
    }
}

}  // namespace lr::util
