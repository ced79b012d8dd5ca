#include "otg/json_fields.h"

#include <cmath>
#include <fmt/format.h>
#include <utility>

namespace lr::otg {
namespace {

// A value as its user sent it, for messages: strings quoted, the rest as JSON.
std::string shown(const nlohmann::json& j) {
    auto s = j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
    constexpr size_t kLongest = 60;
    return s.size() > kLongest ? s.substr(0, kLongest) + "..." : s;
}

// The unsigned integer a JSON value holds: a non-negative integer, an integral number or a
// string of decimal digits. Empty when it holds anything else.
std::optional<uint64_t> as_unsigned(const nlohmann::json& j, bool strings) {
    if (j.is_number_unsigned()) return j.get<uint64_t>();
    if (j.is_number_integer()) {
        const auto v = j.get<int64_t>();
        return v < 0 ? std::nullopt : std::optional<uint64_t>(static_cast<uint64_t>(v));
    }
    if (j.is_number_float()) {
        const double d = j.get<double>();
        if (!(d >= 0) || d != std::floor(d) || d >= 18446744073709551616.0) return std::nullopt;
        return static_cast<uint64_t>(d);
    }
    if (strings && j.is_string()) {
        const auto& s = j.get_ref<const std::string&>();
        if (s.empty() || s.size() > 20) return std::nullopt;
        uint64_t v = 0;
        for (const char c : s) {
            if (c < '0' || c > '9') return std::nullopt;
            const auto digit = static_cast<uint64_t>(c - '0');
            if (v > (std::numeric_limits<uint64_t>::max() - digit) / 10) return std::nullopt;
            v = v * 10 + digit;
        }
        return v;
    }
    return std::nullopt;
}

}  // namespace

std::string member_path(std::string_view path, std::string_view key) {
    return path.empty() ? std::string(key) : fmt::format("{}.{}", path, key);
}

std::string list_of(const std::vector<std::string_view>& names, std::string_view last) {
    std::string out;
    for (size_t i = 0; i < names.size(); ++i) {
        if (i > 0) out += i + 1 == names.size() ? fmt::format(" {} ", last) : std::string(", ");
        out += names[i];
    }
    return out;
}

Field::Field(const nlohmann::json* value, std::string path)
    : v_(value && !value->is_null() ? value : nullptr), path_(std::move(path)) {}

Field Field::operator[](std::string_view key) const {
    const nlohmann::json* child = nullptr;
    if (v_ && v_->is_object()) {
        const auto it = v_->find(std::string(key));
        if (it != v_->end()) child = &*it;
    }
    return Field(child, member_path(path_, key));
}

Field Field::at(size_t index) const {
    const nlohmann::json* child = v_ && v_->is_array() && index < v_->size() ? &(*v_)[index] : nullptr;
    return Field(child, fmt::format("{}[{}]", path_, index));
}

size_t Field::size() const { return v_ && v_->is_array() ? v_->size() : 0; }

void Reader::refuse(std::string path, std::string message) {
    refusals_.push_back({std::move(path), std::move(message)});
}

void Reader::throw_if_refused() const {
    if (!refusals_.empty()) throw OtgError(refusals_);
}

std::optional<uint64_t> Reader::uint64(const Field& f, uint64_t min, uint64_t max) {
    if (!f.present()) return std::nullopt;
    const auto v = as_unsigned(f.json(), true);
    if (!v) {
        refuse(f, fmt::format("expected an unsigned integer (a number or a string of digits), got {}", shown(f.json())));
        return std::nullopt;
    }
    if (*v < min || *v > max) {
        refuse(f, fmt::format("{} is out of range: must be between {} and {}", *v, min, max));
        return std::nullopt;
    }
    return v;
}

std::optional<uint32_t> Reader::uint32(const Field& f, uint32_t min, uint32_t max) {
    if (!f.present()) return std::nullopt;
    const auto v = as_unsigned(f.json(), true);
    if (!v) {
        refuse(f, fmt::format("expected an unsigned integer, got {}", shown(f.json())));
        return std::nullopt;
    }
    if (*v < min || *v > max) {
        refuse(f, fmt::format("{} is out of range: must be between {} and {}", *v, min, max));
        return std::nullopt;
    }
    return static_cast<uint32_t>(*v);
}

std::optional<double> Reader::number(const Field& f, double min, double max) {
    if (!f.present()) return std::nullopt;
    if (!f.json().is_number()) {
        refuse(f, fmt::format("expected a number, got {}", shown(f.json())));
        return std::nullopt;
    }
    const double v = f.json().get<double>();
    if (!(v >= min && v <= max)) {
        refuse(f, fmt::format("{:g} is out of range: must be between {:g} and {:g}", v, min, max));
        return std::nullopt;
    }
    return v;
}

std::optional<bool> Reader::boolean(const Field& f) {
    if (!f.present()) return std::nullopt;
    if (!f.json().is_boolean()) {
        refuse(f, fmt::format("expected true or false, got {}", shown(f.json())));
        return std::nullopt;
    }
    return f.json().get<bool>();
}

std::optional<std::string> Reader::string(const Field& f) {
    if (!f.present()) return std::nullopt;
    if (!f.json().is_string()) {
        refuse(f, fmt::format("expected a string, got {}", shown(f.json())));
        return std::nullopt;
    }
    return f.json().get<std::string>();
}

std::optional<size_t> Reader::one_of(const Field& f, const std::vector<std::string_view>& allowed) {
    if (!f.present()) return std::nullopt;
    if (f.json().is_string()) {
        const auto& s = f.json().get_ref<const std::string&>();
        for (size_t i = 0; i < allowed.size(); ++i)
            if (s == allowed[i]) return i;
    }
    refuse(f, fmt::format("must be one of {}; got {}", list_of(allowed), shown(f.json())));
    return std::nullopt;
}

bool Reader::object(const Field& f, const std::vector<std::string_view>& known) {
    if (!f.present()) return false;
    if (!f.json().is_object()) {
        refuse(f, fmt::format("expected an object, got {}", shown(f.json())));
        return false;
    }
    for (const auto& [key, value] : f.json().items()) {
        bool ok = false;
        for (const auto k : known) ok |= k == key;
        if (!ok)
            refuse(member_path(f.path(), key),
                   fmt::format("unknown key (the keys here are {})", list_of(known, "and")));
    }
    return true;
}

size_t Reader::array(const Field& f) {
    if (!f.present()) return 0;
    if (!f.json().is_array()) {
        refuse(f, fmt::format("expected a list, got {}", shown(f.json())));
        return 0;
    }
    return f.json().size();
}

bool Reader::required(const Field& f) {
    if (f.present()) return true;
    refuse(f, "missing: the model requires it");
    return false;
}

}  // namespace lr::otg
