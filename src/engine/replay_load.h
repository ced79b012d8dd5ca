// Captures that streams replay (pcap=FILE) are read and checked when the session opens, before
// any port is touched: a bad record is refused before anything is sent.
#pragma once
#include "spec/run_spec.h"

namespace lr::engine {

// Reads every replayed capture of `spec` (once: a capture already read is kept), with the
// largest frame the backend sends as its limit, and notes what its frames carry: signed when
// every record has room for the signature. Throws UsageError naming the file and record.
void load_replays(spec::RunSpec& spec);

}  // namespace lr::engine
