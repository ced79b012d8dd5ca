#include "worker/frame_composer.h"

#include "util/avx512.h"

#include <algorithm>
#include <cstring>
#include <map>

namespace lr::worker {

FrameComposer::FrameComposer(const TxProgram& p, bool sign, bool wide) : copy_len_(p.copy_len) {
    seq_ts_layout_.level = packet::SigLevel::seq_ts;
    std::map<uint16_t, uint32_t> slot_of;  // signature stream id -> flow slot
    t_.reserve(p.templates.size());
    const size_t stride = (size_t{copy_len_} + 63) / 64 * 64;
    uint8_t* packed = nullptr;
    if (stride * p.templates.size() <= kPackedBytes) {
        bytes_.assign(stride * p.templates.size() + 63, 0);
        packed = bytes_.data() + (-reinterpret_cast<uintptr_t>(bytes_.data()) & 63);
    }
    for (const auto& ft : p.templates) {
        Tmpl t;
        t.bytes = ft.bytes.data();
        if (packed) {  // the bytes every frame copies (FrameTemplate::bytes holds at least copy_len)
            std::memcpy(packed, ft.bytes.data(), copy_len_);
            t.bytes = packed;
            packed += stride;
        }
        t.layout = ft.layout;
        t.len = ft.len;
        t.v6 = ft.layout.v6;
        t.sign = sign && ft.layout.level != packet::SigLevel::none;
        t.ts = ft.layout.level == packet::SigLevel::seq_ts;
        t.l4csum = !t.sign && ft.layout.l4_off != 0;
        // The 16 bytes stamp16 writes: checksum, magic, sequence, timestamp, side by side
        // (the magic from the template, where sig_init put it).
        const auto& l = ft.layout;
        const uint8_t* c16 = ft.bytes.data() + l.csum_off;
        t.udp16 = t.sign && !l.tcp && l.level == packet::SigLevel::seq_ts && l.seq_bits == 48 &&
                  l.seq_off == l.csum_off + 4 && l.ts_off == l.seq_off + 6 && ft.bytes.size() >= l.csum_off + 16u &&
                  (c16[2] << 8 | c16[3]) == packet::kSigMagic;
        const auto [it, fresh] = slot_of.emplace(ft.sig_id, static_cast<uint32_t>(slot_of.size()));
        (void)fresh;
        t.flow = it->second;
        if (t.sign) {
            const uint8_t* c = ft.bytes.data() + ft.layout.csum_off;
            t.base = static_cast<uint16_t>(~(c[0] << 8 | c[1]));  // the template's L4 words
        }
        if (t.udp16 && l.csum_off % 4 == 0 && l.csum_off + 16u <= copy_len_)
            t.stamp_lanes = static_cast<uint16_t>(0xfu << (l.csum_off / 4));
        t_.push_back(t);
    }
    seqs_.assign(slot_of.size(), 0);
    wide_ = wide && packed && copy_len_ <= 64 && !t_.empty() && util::cpu_has_avx512() &&
            std::any_of(t_.begin(), t_.end(), [](const Tmpl& t) { return t.stamp_lanes != 0; });
}

}  // namespace lr::worker
