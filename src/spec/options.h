// The option table: one row per option of `run` and `reflect`. It drives the command line
// (cli/ registers each row with CLI11), the RunSpec (each row parses its own values with the
// strict parsers), the "spec" section of the JSON report, the option list in docs/usage.md
// (`linerate options --markdown`), and profile files, whose keys are the same names.
#pragma once
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "spec/choices.h"
#include "spec/run_spec.h"
#include "util/error.h"

namespace lr::spec {

// procedure: sweep, throughput, latency, frame-loss and back-to-back (and profiles that name one).
// serve: the OTG server's backend and tuning options, which every configuration's session uses.
// impair: the emulated path's settings, the backend, the outputs.
enum class Command : unsigned { run = 1u << 0, reflect = 1u << 1, procedure = 1u << 2, serve = 1u << 3, impair = 1u << 4,
                            connect = 1u << 5 };

// What `serve` listens on, beside its sessions' spec.
struct ServeSettings {
    std::string listen = "127.0.0.1:8443";
    bool tls_self_signed = false;  // HTTPS with a certificate made at start
    std::string tls_cert, tls_key;
    bool controller = false;    // drive other engines as one test (serve --controller)
    std::string location_map;   // the controller's map of port names to engines' ports
    std::string host_label;     // an engine's host label on its metrics (empty: the host name)
};

// A RunSpec being built, with the values whose defaults depend on other options kept
// apart until every option has been read.
struct Draft {
    RunSpec spec;
    bool ipv6 = false;
    std::optional<std::string> src_ip, dst_ip;
    bool size_given = false;  // "min" (the default) is resolved once the frame kind is known
    SizeSpec size;            // --size as given (a number or a distribution)
    std::vector<StreamInput> streams;  // --stream / [[stream]], built once the base options are read
    bool duration_given = false;
    bool nonce_given = false;
    std::string line_rate_typed;  // --line-rate as given, for its message
    // reflect
    ReflectBackend reflect_backend = ReflectBackend::xdp;  // the XDP program alone, or AF_XDP or DPDK in user space
    std::string port;
    uint16_t queues = 1;
    bool any_proto = true;  // reflect --proto any
    uint16_t dst_port_hi = 0;
    // serve
    ServeSettings serve;
    // impair
    ImpairSpec impair;
    // connect
    ConnectSpec connect;
};

struct OptionDef {
    enum class Kind { flag, value, list, positional };
    std::string_view name;        // the long option without dashes; also the profile key
    std::string_view cli;         // the command-line spelling when not "--name" ("-q,--quiet")
    std::string_view group;       // help and docs section
    std::string_view value_name;  // shown in help ("PPS", "DURATION"); empty for flags
    std::string help;          // may be formatted from the spec's limits
    std::string default_text;  // shown in help and docs, formatted from the spec's own default; empty = none
    Kind kind = Kind::value;
    const ChoiceSet* choices = nullptr;  // enumerated values: CLI11 checks them with a transformer
    unsigned backends = kAllBackends;    // backends that honour it; others refuse it
    unsigned commands = unsigned(Command::run) | unsigned(Command::procedure);
    // Parses the option's values (one, or several for lists) into the draft; throws
    // UsageError naming the option and the value.
    void (*apply)(Draft&, const std::vector<std::string>&) = nullptr;
    // Writes the option's effective value into the JSON "spec" object (nullptr: not reported).
    void (*show)(const RunSpec&, nlohmann::json&) = nullptr;
    bool applies_to(Command c) const { return commands & unsigned(c); }
    std::string cli_names() const { return cli.empty() ? "--" + std::string(name) : std::string(cli); }
};

const std::vector<OptionDef>& option_table();
const OptionDef* find_option(std::string_view name);

// Option values as given (CLI or profile), by option name; lists keep their order.
using OptionValues = std::map<std::string, std::vector<std::string>, std::less<>>;
// Where each value came from ("profile.toml:7:8"), for errors.
using OptionOrigins = std::map<std::string, std::string, std::less<>>;
// A value's error, prefixed with where the value came from.
struct OptionError : UsageError {
    using UsageError::UsageError;
};

// Applies every given option in table order, resolves the dependent defaults, checks that
// each given option is honoured by the chosen backend, and validates the spec for `kind`
// (run, or one of the procedures). Throws UsageError.
// `streams`: a profile's [[stream]] tables (the command line's --stream values are in `given`;
// when given, they replace the profile's).
RunSpec build_run_spec(const OptionValues& given, Procedure kind = Procedure::run,
                       const OptionOrigins* origins = nullptr, const std::vector<StreamInput>* streams = nullptr);
// The reflect command's options (the draft's reflect fields and, for afxdp/dpdk, its spec).
Draft build_reflect_draft(const OptionValues& given);
// The serve command's options: where it listens, and a spec without ports or streams (each
// OTG configuration adds its own), its backend, tuning and run settings checked. Throws
// UsageError.
struct ServeSpec {
    ServeSettings server;
    RunSpec base;
};
ServeSpec build_serve_spec(const OptionValues& given);
// The impair command's options: a spec whose `impair` holds the path, checked (refused when the
// frame memory cannot hold what the delay and the rate ask, and the like). Throws UsageError.
RunSpec build_impair_spec(const OptionValues& given);
// `linerate connect`: the port, the listener's address and port, how each connection ends.
RunSpec build_connect_spec(const OptionValues& given);

// The streams of a spec as the JSON "spec" section gives them (the one stream without --stream).
nlohmann::json streams_json(const RunSpec& s);

// The JSON "spec" section: every option's effective value.
nlohmann::json spec_json(const RunSpec& s);

// The keys each option writes into the "spec" section ("--size": "frame.size"; "--rate":
// "rate" and "rate_pps"), in the table's order, so a reader of a report can name the option
// behind every value.
struct ShownOption {
    std::string option;  // as typed: "--catch-up"; "-- ARGS" for what follows --
    std::string group;   // "Ports", "Frames", "Run", ...
    std::vector<std::string> keys;
};
std::vector<ShownOption> shown_options();

// The option reference of a command as a Markdown table (docs/usage.md embeds it).
std::string options_markdown(Command c);

// The keys a stream definition takes: the frame and rate options it shares with the command
// line, and its own (stream_only_keys()), as a Markdown table (docs/streams.md embeds it).
std::string stream_keys_markdown();

// Resolves the frame of a draft: the addresses' defaults for the family, their families, and
// the size ("min": the kind's smallest; a distribution: its smallest size, predefined sizes
// below that raised, with a note in `notes`). `what` names the option for messages.
void resolve_frame(Draft& d, std::vector<std::string>& notes);
// The streams of a draft whose base options (and --stream texts) were applied.
std::vector<StreamSpec> build_streams(const Draft& base, const OptionOrigins* origins);

}  // namespace lr::spec
