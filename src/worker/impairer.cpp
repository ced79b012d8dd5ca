#include "worker/impairer.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>
#include <numbers>

namespace lr::worker {
namespace {

// The Pareto jitter's shape: a heavy right tail with a finite variance.
constexpr double kParetoShape = 3.0;
using spec::kJitterClamp;

// Where a frame's L4 payload starts (Ethernet, up to two VLAN tags, IPv4 or IPv6, UDP or TCP),
// or 0 when it has none or is something else.
uint32_t payload_offset(const uint8_t* f, uint32_t len) {
    if (len < 14) return 0;
    uint32_t o = 14;
    uint16_t type = static_cast<uint16_t>(f[12] << 8 | f[13]);
    for (int tags = 0; tags < 2 && (type == 0x8100 || type == 0x88a8); ++tags) {
        if (len < o + 4) return 0;
        type = static_cast<uint16_t>(f[o + 2] << 8 | f[o + 3]);
        o += 4;
    }
    uint8_t proto = 0;
    if (type == 0x0800) {
        if (len < o + 20) return 0;
        const uint32_t ihl = (f[o] & 0xfu) * 4;
        if (ihl < 20) return 0;
        proto = f[o + 9];
        o += ihl;
    } else if (type == 0x86dd) {
        if (len < o + 40) return 0;
        proto = f[o + 6];
        o += 40;
    } else {
        return 0;
    }
    if (proto == 17) {
        o += 8;
    } else if (proto == 6) {
        if (len < o + 13) return 0;
        o += (f[o + 12] >> 4) * 4u;
    } else {
        return 0;
    }
    return o < len ? o : 0;
}

}  // namespace

Impairer::Impairer(const ImpairPlan& p)
    : p_(p), rng_(p.seed * 0x9E3779B97F4A7C15ull + 0x2545F4914F6CDD1Dull),
      loss_rng_((p.seed ^ 0x5851F42D4C957F2Dull) * 0xD1B54A32D192ED03ull + 0x94D049BB133111EBull) {
    if (rng_ == 0) rng_ = 1;
    if (loss_rng_ == 0) loss_rng_ = 1;
    p_.limit = std::max<uint32_t>(1, p_.limit);
    p_.reorder_gap = std::max<uint32_t>(1, p_.reorder_gap);
    const uint32_t n = p_.limit;
    store_.reset(new uint8_t[static_cast<size_t>(n) * p_.slot_bytes]);  // not zeroed: pages touched as used
    free_.reserve(n);
    for (uint32_t s = n; s-- > 0;) free_.push_back(s);
    len_.assign(n, 0);
    next_.assign(n, kNone);
    arrival_.assign(n, 0);
    index_.assign(n, 0);
    due_.assign(n, 0);
    copy_.assign(n, 0);
    queue_.assign(n, 0);
    // Buckets of about a microsecond (1024 ns), coarser for long horizons: at most 2^20 of them,
    // and more than the horizon spans, so a bucket only ever holds frames of one time unit.
    unit_shift_ = p_.wheel_shift();
    const uint64_t buckets = p_.wheel_buckets();
    mask_ = buckets - 1;
    head_.assign(buckets, kNone);
    tail_.assign(buckets, kNone);
}

uint64_t Impairer::next_random(uint64_t& x) {  // xorshift64*
    x ^= x >> 12;
    x ^= x << 25;
    x ^= x >> 27;
    return x * 0x2545F4914F6CDD1Dull;
}

bool Impairer::lost() {
    if (!p_.gilbert) return chance(p_.loss, loss_rng_);
    // Lost (or not) in the state the path is in, then the path moves on.
    const bool drop = chance(bad_state_ ? p_.ge_loss_bad : p_.ge_loss_good, loss_rng_);
    bad_state_ = bad_state_ ? !chance(p_.ge_r, loss_rng_) : chance(p_.ge_p, loss_rng_);
    return drop;
}

uint64_t Impairer::sampled_delay() {
    if (p_.jitter_ns == 0) return p_.delay_ns;
    const double j = static_cast<double>(p_.jitter_ns);
    double x = 0;
    switch (p_.dist) {
        case JitterDist::normal: {  // Box-Muller: the standard deviation is the jitter
            const double u1 = 1.0 - uniform(), u2 = uniform();  // u1 in (0, 1]
            x = j * std::sqrt(-2.0 * std::log(u1)) * std::cos(2.0 * std::numbers::pi * u2);
            break;
        }
        case JitterDist::uniform: x = j * (2.0 * uniform() - 1.0); break;
        case JitterDist::pareto: {  // X - median(X), X Pareto of scale 1: the delay is the median
            const double u = 1.0 - uniform();
            x = j * (std::pow(u, -1.0 / kParetoShape) - std::cbrt(2.0));
            break;
        }
    }
    const double d = static_cast<double>(p_.delay_ns) + std::clamp(x, -kJitterClamp * j, kJitterClamp * j);
    return d <= 0 ? 0 : static_cast<uint64_t>(d);
}

void Impairer::corrupt(uint8_t* f, uint32_t len) {
    if (len < 2) return;
    // In the payload, where a receiver finds it by its checksum; without one, past the Ethernet
    // header, so the frame still reaches its receiver.
    uint32_t from = payload_offset(f, len);
    if (from == 0) from = std::min<uint32_t>(14, len - 1);
    const uint64_t r = next_random();
    f[from + static_cast<uint32_t>(r % (len - from))] ^= static_cast<uint8_t>(1u << ((r >> 32) & 7));
    ++c_.corrupted;
}

uint32_t Impairer::hold(const uint8_t* data, uint32_t len, uint64_t now, uint64_t index) {
    if (free_.empty()) return kNone;
    const uint32_t s = free_.back();
    free_.pop_back();
    std::memcpy(slot(s), data, len);
    len_[s] = len;
    arrival_[s] = now;
    index_[s] = index;
    next_[s] = kNone;
    copy_[s] = 0;
    ++c_.held;
    return s;
}

void Impairer::to_wheel(uint32_t s, uint64_t due) {
    due_[s] = due;
    const size_t b = (due >> unit_shift_) & mask_;
    next_[s] = kNone;
    if (tail_[b] == kNone) head_[b] = s;
    else next_[tail_[b]] = s;
    tail_[b] = s;
    ++in_wheel_;
    earliest_ = std::min(earliest_, due);
}

void Impairer::to_link(uint32_t s, uint64_t due) {
    uint64_t dep = due;
    if (p_.rate_bps > 0 || p_.rate_pps > 0) {
        // The link carries one frame after another: at L1 the preamble, SFD and gap too.
        const double start = std::max(link_free_, static_cast<double>(due));
        if (start > static_cast<double>(due)) ++c_.shaped;
        dep = static_cast<uint64_t>(std::ceil(start));
        const double bytes = len_[s] + 4.0 + (p_.rate_l2 ? 0.0 : 20.0);
        link_free_ = start + (p_.rate_pps > 0 ? 1e9 / p_.rate_pps : bytes * 8e9 / p_.rate_bps);
    }
    due_[s] = dep;
    queue_[(qhead_ + qsize_) % queue_.size()] = s;
    ++qsize_;
}

void Impairer::place(uint32_t s, uint64_t due, uint64_t now) {
    if (due <= now) to_link(s, due);
    else to_wheel(s, due);
}

void Impairer::drain_bucket(uint64_t unit, uint64_t now, bool all) {
    const size_t b = unit & mask_;
    uint32_t prev = kNone, s = head_[b];
    while (s != kNone) {
        const uint32_t nx = next_[s];
        if (all || due_[s] <= now) {
            if (prev == kNone) head_[b] = nx;
            else next_[prev] = nx;
            if (tail_[b] == s) tail_[b] = prev;
            --in_wheel_;
            to_link(s, due_[s]);
        } else {
            prev = s;
        }
        s = nx;
    }
}

void Impairer::advance(uint64_t now) {
    // Once per clock read: a burst's arrivals share theirs, and a frame placed since is due later
    // (place() sends anything due by now straight to the link).
    if (now == advanced_to_) return;
    advanced_to_ = now;
    const uint64_t now_u = now >> unit_shift_;
    if (in_wheel_ == 0 || now_u < cursor_) {
        cursor_ = std::max(cursor_, now_u);
        return;
    }
    // Whole buckets behind now, in time order; then what is due of the current one. Behind by
    // a whole wheel or more, every frame in it is due.
    const uint64_t last = std::min(now_u, cursor_ + mask_ + 1);
    for (; cursor_ < last && in_wheel_; ++cursor_) drain_bucket(cursor_, now, true);
    cursor_ = now_u;
    if (in_wheel_) drain_bucket(now_u, now, false);
    if (in_wheel_ == 0) earliest_ = UINT64_MAX;
}

void Impairer::arrive(const uint8_t* data, uint32_t len, uint64_t now) {
    ++c_.received;
    const uint64_t index = arrivals_++;
    // The loss model decides first, whatever else happens, so a seed loses the same frames.
    if (lost()) {
        ++c_.dropped;
        for (int b = 0; b < 8; ++b) {
            c_.drop_digest ^= (index >> (8 * b)) & 0xff;
            c_.drop_digest *= 0x100000001b3ull;
        }
        return;
    }
    if (len > p_.slot_bytes) {
        ++c_.oversize;
        return;
    }
    advance(now);  // the wheel's cursor at now: every due below its horizon has a bucket of its own
    const uint32_t s = hold(data, len, now, index);
    if (s == kNone) {
        ++c_.overflowed;
        return;
    }
    if (chance(p_.corrupt)) corrupt(slot(s), len);
    uint64_t due = now;
    if (p_.reorder > 0 && (index + 1) % p_.reorder_gap == 0 && chance(p_.reorder)) {
        ++c_.early;  // leaves without the delay: ahead of the frames still in it
    } else {
        due = now + sampled_delay();
        if (!p_.jitter_reorders) {
            due = std::max(due, last_due_);
            last_due_ = due;
        }
    }
    place(s, due, now);
    if (chance(p_.duplicate)) {
        const uint32_t d = hold(slot(s), len, now, index);
        if (d == kNone) return;
        copy_[d] = 1;
        ++c_.duplicated;
        place(d, due, now);
    }
}

uint32_t Impairer::ready(uint64_t now, uint32_t most) {
    advance(now);
    uint32_t n = 0;
    const uint32_t cap = static_cast<uint32_t>(queue_.size());
    const uint32_t limit = std::min(qsize_, most);
    for (uint32_t i = qhead_; n < limit && due_[queue_[i]] <= now; i = i + 1 == cap ? 0 : i + 1) ++n;
    return n;
}

void Impairer::pop_front(uint64_t now) {
    const uint32_t s = queue_[qhead_];
    qhead_ = static_cast<uint32_t>((qhead_ + 1) % queue_.size());
    --qsize_;
    ++c_.forwarded;
    --c_.held;
    residence_.add(now >= arrival_[s] ? now - arrival_[s] : 0);
    lateness_.add(now >= due_[s] ? now - due_[s] : 0);
    // A frame that leaves after one that arrived later is what an in-order receiver counts as
    // reordered; a duplicate's second copy is its receiver's duplicate, not that.
    if (any_left_ && index_[s] < max_left_) {
        if (!copy_[s]) ++c_.reordered;
    } else {
        max_left_ = index_[s];
        any_left_ = true;
    }
    free_.push_back(s);
}

uint64_t Impairer::next_event(uint64_t now) {
    uint64_t t = qsize_ ? due_[queue_[qhead_]] : UINT64_MAX;
    if (in_wheel_ == 0) return t;
    if (earliest_ <= now) {  // a lower bound gone stale: the first non-empty bucket's least due
        earliest_ = UINT64_MAX;
        for (uint64_t u = cursor_; u <= cursor_ + mask_; ++u) {
            uint32_t s = head_[u & mask_];
            if (s == kNone) continue;
            for (; s != kNone; s = next_[s]) earliest_ = std::min(earliest_, due_[s]);
            break;
        }
    }
    return std::min(t, earliest_);
}

}  // namespace lr::worker
