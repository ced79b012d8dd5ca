#include "otg/location_map.h"

#include <charconv>
#include <fmt/format.h>
#include <stdexcept>
#include <yaml-cpp/yaml.h>

#include "util/error.h"

namespace lr::otg {

std::string Endpoint::engine() const {
    return host.find(':') != std::string::npos ? fmt::format("[{}]:{}", host, port) : fmt::format("{}:{}", host, port);
}

std::optional<Endpoint> parse_endpoint(const std::string& text) {
    const auto semi = text.find(';');
    if (semi == std::string::npos || semi + 1 >= text.size()) return std::nullopt;
    const std::string addr = text.substr(0, semi);
    Endpoint e;
    e.local = text.substr(semi + 1);
    size_t colon;
    if (!addr.empty() && addr.front() == '[') {
        const auto close = addr.find(']');
        if (close == std::string::npos || close + 1 >= addr.size() || addr[close + 1] != ':') return std::nullopt;
        e.host = addr.substr(1, close - 1);
        colon = close + 1;
    } else {
        colon = addr.rfind(':');
        if (colon == std::string::npos || addr.find(':') != colon) return std::nullopt;
        e.host = addr.substr(0, colon);
    }
    const std::string port = addr.substr(colon + 1);
    const auto [end, ec] = std::from_chars(port.data(), port.data() + port.size(), e.port);
    if (e.host.empty() || ec != std::errc{} || end != port.data() + port.size() || e.port < 1 || e.port > 65535)
        return std::nullopt;
    if (e.local.find_first_of(" ;") != std::string::npos) return std::nullopt;
    return e;
}

LocationMap LocationMap::load(const std::string& path) {
    LocationMap m;
    m.path_ = path;
    YAML::Node root;
    try {
        root = YAML::LoadFile(path);
    } catch (const YAML::BadFile&) {
        throw UsageError(fmt::format("--location-map {}: cannot read the file", path));
    } catch (const YAML::Exception& e) {
        throw UsageError(fmt::format("--location-map {}: not YAML: {}", path, e.what()));
    }
    const auto list = root.IsMap() ? root["location_map"] : YAML::Node();  // a scalar or a list on top: no keys
    if (!list || !list.IsSequence())
        throw UsageError(fmt::format("--location-map {}: needs a list location_map: [{{location, endpoint}}, ...]", path));
    for (size_t i = 0; i < list.size(); ++i) {
        const auto& e = list[i];
        const auto where = fmt::format("--location-map {}: location_map[{}]", path, i);
        if (!e.IsMap() || !e["location"] || !e["endpoint"] || !e["location"].IsScalar() || !e["endpoint"].IsScalar())
            throw UsageError(where + ": needs location and endpoint");
        const auto name = e["location"].as<std::string>(), text = e["endpoint"].as<std::string>();
        const auto ep = parse_endpoint(text);
        if (!ep)
            throw UsageError(fmt::format("{}: endpoint \"{}\": not ENGINE-HOST:PORT;LOCAL-PORT (e.g. 10.0.0.5:8443;ens1f0)",
                                         where, text));
        if (!m.entries_.emplace(name, *ep).second) throw UsageError(fmt::format("{}: location {} is listed twice", where, name));
    }
    return m;
}

Endpoint LocationMap::resolve(const std::string& location) const {
    if (const auto it = entries_.find(location); it != entries_.end()) return it->second;
    if (const auto e = parse_endpoint(location)) return *e;
    throw std::invalid_argument(
        path_.empty() ? fmt::format("\"{}\": not ENGINE-HOST:PORT;LOCAL-PORT (e.g. 10.0.0.5:8443;ens1f0), and the "
                                    "controller has no --location-map",
                                    location)
                      : fmt::format("\"{}\": not ENGINE-HOST:PORT;LOCAL-PORT, nor a location of {}", location, path_));
}

}  // namespace lr::otg
