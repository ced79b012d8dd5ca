// OTG header field patterns (PatternFlow<Header><Field>): a value, a list of values, an
// increment or decrement counter, seeded random values, or "auto" where the model has it.
// Each advances packet by packet on its own: packet k of a flow takes value k mod n of its
// field's sequence of n values, so a flow's packets repeat every lcm of its fields' n.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "otg/json_fields.h"
#include "packet/addr.h"

namespace lr::otg {

// Wide enough for any header field, an IPv6 address included.
__extension__ typedef unsigned __int128 FieldValue;

// What a field's pattern may be and hold, as the model says.
struct FieldModel {
    enum class Kind : uint8_t { integer, mac, ipv4, ipv6 };
    Kind kind = Kind::integer;
    unsigned bits = 16;             // its width: values are below 2^bits, counters wrap there
    FieldValue default_value = 0;   // of "value" and of a counter's "start"
    bool has_auto = false;          // choice "auto" (a placeholder value comes with it)
    bool auto_by_default = false;   // the model's default choice is auto
    bool auto_is_dhcp = false;      // auto is {"choice": "dhcp"} (IP addresses): needs a device
    bool has_random = false;        // choice "random" {min, max, seed, count}
};

FieldModel integer_field(unsigned bits, uint32_t default_value = 0);
FieldModel auto_integer_field(unsigned bits, uint32_t default_value);  // auto by default
FieldModel mac_field(bool auto_by_default);
FieldModel ip_field(bool v6);  // value 0.0.0.0 or ::0 by default, auto = DHCP

// A field's values packet by packet (packet k: values[k % size]); none when it is automatic.
struct FieldValues {
    std::string path;                 // "flows[0].packet[2].udp.src_port"
    std::vector<FieldValue> values;   // at least one unless automatic
    bool automatic = false;           // choice auto: linerate (or the server) computes it
    bool given = false;               // present in the request
    bool varies() const { return values.size() > 1; }
};

// Reads the pattern at `f` (the model's default when absent). A sequence longer than
// `max_period` is refused here, as is whatever the model does not allow (unknown keys,
// values out of the field's range, a count of 0, an empty list, non-empty metric_tags).
// A refused pattern reads as its default.
FieldValues read_pattern(Reader& r, const Field& f, const FieldModel& m, uint64_t max_period);

// Refuses every value of `v` that is not `allowed` ("must be 5: linerate ..."), naming the
// pattern's path; true when all of them are. An automatic field passes.
bool require_value(Reader& r, const FieldValues& v, FieldValue allowed, const std::string& why);

// The random draws of a "random" pattern: `count` values in [lo, hi] from `seed` (0: a fixed
// seed of linerate's own), the same sequence for the same seed.
std::vector<FieldValue> random_values(FieldValue lo, FieldValue hi, uint32_t seed, uint32_t count);

// Conversions between field values and addresses, and values as text for messages.
packet::MacAddr to_mac(FieldValue v);
packet::IpAddr to_ip(FieldValue v, bool v6);
std::string value_text(FieldValue v, FieldModel::Kind kind);

// The least common multiple of a and b, saturated at `cap` + 1 (it only matters whether it
// exceeds `cap`).
uint64_t lcm_capped(uint64_t a, uint64_t b, uint64_t cap);

}  // namespace lr::otg
