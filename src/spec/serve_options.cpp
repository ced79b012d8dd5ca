// The option table's rows for `linerate serve`: where it listens, and which of the other
// commands' options it takes (its sessions' backend, ports' settings and tuning).
#include "spec/option_rows.h"

namespace lr::spec::option_rows {
namespace {

// The options `serve` shares with the other commands: the backend, its ports' settings and
// tuning, and what every trial of its sessions uses. Frames, rates and durations come from
// each OTG configuration.
constexpr std::string_view kSharedWithServe[] = {
    "backend", "xdp-mode", "xsk-mode", "cpus",   "ring-pair", "eal",   "nonce",       "line-rate",   "catch-up",
    "sender-nice", "interval", "drain", "settle", "stall-timeout", "force", "burst", "descriptors", "mbufs",
    "quiet", "capture-count"};

}  // namespace

#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmissing-field-initializers"

void add_serve_rows(std::vector<OptionDef>& t) {
    for (auto& row : t)
        for (auto n : kSharedWithServe)
            if (row.name == n) row.commands |= kServe;
    const ServeSettings def;
    t.push_back({.name = "listen", .group = "Server", .value_name = "[ADDR:]PORT",
                 .help = "Where the OTG API listens (a port alone: on loopback)", .default_text = def.listen,
                 .commands = kServe,
                 .apply = [](Draft& d, const Values& v) {
                     parse_listen(one(v), "--listen");
                     d.serve.listen = one(v);
                 }});
    t.push_back({.name = "tls", .group = "Server",
                 .help = "HTTPS with a self-signed certificate made at start (snappi never checks certificates)",
                 .kind = OptionDef::Kind::flag, .commands = kServe,
                 .apply = [](Draft& d, const Values& v) { d.serve.tls_self_signed = parse_bool(one(v), "--tls"); }});
    t.push_back({.name = "tls-cert", .group = "Server", .value_name = "FILE",
                 .help = "HTTPS with this certificate (PEM; with --tls-key)", .commands = kServe,
                 .apply = [](Draft& d, const Values& v) { d.serve.tls_cert = one(v); }});
    t.push_back({.name = "tls-key", .group = "Server", .value_name = "FILE",
                 .help = "The certificate's private key (PEM)", .commands = kServe,
                 .apply = [](Draft& d, const Values& v) { d.serve.tls_key = one(v); }});
    t.push_back({.name = "host-label", .group = "Server", .value_name = "NAME",
                 .help = "The host label on every Prometheus series of this engine, so one query sums across hosts",
                 .default_text = "the host name", .commands = kServe,
                 .apply = [](Draft& d, const Values& v) { d.serve.host_label = one(v); }});
    t.push_back({.name = "controller", .group = "Several hosts",
                 .help = "Drive other linerate engines (each a `linerate serve`) as one test: a port's location is "
                         "ENGINE-HOST:PORT;LOCAL-PORT or a --location-map name. Takes no backend options",
                 .kind = OptionDef::Kind::flag, .commands = kServe,
                 .apply = [](Draft& d, const Values& v) { d.serve.controller = parse_bool(one(v), "--controller"); }});
    t.push_back({.name = "location-map", .group = "Several hosts", .value_name = "FILE",
                 .help = "--controller: a YAML file naming locations, location_map: [{location: NAME, endpoint: "
                         "\"HOST:PORT;LOCAL-PORT\"}]",
                 .commands = kServe,
                 .apply = [](Draft& d, const Values& v) { d.serve.location_map = one(v); }});
}

#pragma GCC diagnostic pop

}  // namespace lr::spec::option_rows
