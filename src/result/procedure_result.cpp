#include "result/procedure_result.h"

#include <fmt/format.h>
#include <map>

namespace lr::result {

const char* invalid_kind_text(InvalidKind k) {
    switch (k) {
        case InvalidKind::none: return "valid";
        case InvalidKind::interrupted: return "interrupted";
        case InvalidKind::invariant: return "an invariant broke";
        case InvalidKind::link: return "a link went down";
        case InvalidKind::nothing_sent: return "nothing was sent";
        case InvalidKind::generator: return "the generator fell short of the load";
        case InvalidKind::stalled: return "the sender stalled inside a burst";
        case InvalidKind::host_egress: return "this host's egress device dropped frames";
        case InvalidKind::host_rx: return "this host's receive path dropped frames";
    }
    return "?";
}

Verdict ProcedureResult::verdict() const {
    if (invalid || interrupted) return Verdict::invalid;
    return all_pass(checks) ? Verdict::pass : Verdict::fail;
}

ProcedureResult::InvalidTrials ProcedureResult::invalid_trials() const {
    InvalidTrials t;
    std::map<InvalidKind, unsigned> by_kind;
    for (const auto& l : trials) {
        if (l.plan.probe) continue;
        ++t.of;
        if (!l.valid) {
            ++t.count;
            ++by_kind[l.invalid_kind];
        }
    }
    if (!t.count) return t;
    std::string why;
    for (const auto& [kind, n] : by_kind) why += fmt::format("{}{} {}", why.empty() ? "" : ", ", n, invalid_kind_text(kind));
    t.summary = fmt::format("{} of {} trials invalid, repeated or left out of the results: {}", t.count, t.of, why);
    return t;
}

std::string ProcedureResult::verdict_reason() const {
    const auto bad = invalid_trials();
    const std::string first = invalid ? invalid_reason : first_failure(checks);
    if (first.empty()) return bad.summary;
    return bad.summary.empty() ? first : first + "; " + bad.summary;
}

std::string ProcedureResult::size_text(unsigned size) const {
    return size ? fmt::format("{} B", size) : fmt::format("{} (mean {:.1f} B)", mix_label, mix_mean_size);
}

std::string ProcedureResult::size_short(unsigned size) const { return size ? fmt::format("{}B", size) : "mix"; }

}  // namespace lr::result
