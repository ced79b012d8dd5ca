#include "engine/replay_load.h"

#include <algorithm>
#include <fmt/format.h>

#include "packet/sig_frame.h"
#include "stream/pcap_source.h"

namespace lr::engine {

void load_replays(spec::RunSpec& spec) {
    const unsigned limit = spec.backend == spec::BackendKind::afxdp ? spec::kAfxdpMaxFrame : packet::kMaxFrame;
    for (auto& st : spec.streams) {
        if (!st.replay || st.replay->frames) continue;
        auto f = std::make_shared<const stream::PcapFrames>(stream::load_pcap(st.replay->path, limit));
        auto& r = *st.replay;
        r.max_frame = 0;
        auto level = packet::SigLevel::seq_ts;
        r.unsigned_records = 0;
        for (const auto& rec : f->records) {
            r.max_frame = std::max<unsigned>(r.max_frame, static_cast<unsigned>(rec.bytes.size()) + packet::kFcsLen);
            auto copy = rec.bytes;
            const auto l = packet::sign_frame(copy.data(), copy.size(), 0, 0).level;
            if (l == packet::SigLevel::none) ++r.unsigned_records;
            else level = std::min(level, l);
        }
        r.sig_level = r.unsigned_records == f->records.size() ? packet::SigLevel::none : level;
        constexpr const char* kRoom = "UDP over IPv4 or IPv6 with 12 bytes of payload or more";
        if (spec.signature && r.sig_level == packet::SigLevel::none)
            spec.notes.push_back(fmt::format("stream {}: no record of {} can carry a signature ({}): its frames are "
                                             "sent as recorded, counted, not measured",
                                             st.name, r.path, kRoom));
        else if (spec.signature && r.unsigned_records)
            spec.notes.push_back(fmt::format("stream {}: {} of the {} records of {} cannot carry a signature ({}): "
                                             "they are sent as recorded and counted (unsigned_sent), not measured; "
                                             "received, lost and latency are the signed frames'",
                                             st.name, r.unsigned_records, f->records.size(), r.path, kRoom));
        r.frames = std::move(f);
    }
}

}  // namespace lr::engine
