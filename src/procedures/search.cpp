#include "procedures/search.h"

#include <algorithm>
#include <cmath>
#include <fmt/format.h>
#include <map>

#include "util/error.h"

namespace lr::procedures {

std::vector<Goal> preset_goals(const std::string& preset) {
    constexpr double w = spec::kSearchWidth, init = spec::kInitialTrialS;
    if (preset == "rfc2544") return {{"RFC2544", 0, 0, 60, 60, w, init}};
    if (preset == "csit") return {{"NDR", 0, 0.5, 1, 21, w, init}, {"PDR", 0.005, 0.5, 1, 21, w, init}};
    if (preset == "tst009") return {{"TST009", 0, 0.5, 60, 120, w, init}};
    throw UsageError(fmt::format("invalid --preset \"{}\": expected rfc2544, csit or tst009", preset));
}

LoadClass classify(const Goal& g, const std::vector<const TrialRecord*>& trials) {
    double full_low = 0, full_high = 0, short_low = 0, short_high = 0;
    for (const auto* t : trials) {
        const bool high = t->outcome.loss_ratio > g.loss_ratio;
        const bool full = t->duration_s >= g.final_trial_s;
        (full ? (high ? full_high : full_low) : (high ? short_high : short_low)) += t->outcome.effective_s;
    }
    // RFC 9971 appendix A.
    const double coefficient = g.exceed_ratio / (1.0 - g.exceed_ratio);
    const double balancing = short_low * coefficient;
    const double positive_excess = std::max(0.0, short_high - balancing);
    const double effect_high = full_high + positive_excess;
    const double effect_full = full_low + effect_high;
    const double effect_whole = std::max(effect_full, g.duration_sum_s);
    const double quantile = effect_whole * g.exceed_ratio;
    const double pessimistic_high = effect_whole - full_low;
    const bool pessimistic_is_lower = pessimistic_high <= quantile;
    const bool optimistic_is_lower = effect_high <= quantile;
    if (pessimistic_is_lower && optimistic_is_lower) return LoadClass::lower;
    if (!pessimistic_is_lower && !optimistic_is_lower) return LoadClass::upper;
    return LoadClass::undecided;
}

double conditional_throughput(const Goal& g, double load, const std::vector<const TrialRecord*>& trials) {
    // RFC 9971 appendix B: the loss ratio at the (1 - exceed ratio) quantile of the full-length
    // trials, weighted by their durations.
    std::vector<const TrialRecord*> full;
    double full_s = 0;
    for (const auto* t : trials)
        if (t->duration_s >= g.final_trial_s) {
            full.push_back(t);
            full_s += t->outcome.effective_s;
        }
    std::stable_sort(full.begin(), full.end(), [](const TrialRecord* a, const TrialRecord* b) {
        return a->outcome.loss_ratio < b->outcome.loss_ratio;
    });
    double remaining = std::max(g.duration_sum_s, full_s) * (1.0 - g.exceed_ratio);
    std::optional<double> quantile_loss;
    bool broke = false;
    for (const auto* t : full) {
        if (!quantile_loss || remaining > 0) {
            quantile_loss = t->outcome.loss_ratio;
            remaining -= t->outcome.effective_s;
        } else {
            broke = true;
            break;
        }
    }
    if (!broke && remaining > 0) quantile_loss = 1.0;
    return load * (1.0 - quantile_loss.value_or(1.0));
}

namespace {

// All valid trials, grouped by load.
class Database {
public:
    void add(const TrialRecord* t) {
        if (t->outcome.valid) by_load_[t->load].push_back(t);
    }
    const std::vector<const TrialRecord*>& at(double load) const {
        static const std::vector<const TrialRecord*> none;
        const auto it = by_load_.find(load);
        return it == by_load_.end() ? none : it->second;
    }
    bool measured(double load) const { return by_load_.count(load) != 0; }
    struct Bounds {
        std::optional<double> lower, upper;
        std::vector<double> undecided;  // measured loads between the bounds still undecided
    };
    // RFC 9971 4.7.1-4.7.2: the smallest upper bound, and the largest lower bound below it,
    // among the loads up to `max_load` (one lowered below a load the instrument could not
    // carry leaves that load's trials out: they can no longer be added to).
    Bounds bounds(const Goal& g, double max_load) const {
        Bounds b;
        std::map<double, LoadClass> cls;
        for (const auto& [load, trials] : by_load_) {
            if (load > max_load) break;
            cls[load] = classify(g, trials);
            if (cls[load] == LoadClass::upper && !b.upper) b.upper = load;
        }
        for (const auto& [load, c] : cls) {
            if (b.upper && load >= *b.upper) break;
            if (c == LoadClass::lower) b.lower = load;
        }
        for (const auto& [load, c] : cls)
            if (c == LoadClass::undecided && (!b.lower || load > *b.lower) && (!b.upper || load < *b.upper))
                b.undecided.push_back(load);
        return b;
    }

private:
    std::map<double, std::vector<const TrialRecord*>> by_load_;
};

double relative_width(double lower, double upper) { return (upper - lower) / upper; }

GoalResult goal_result(const Goal& g, const Database& db, double max_load, double min_load, bool max_is_generator) {
    GoalResult r;
    r.goal = g;
    const auto b = db.bounds(g, max_load);
    r.lower = b.lower;
    r.upper = b.upper;
    if (b.lower) r.conditional = conditional_throughput(g, *b.lower, db.at(*b.lower));
    if (b.lower && b.upper && relative_width(*b.lower, *b.upper) <= g.width * (1 + 1e-9)) {
        r.regular = true;
    } else if (!b.upper && b.lower && *b.lower >= max_load && max_is_generator) {
        r.at_least = true;
        r.irregular_reason = "generator-limited: the device lost nothing beyond the goal at the highest load this "
                             "host can offer, so its throughput is at least that";
    } else if (!b.upper && b.lower && *b.lower >= max_load) {
        r.irregular_reason = "the maximum load is a lower bound: the device forwarded what it was offered at the "
                             "highest load tried";
    } else if (!b.lower && b.upper && *b.upper <= min_load) {
        r.irregular_reason = "even the minimum load is an upper bound";
    } else {
        r.irregular_reason = "the search ended before the bounds were within the goal width";
    }
    return r;
}

class Controller {
public:
    Controller(const std::vector<Goal>& goals, const SearchLimits& lim, const Measurer& m)
        : goals_(goals), lim_(lim), m_(m), phase_(goals.size(), 0), done_(goals.size(), false),
          expansions_(goals.size(), 0) {
        quantum_ = std::max(lim.max_load * 1e-6, 1e-3);
        res_.trials.reserve(lim.max_trials);
    }
    SearchResult run();

private:
    uint32_t phases() const { return lim_.preceding_phases + 1; }
    // The goal's target in phase `p`: shorter trials, a single trial's worth of duration sum
    // and a coarser width before the final phase.
    Goal target(const Goal& g, uint32_t p) const {
        const uint32_t last = phases() - 1;
        if (p >= last || g.initial_trial_s >= g.final_trial_s) return g;
        Goal t = g;
        t.final_trial_s = g.initial_trial_s * std::pow(g.final_trial_s / g.initial_trial_s, double(p) / last);
        t.duration_sum_s = t.final_trial_s;
        t.width = std::min(0.5, g.width * std::pow(2.0, double(last - p)));
        return t;
    }
    double round(double load) const {
        return std::clamp(std::round(load / quantum_) * quantum_, lim_.min_load, lim_.max_load);
    }
    // The next load for goal i, or nothing when its current phase is finished.
    std::optional<std::pair<double, std::string>> next(size_t i, const Goal& t);
    bool measure(double load, double duration, const std::string& why);
    // An instrument-limited trial at `load`: once more, then the maximum load drops below it.
    // False when even the minimum load is beyond the instrument (the search ends).
    bool instrument_limited(double load, const TrialOutcome& o);

    std::vector<Goal> goals_;
    SearchLimits lim_;
    const Measurer& m_;
    std::vector<uint32_t> phase_;
    std::vector<bool> done_;
    std::vector<int> expansions_;
    double quantum_ = 1;
    Database db_;
    SearchResult res_;
    uint32_t invalid_in_a_row_ = 0;
    std::map<double, std::pair<uint32_t, double>> limited_;  // load -> tries, the most offered there
    double held_ = 0;  // the highest load of a valid trial: the instrument carried it
    bool lowered_ = false;
};

std::optional<std::pair<double, std::string>> Controller::next(size_t i, const Goal& t) {
    const double max = round(lim_.max_load), min = round(lim_.min_load);
    const auto b = db_.bounds(t, max);
    const std::string who = fmt::format("goal {} (phase {} of {}: {:g} s trials)", goals_[i].name, phase_[i] + 1,
                                        phases(), t.final_trial_s);
    if (!b.undecided.empty()) {
        // A load between the bounds needs more trial time before it counts.
        const double load = *std::max_element(b.undecided.begin(), b.undecided.end(), [&](double a, double c) {
            return db_.at(a).size() < db_.at(c).size();
        });
        return std::pair{load, fmt::format("more trial time at an undecided load for {}", who)};
    }
    if (b.lower && b.upper) {
        if (relative_width(*b.lower, *b.upper) <= t.width) return std::nullopt;
        expansions_[i] = 0;
        const double mid = round((*b.lower + *b.upper) / 2);
        if (mid <= *b.lower || mid >= *b.upper) return std::nullopt;  // as narrow as loads go
        return std::pair{mid, fmt::format("bisect between lower bound {:.0f} and upper bound {:.0f} pps for {}",
                                          *b.lower, *b.upper, who)};
    }
    if (!b.upper) {
        if (!db_.measured(max) || (b.lower && *b.lower < max && !b.upper && !db_.measured(max)))
            return std::pair{max, fmt::format("the maximum load first, for {}", who)};
        if (b.lower && *b.lower >= max) return std::nullopt;  // nothing above to find
        const double from = b.lower.value_or(min);
        const double up = round(std::min(max, from * (1 + t.width * std::pow(2.0, ++expansions_[i]))));
        return std::pair{up, fmt::format("above the lower bound {:.0f} pps, widening, for {}", from, who)};
    }
    // An upper bound and no lower bound below it.
    if (*b.upper <= min) return std::nullopt;
    double down;
    std::string why;
    if (expansions_[i] == 0) {
        // The device's forwarding rate at the upper bound is what it could take there.
        double worst = 0;
        for (const auto* tr : db_.at(*b.upper)) worst = std::max(worst, tr->outcome.loss_ratio);
        down = *b.upper * (1 - std::max(worst, t.width));
        why = fmt::format("the forwarding rate at the upper bound {:.0f} pps, for {}", *b.upper, who);
    } else {
        // Still lossy: at least the forwarding rate again, and a step that doubles each time.
        double worst = 0;
        for (const auto* tr : db_.at(*b.upper)) worst = std::max(worst, tr->outcome.loss_ratio);
        down = std::min(*b.upper * (1 - worst), *b.upper * (1 - std::min(0.5, t.width * std::pow(2.0, expansions_[i]))));
        why = fmt::format("below the upper bound {:.0f} pps, widening, for {}", *b.upper, who);
    }
    ++expansions_[i];
    down = round(std::max(min, down));
    if (down >= *b.upper) down = round(std::max(min, *b.upper - quantum_));
    if (down >= *b.upper) return std::nullopt;
    return std::pair{down, why};
}

bool Controller::measure(double load, double duration, const std::string& why) {
    TrialRecord t{load, duration, m_(load, duration, why), why};
    if (t.outcome.effective_s <= 0) t.outcome.effective_s = duration;
    res_.trial_seconds += t.outcome.effective_s;
    res_.trials.push_back(t);
    if (!t.outcome.valid && t.outcome.instrument_limited) {
        invalid_in_a_row_ = 0;
        return instrument_limited(load, t.outcome);
    }
    if (!t.outcome.valid) {
        if (++invalid_in_a_row_ > lim_.invalid_retries) {
            res_.ended_early = true;
            res_.end_reason = fmt::format("the trial at {:.0f} pps was invalid {} times in a row: {}", load,
                                          invalid_in_a_row_, t.outcome.invalid_reason);
            return false;
        }
        return true;
    }
    invalid_in_a_row_ = 0;
    limited_.erase(load);  // a valid trial there: an earlier miss was a stall, not the limit
    held_ = std::max(held_, load);
    db_.add(&res_.trials.back());
    return true;
}

bool Controller::instrument_limited(double load, const TrialOutcome& o) {
    auto& [tries, offered] = limited_[load];
    offered = std::max(offered, o.offered_pps);
    // A stall beyond the catch-up window happens: once more, and more often at a load the
    // instrument has carried before in this search.
    if (++tries < (load <= held_ ? kLimitedTriesHeld : kLimitedTries)) return true;
    const double cap = std::floor(kLimitedBackoff * std::min(load, offered > 0 ? offered : load) / quantum_) * quantum_;
    if (cap < lim_.min_load || cap <= 0) {
        res_.ended_early = true;
        res_.end_reason = fmt::format("the instrument cannot carry even the minimum load {:.0f} pps: {}", lim_.min_load,
                                      o.invalid_reason);
        return false;
    }
    if (cap < lim_.max_load) {
        res_.notes.push_back(fmt::format("the instrument could not carry {:.0f} pps in {} trials ({}): the maximum "
                                         "load is now {:.0f} pps",
                                         load, tries, o.invalid_reason, cap));
        lim_.max_load = cap;
        held_ = std::min(held_, cap);
        lowered_ = true;
    }
    return true;
}

SearchResult Controller::run() {
    if (lim_.max_load <= 0) throw UsageError("the search needs a maximum load above zero");
    for (;;) {
        bool measured = false;
        for (size_t i = 0; i < goals_.size() && !measured; ++i) {
            while (!done_[i]) {
                const Goal t = target(goals_[i], phase_[i]);
                const auto n = next(i, t);
                if (!n) {  // this phase is finished: on to longer trials and a finer width
                    expansions_[i] = 0;
                    if (++phase_[i] >= phases()) done_[i] = true;
                    continue;
                }
                if (res_.trials.size() >= lim_.max_trials) {
                    res_.ended_early = true;
                    res_.end_reason = fmt::format("the trial budget ({}) ran out", lim_.max_trials);
                    break;
                }
                if (!measure(n->first, t.final_trial_s, n->second)) break;
                measured = true;
                break;
            }
            if (res_.ended_early) break;
        }
        if (res_.ended_early || !measured) break;
    }
    for (const auto& g : goals_)
        res_.goals.push_back(goal_result(g, db_, round(lim_.max_load), round(lim_.min_load),
                                         lim_.max_is_generator || lowered_));
    res_.max_load = lim_.max_load;
    return std::move(res_);
}

}  // namespace

SearchResult mlr_search(const std::vector<Goal>& goals, const SearchLimits& lim, const Measurer& m) {
    return Controller(goals, lim, m).run();
}

SearchResult binary_search(const std::vector<Goal>& goals, const SearchLimits& limits, const Measurer& m) {
    SearchResult res;
    SearchLimits lim = limits;
    if (lim.max_load <= 0) throw UsageError("the search needs a maximum load above zero");
    bool lowered = false;
    std::map<double, std::pair<uint32_t, double>> limited;  // load -> tries, the most offered there
    double held = 0;  // the highest load of a valid trial
    for (const auto& g : goals) {
        // Each goal is a search of its own: RFC 2544 shares no trials between loss ratios.
        enum class Outcome { pass, fail, limited, ended };
        // One trial at `load`, repeated while invalid; an instrument-limited load, tried
        // kLimitedTries times, lowers the maximum below it (search.h).
        auto trial = [&](double load, const std::string& why) -> Outcome {
            for (uint32_t attempt = 0;; ++attempt) {
                TrialRecord t{load, g.final_trial_s, m(load, g.final_trial_s, why), why};
                if (t.outcome.effective_s <= 0) t.outcome.effective_s = g.final_trial_s;
                res.trial_seconds += t.outcome.effective_s;
                res.trials.push_back(t);
                if (t.outcome.valid) {
                    limited.erase(load);
                    held = std::max(held, load);
                    return t.outcome.loss_ratio <= g.loss_ratio ? Outcome::pass : Outcome::fail;
                }
                if (t.outcome.instrument_limited) {
                    auto& [tries, offered] = limited[load];
                    offered = std::max(offered, t.outcome.offered_pps);
                    if (++tries < (load <= held ? kLimitedTriesHeld : kLimitedTries)) continue;
                    const double cap = kLimitedBackoff * std::min(load, offered > 0 ? offered : load);
                    if (cap < lim.min_load || cap <= 0) {
                        res.ended_early = true;
                        res.end_reason = fmt::format("the instrument cannot carry even the minimum load {:.0f} pps: {}",
                                                     lim.min_load, t.outcome.invalid_reason);
                        return Outcome::ended;
                    }
                    res.notes.push_back(fmt::format("the instrument could not carry {:.0f} pps in {} trials ({}): the "
                                                    "maximum load is now {:.0f} pps",
                                                    load, tries, t.outcome.invalid_reason, cap));
                    lim.max_load = std::min(lim.max_load, cap);
                    held = std::min(held, cap);
                    lowered = true;
                    return Outcome::limited;
                }
                if (attempt >= lim.invalid_retries) {
                    res.ended_early = true;
                    res.end_reason = fmt::format("the trial at {:.0f} pps was invalid {} times in a row: {}", load,
                                                 attempt + 1, t.outcome.invalid_reason);
                    return Outcome::ended;
                }
            }
        };
        std::optional<double> lower, upper;
        double lo = lim.min_load, hi = lim.max_load;
        double load = hi;
        bool at_max = true;  // the maximum load first: if it passes, there is nothing above to find
        while (res.trials.size() < lim.max_trials) {
            const std::string why = at_max ? fmt::format("the maximum load first, for goal {}", g.name)
                                           : fmt::format("bisect [{:.0f}, {:.0f}] pps for goal {}", lo, hi, g.name);
            const Outcome o = trial(load, why);
            if (o == Outcome::ended) break;
            if (o == Outcome::limited) {
                hi = lim.max_load;
                load = at_max ? hi : (lo + hi) / 2;
                continue;
            }
            (o == Outcome::pass ? lower : upper) = load;
            (o == Outcome::pass ? lo : hi) = load;
            if (at_max && o == Outcome::pass) break;
            at_max = false;
            if ((hi - lo) / hi <= g.width) break;
            load = (lo + hi) / 2;
        }
        GoalResult r;
        r.goal = g;
        r.lower = lower;
        r.upper = upper;
        r.conditional = lower;
        r.regular = lower && upper && (*upper - *lower) / *upper <= g.width * (1 + 1e-9);
        if (!r.regular) {
            if (!upper && lower && (lim.max_is_generator || lowered)) {
                r.at_least = true;
                r.irregular_reason = "generator-limited: the device lost nothing at the highest load this host can "
                                     "offer, so its throughput is at least that";
            } else {
                r.irregular_reason = !upper ? "the maximum load passed" : !lower ? "no load passed" : "the search ended early";
            }
        }
        res.goals.push_back(r);
        if (res.ended_early) break;
    }
    res.max_load = lim.max_load;
    return res;
}

}  // namespace lr::procedures
