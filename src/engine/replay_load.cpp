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
        for (const auto& rec : f->records) {
            r.max_frame = std::max<unsigned>(r.max_frame, static_cast<unsigned>(rec.bytes.size()) + packet::kFcsLen);
            auto copy = rec.bytes;
            level = std::min(level, packet::sign_frame(copy.data(), copy.size(), 0, 0).level);
        }
        r.sig_level = level;
        if (spec.signature && level == packet::SigLevel::none)
            spec.notes.push_back(fmt::format(
                "stream {}: not every frame of {} can carry a signature (UDP over IPv4 or IPv6 with 12 bytes of "
                "payload or more): its frames are counted, not measured",
                st.name, r.path));
        r.frames = std::move(f);
    }
}

}  // namespace lr::engine
