// The option table's rows for `linerate impair` (the emulated path's settings), which other
// rows it shares (the backend, its tuning, the outputs, --rate as the link's rate, --seed,
// --duration), and the spec it builds, refused before anything is forwarded when it cannot
// be what was asked.
#include <fstream>
#include <sys/sysinfo.h>

#include "spec/option_rows.h"
#include "spec/rate.h"

namespace lr::spec::option_rows {
namespace {

constexpr std::string_view kSharedWithImpair[] = {
    "backend", "xdp-mode", "xsk-mode", "cpus", "ring-pair", "eal", "force", "interval", "burst", "descriptors",
    "mbufs", "json", "json-stream", "metrics", "quiet", "stall-timeout"};

// "0.1%", "0.1" (percent), "100%": a probability 0..1. Throws UsageError quoting the value.
double parse_probability(const std::string& s, std::string_view what) {
    const std::string v = !s.empty() && s.back() == '%' ? s.substr(0, s.size() - 1) : s;
    try {
        return parse_percent(v, what) / 100.0;
    } catch (const UsageError&) {  // quoted as typed, the % sign included
        throw UsageError(fmt::format("invalid {} \"{}\": expected a percentage between 0 and 100", what, s));
    }
}

// gilbert:P,R[,H[,K]]: percentages: P(good -> bad), P(bad -> good), loss in the bad state
// (default 100), loss in the good state (default 0).
void parse_loss_model(ImpairPlan& p, const std::string& s) {
    constexpr std::string_view kPrefix = "gilbert:";
    if (s.rfind(kPrefix, 0) != 0)
        throw_invalid("--loss-model", s, "gilbert:P,R[,H[,K]] (percentages: good to bad, bad to good, loss in the "
                                         "bad state, loss in the good state)");
    std::vector<double> v;
    size_t pos = kPrefix.size();
    while (pos <= s.size()) {
        const size_t comma = std::min(s.find(',', pos), s.size());
        const std::string part = s.substr(pos, comma - pos);
        try {
            v.push_back(parse_probability(part, "--loss-model"));
        } catch (const UsageError&) {
            throw_invalid("--loss-model", s, fmt::format("\"{}\" is not a percentage between 0 and 100", part));
        }
        pos = comma + 1;
    }
    if (v.size() < 2 || v.size() > 4)
        throw_invalid("--loss-model", s, "two to four percentages: P,R[,H[,K]]");
    p.gilbert = true;
    p.ge_p = v[0];
    p.ge_r = v[1];
    p.ge_loss_bad = v.size() > 2 ? v[2] : 1.0;
    p.ge_loss_good = v.size() > 3 ? v[3] : 0.0;
}

J pct(double p) { return p * 100; }

}  // namespace

#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmissing-field-initializers"

void add_impair_rows(std::vector<OptionDef>& t) {
    for (auto& row : t)
        for (auto n : kSharedWithImpair)
            if (row.name == n) row.commands |= kImpair;
    const ImpairPlan def;
    t.push_back({.name = "between", .group = "Path", .value_name = "A,B",
                 .help = "The two ports the emulated path joins: interfaces (afxdp) or DPDK ports (required)",
                 .commands = kImpair,
                 .apply = [](Draft& d, const Values& v) {
                     const auto& s = one(v);
                     const auto comma = s.find(',');
                     if (comma == std::string::npos || comma == 0 || comma + 1 == s.size() ||
                         s.find(',', comma + 1) != std::string::npos || s.substr(0, comma) == s.substr(comma + 1))
                         throw_invalid("--between", s, "two different ports A,B");
                     d.impair.a = s.substr(0, comma);
                     d.impair.b = s.substr(comma + 1);
                 },
                 .show = [](const RunSpec& s, J& j) {
                     if (s.impair) j["impair"]["between"] = {s.impair->a, s.impair->b};
                 }});
    t.push_back({.name = "impair-queues", .cli = "--queues", .group = "Path", .value_name = "N",
                 .help = "Queues of each port, one forwarding worker per direction and queue (frames received on "
                         "queue q leave on queue q)",
                 .default_text = "1", .commands = kImpair,
                 .apply = [](Draft& d, const Values& v) {
                     d.queues = static_cast<uint16_t>(parse_uint(one(v), "--queues", 1, kMaxQueues));
                 },
                 .show = [](const RunSpec& s, J& j) {
                     if (s.impair) j["impair"]["queues"] = s.impair->queues;
                 }});
    t.push_back({.name = "impair-rate", .cli = "--rate", .group = "Path", .value_name = "RATE",
                 .help = "The emulated link's rate: bits/s at L1 (1Gbps: preamble, SFD and gap counted) or L2 "
                         "(1Gbps-l2), or frames/s (100kpps); frames queue for it (counted shaped) up to --limit",
                 .default_text = "none", .commands = kImpair,
                 .apply = [](Draft& d, const Values& v) {
                     const auto r = parse_rate(one(v), "--rate");
                     auto& p = d.impair.plan;
                     switch (r.unit) {
                         case RateSpec::Unit::pps: p.rate_pps = r.value; break;
                         case RateSpec::Unit::l1_bps: p.rate_bps = r.value; break;
                         case RateSpec::Unit::l2_bps:
                             p.rate_bps = r.value;
                             p.rate_l2 = true;
                             break;
                         case RateSpec::Unit::percent:
                             throw_invalid("--rate", one(v), "the emulated link's rate in bits or frames per second, "
                                                             "not a percentage");
                         case RateSpec::Unit::max: break;
                     }
                     if (r.limited()) d.impair.rate_typed = "--rate " + one(v);
                 },
                 .show = [](const RunSpec& s, J& j) {
                     if (!s.impair) return;
                     const auto& p = s.impair->plan;
                     j["impair"]["rate"] = p.rate_pps > 0  ? J{{"pps", p.rate_pps}}
                                           : p.rate_bps > 0 ? J{{p.rate_l2 ? "l2_bps" : "l1_bps", p.rate_bps}}
                                                            : J(nullptr);
                 }});
    t.push_back({.name = "impair-seed", .cli = "--seed", .group = "Path", .value_name = "N",
                 .help = "Seed of the random decisions: the same seed loses the same frames (by their arrival "
                         "numbers), whatever else the options ask; each direction and queue has its own stream",
                 .default_text = std::to_string(def.seed), .commands = kImpair,
                 .apply = [](Draft& d, const Values& v) {
                     d.impair.plan.seed = parse_uint(one(v), "--seed", 0, UINT64_MAX);
                 },
                 .show = [](const RunSpec& s, J& j) {
                     if (s.impair) j["impair"]["seed"] = s.impair->plan.seed;
                 }});
    t.push_back({.name = "impair-duration", .cli = "--duration", .group = "Path", .value_name = "TIME",
                 .help = "Stop after this long (it runs until SIGINT or SIGTERM otherwise)", .default_text = "until stopped",
                 .commands = kImpair,
                 .apply = [](Draft& d, const Values& v) {
                     d.spec.duration_s = parse_duration(one(v), "--duration");
                     d.duration_given = true;
                 },
                 .show = [](const RunSpec& s, J& j) {
                     if (s.impair) j["impair"]["duration_s"] = s.duration_s < 1e8 ? J(s.duration_s) : J(nullptr);
                 }});
    t.push_back({.name = "direction", .group = "Path", .value_name = "DIR",
                 .help = "Which way frames are forwarded (and impaired): both, a-to-b or b-to-a",
                 .default_text = "both", .choices = &impair_direction_choices(), .commands = kImpair,
                 .apply = [](Draft& d, const Values& v) {
                     d.impair.direction = ImpairDirection(parse_choice(impair_direction_choices(), one(v), "--direction"));
                 },
                 .show = [](const RunSpec& s, J& j) {
                     if (s.impair) j["impair"]["direction"] = std::string(to_string(s.impair->direction));
                 }});
    t.push_back({.name = "delay", .group = "Path", .value_name = "TIME",
                 .help = "Added to every frame's way through (e.g. 10ms, 250us)", .default_text = "0",
                 .commands = kImpair,
                 .apply = [](Draft& d, const Values& v) {
                     d.impair.plan.delay_ns = static_cast<uint64_t>(std::llround(parse_duration(one(v), "--delay", true) * 1e9));
                 },
                 .show = [](const RunSpec& s, J& j) {
                     if (s.impair) j["impair"]["delay_ns"] = s.impair->plan.delay_ns;
                 }});
    t.push_back({.name = "jitter", .group = "Path", .value_name = "TIME",
                 .help = "Variation of the delay: normal's standard deviation, uniform's half-width, pareto's scale",
                 .default_text = "0", .commands = kImpair,
                 .apply = [](Draft& d, const Values& v) {
                     d.impair.plan.jitter_ns = static_cast<uint64_t>(std::llround(parse_duration(one(v), "--jitter", true) * 1e9));
                 },
                 .show = [](const RunSpec& s, J& j) {
                     if (s.impair) j["impair"]["jitter_ns"] = s.impair->plan.jitter_ns;
                 }});
    t.push_back({.name = "jitter-dist", .group = "Path", .value_name = "DIST",
                 .help = "The delay's distribution around --delay: normal, uniform or pareto (a heavy right tail; "
                         "--delay its median)",
                 .default_text = "normal", .choices = &jitter_dist_choices(), .commands = kImpair,
                 .apply = [](Draft& d, const Values& v) {
                     d.impair.plan.dist = JitterDist(parse_choice(jitter_dist_choices(), one(v), "--jitter-dist"));
                 },
                 .show = [](const RunSpec& s, J& j) {
                     if (s.impair) j["impair"]["jitter_dist"] = std::string(to_string(s.impair->plan.dist));
                 }});
    t.push_back({.name = "jitter-reorder", .group = "Path",
                 .help = "Let the jitter reorder frames (as netem does); without it each frame leaves no sooner than "
                         "the one before",
                 .kind = OptionDef::Kind::flag, .commands = kImpair,
                 .apply = [](Draft& d, const Values& v) {
                     d.impair.plan.jitter_reorders = parse_bool(one(v), "--jitter-reorder");
                 },
                 .show = [](const RunSpec& s, J& j) {
                     if (s.impair) j["impair"]["jitter_reorders"] = s.impair->plan.jitter_reorders;
                 }});
    t.push_back({.name = "loss", .group = "Path", .value_name = "PCT",
                 .help = "Frames lost at random, each on its own (e.g. 0.1%)", .default_text = "0",
                 .commands = kImpair,
                 .apply = [](Draft& d, const Values& v) {
                     d.impair.plan.loss = parse_probability(one(v), "--loss");
                     d.impair.loss_typed = "--loss " + one(v);
                 },
                 .show = [](const RunSpec& s, J& j) {
                     if (s.impair && !s.impair->plan.gilbert) j["impair"]["loss_pct"] = pct(s.impair->plan.loss);
                 }});
    t.push_back({.name = "loss-model", .group = "Path", .value_name = "gilbert:P,R[,H[,K]]",
                 .help = "Bursty loss (Gilbert-Elliott), in percent: P good to bad, R bad to good, per frame; H the "
                         "loss in the bad state (default 100), K in the good state (default 0)",
                 .commands = kImpair,
                 .apply = [](Draft& d, const Values& v) {
                     parse_loss_model(d.impair.plan, one(v));
                     d.impair.loss_typed = "--loss-model " + one(v);
                 },
                 .show = [](const RunSpec& s, J& j) {
                     if (!s.impair || !s.impair->plan.gilbert) return;
                     const auto& p = s.impair->plan;
                     j["impair"]["gilbert"] = {{"p_pct", pct(p.ge_p)}, {"r_pct", pct(p.ge_r)},
                                               {"loss_bad_pct", pct(p.ge_loss_bad)}, {"loss_good_pct", pct(p.ge_loss_good)}};
                 }});
    t.push_back({.name = "duplicate", .group = "Path", .value_name = "PCT",
                 .help = "Frames sent twice", .default_text = "0", .commands = kImpair,
                 .apply = [](Draft& d, const Values& v) { d.impair.plan.duplicate = parse_probability(one(v), "--duplicate"); },
                 .show = [](const RunSpec& s, J& j) {
                     if (s.impair) j["impair"]["duplicate_pct"] = pct(s.impair->plan.duplicate);
                 }});
    t.push_back({.name = "reorder", .group = "Path", .value_name = "PCT",
                 .help = "Frames (of those --reorder-gap picks) that skip the delay, overtaking the frames in it",
                 .default_text = "0", .commands = kImpair,
                 .apply = [](Draft& d, const Values& v) { d.impair.plan.reorder = parse_probability(one(v), "--reorder"); },
                 .show = [](const RunSpec& s, J& j) {
                     if (s.impair) j["impair"]["reorder_pct"] = pct(s.impair->plan.reorder);
                 }});
    t.push_back({.name = "reorder-gap", .group = "Path", .value_name = "N",
                 .help = "Only every Nth frame may skip the delay (--reorder)", .default_text = "1",
                 .commands = kImpair,
                 .apply = [](Draft& d, const Values& v) {
                     d.impair.plan.reorder_gap = static_cast<uint32_t>(parse_uint(one(v), "--reorder-gap", 1, 1u << 30));
                 },
                 .show = [](const RunSpec& s, J& j) {
                     if (s.impair) j["impair"]["reorder_gap"] = s.impair->plan.reorder_gap;
                 }});
    t.push_back({.name = "corrupt", .group = "Path", .value_name = "PCT",
                 .help = "Frames with one bit of their payload flipped (their receiver finds the checksum wrong)",
                 .default_text = "0", .commands = kImpair,
                 .apply = [](Draft& d, const Values& v) { d.impair.plan.corrupt = parse_probability(one(v), "--corrupt"); },
                 .show = [](const RunSpec& s, J& j) {
                     if (s.impair) j["impair"]["corrupt_pct"] = pct(s.impair->plan.corrupt);
                 }});
    t.push_back({.name = "limit", .group = "Path", .value_name = "N",
                 .help = "Frames held at most (delayed and queued for the link); more arriving are dropped "
                         "(overflowed, counted)",
                 .default_text = std::to_string(def.limit), .commands = kImpair,
                 .apply = [](Draft& d, const Values& v) {
                     d.impair.plan.limit = static_cast<uint32_t>(parse_uint(one(v), "--limit", 1, 1u << 24));
                     d.impair.limit_given = true;
                 },
                 .show = [](const RunSpec& s, J& j) {
                     if (s.impair) j["impair"]["limit"] = s.impair->plan.limit;
                 }});
    t.push_back({.name = "max-frame", .group = "Path", .value_name = "SIZE",
                 .help = "The largest frame forwarded (bytes with FCS); the ports' MTU must carry it", .default_text = "1518",
                 .commands = kImpair,
                 .apply = [](Draft& d, const Values& v) {
                     d.spec.max_frame_size = static_cast<unsigned>(parse_uint(one(v), "--max-frame", packet::kMinFrame,
                                                                              packet::kMaxFrame + 18));
                 },
                 .show = [](const RunSpec& s, J& j) {
                     if (s.impair) j["impair"]["max_frame"] = s.max_frame_size;
                 }});
}

#pragma GCC diagnostic pop

}  // namespace lr::spec::option_rows

namespace lr::spec {

void RunSpec::validate_impair() const {
    const RunSpec& s = *this;
    const auto& im = *s.impair;
    const auto& p = im.plan;
    if (im.a.empty()) throw UsageError("impair needs --between A,B: the two ports the path joins");
    if (p.jitter_ns > p.delay_ns && !p.jitter_reorders)
        throw UsageError(fmt::format("--jitter {} is larger than --delay {}: with frames kept in order the delays "
                                     "would not have the asked distribution; give --jitter-reorder to let the "
                                     "jitter reorder frames (as netem does), or a jitter up to the delay",
                                     format_duration(static_cast<double>(p.jitter_ns) * 1e-9),
                                     format_duration(static_cast<double>(p.delay_ns) * 1e-9)));
    if (p.loss > 0 && p.gilbert) throw UsageError("--loss and --loss-model: give one of them");
    // What the frame memory must hold: the frames in flight over the longest delay at the
    // link's rate (its smallest frames), and the slots for them.
    // Each direction and queue has a store of its own: its slots, their bookkeeping, its wheel.
    const double stores = (im.direction == ImpairDirection::both ? 2.0 : 1.0) * im.queues;
    ImpairPlan sized = p;
    sized.slot_bytes = s.session_max_frame() - packet::kFcsLen;
    const double memory = stores * static_cast<double>(sized.memory_bytes());
    struct sysinfo si {};
    if (sysinfo(&si) == 0) {
        const double ram = static_cast<double>(si.totalram) * si.mem_unit;
        if (memory > ram / 2)
            throw UsageError(fmt::format("--limit {} frames of up to {} bytes, in each of {:.0f} stores (a direction "
                                         "and queue each), need {:.1f} GiB of memory, more than half of this "
                                         "host's {:.1f} GiB: lower --limit or --max-frame",
                                         p.limit, s.session_max_frame(), stores, memory / (1 << 30), ram / (1 << 30)));
    }
    const double fps = p.rate_pps > 0 ? p.rate_pps
                       : p.rate_bps > 0 ? p.rate_bps / ((packet::kMinFrame + (p.rate_l2 ? 0 : packet::kL1Overhead)) * 8.0)
                                        : 0;
    // Duplicates are held too.
    const double in_flight = fps * (1 + p.duplicate) * static_cast<double>(p.mean_delay_bound_ns()) * 1e-9;
    if (fps > 0 && in_flight > p.limit)
        throw UsageError(fmt::format("{} of delay{} at {} holds {:.0f} frames of {} bytes on average: more than "
                                     "--limit {}; raise --limit (each frame takes {} bytes of memory) or lower the "
                                     "delay or the rate",
                                     format_duration(static_cast<double>(p.delay_ns) * 1e-9),
                                     p.jitter_ns ? " and its jitter" : "", im.rate_typed, in_flight, packet::kMinFrame,
                                     p.limit, s.session_max_frame()));
}

RunSpec build_impair_spec(const OptionValues& given) {
    Draft d;
    apply_all(d, given, Command::impair);
    check_backend_support(given, d.spec.backend, Command::impair);
    auto& s = d.spec;
    resolve_frame(d, s.notes);
    ImpairSpec im = d.impair;
    im.queues = d.queues;
    if (!s.max_frame_size) s.max_frame_size = 1518;
    s.signature = false;  // the frames are the senders'; the path neither signs nor reads them
    if (!d.duration_given) s.duration_s = 1e9;  // until stopped
    s.impair = std::move(im);
    s.validate();
    return s;
}

}  // namespace lr::spec
