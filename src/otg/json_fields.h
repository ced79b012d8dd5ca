// Typed reading of an OTG request's JSON, field by field, with the path its user knows each
// field by ("flows[0].rate.pps"). A Reader collects every refusal instead of stopping at the
// first, so one answer lists all that is wrong with a request.
//
// The wire as snappi speaks it: int64/uint64 fields come as strings ("pps": "1000"), uint32 as
// numbers, floats as numbers that may be integers ("percentage": 10); fields left unset are
// omitted (the model's defaults apply); null is read as absent.
#pragma once
#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "otg/otg_error.h"

namespace lr::otg {

// A value of the request and its path; absent when its key is missing (or null).
class Field {
public:
    explicit Field(const nlohmann::json& root) : v_(&root) {}  // the request body, path ""
    Field(const nlohmann::json* value, std::string path);
    bool present() const { return v_ != nullptr; }
    const nlohmann::json& json() const { return *v_; }  // present() only
    const std::string& path() const { return path_; }
    // A member: absent when missing, or when this is not an object.
    Field operator[](std::string_view key) const;
    // An element: absent when out of range, or when this is not an array.
    Field at(size_t index) const;
    // Elements of an array (0 when absent or not an array).
    size_t size() const;

private:
    const nlohmann::json* v_ = nullptr;
    std::string path_;
};

// "path.key", or "key" at the top.
std::string member_path(std::string_view path, std::string_view key);

// Reads fields and collects what is refused. Each reader returns nullopt when the field is
// absent (the caller applies the model's default) or refused (it has said why, at the path).
class Reader {
public:
    void refuse(std::string path, std::string message);
    void refuse(const Field& f, std::string message) { refuse(f.path(), std::move(message)); }
    bool refused() const { return !refusals_.empty(); }
    size_t refusal_count() const { return refusals_.size(); }
    const std::vector<Refusal>& refusals() const { return refusals_; }
    // Throws OtgError (HTTP 400) with every refusal, if there is any.
    void throw_if_refused() const;

    // An unsigned integer from a number or a string of digits (uint64 on the wire); a
    // fraction, a negative or anything else is refused, and so is a value outside [min, max].
    std::optional<uint64_t> uint64(const Field& f, uint64_t min = 0,
                                   uint64_t max = std::numeric_limits<uint64_t>::max());
    // The same within 32 bits (uint32 on the wire: a number; a numeric string is accepted).
    std::optional<uint32_t> uint32(const Field& f, uint32_t min = 0,
                                   uint32_t max = std::numeric_limits<uint32_t>::max());
    // A number, integer or not, within [min, max] (float and double on the wire).
    std::optional<double> number(const Field& f, double min, double max);
    std::optional<bool> boolean(const Field& f);
    std::optional<std::string> string(const Field& f);
    // One of `allowed` (a refusal lists them all): the index of the one given.
    std::optional<size_t> one_of(const Field& f, const std::vector<std::string_view>& allowed);
    // An object: true when present and an object (refused when present and not one). A key
    // not in `known` is refused at its own path ("flows[0].rate.foo: unknown key").
    bool object(const Field& f, const std::vector<std::string_view>& known);
    // An array: its size (0 when absent; refused and 0 when present and not an array).
    size_t array(const Field& f);
    // A field the model requires: refused ("missing") when absent.
    bool required(const Field& f);

private:
    std::vector<Refusal> refusals_;
};

// "a, b or c" (or "a, b and c"), for messages.
std::string list_of(const std::vector<std::string_view>& names, std::string_view last = "or");

}  // namespace lr::otg
