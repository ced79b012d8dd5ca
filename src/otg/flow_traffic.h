// An OTG flow's traffic: how big its frames are (flows[i].size), how fast and how many it
// sends (rate, duration), what it measures (metrics) and its payload, into its OtgFlow.
#pragma once
#include "otg/config.h"
#include "otg/json_fields.h"

namespace lr::otg {

// flows[i].size: the stream's SizeSpec (built by linerate's own size parser: its limits
// apply). A size below the smallest frame of `frame`'s kind is refused when given, and raised
// to it with a warning when it is the model's default (64) or in a predefined mix.
void read_size(Reader& r, const Field& size, const packet::FrameSpec& frame, OtgFlow& flow,
               std::vector<std::string>& warnings);

// flows[i].rate: packets/s, a bit rate (read at L1; true returned) or a percentage.
bool read_rate(Reader& r, const Field& rate, OtgFlow& flow);

// flows[i].duration: a count, bursts (endless when bursts is 0), fixed seconds or continuous,
// with a start delay.
void read_duration(Reader& r, const Field& duration, OtgFlow& flow);

// flows[i].metrics and flows[i].payload (only the model's default payload: linerate writes
// its signature there).
void read_metrics(Reader& r, const Field& metrics, OtgFlow& flow);
void read_payload(Reader& r, const Field& payload);

}  // namespace lr::otg
