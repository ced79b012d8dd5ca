// `linerate connect` in the outputs: a live line per queue each interval (connections per
// second in it), the summary when the run ends (how every handshake ended, its latency), and
// the report's "connect" section (JSON).
#pragma once
#include <cstdio>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "result/result.h"

namespace lr::report {

// The queues' counts now, against those of the interval before (`prev`, updated), over
// `seconds`: a line per queue (the console's lines, the live table's).
std::vector<std::string> connect_live_lines(const std::vector<result::ConnectLive>& now,
                                            std::vector<result::ConnectLive>& prev, double seconds);
void print_connect_live(std::FILE* out, const std::vector<result::ConnectLive>& now,
                        std::vector<result::ConnectLive>& prev, double seconds);
void print_connect_summary(std::FILE* out, const result::TrialResult& r);
nlohmann::json connect_json(const std::vector<result::ConnectResult>& v);

}  // namespace lr::report
