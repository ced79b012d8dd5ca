// FrameComposer's AVX-512 path (frame_composer.h, wide()): compiled for AVX-512 on its own and
// called once per burst, only where the CPU has the instructions.
#include <immintrin.h>

#include "util/avx512.h"
#include "worker/frame_composer.h"

namespace lr::worker {

LR_AVX512_TARGET void FrameComposer::write_burst_wide(const FrameSpan& span, const PlannedFrame* plan, uint32_t n) {
    const __mmask64 copy = copy_len_ == 64 ? ~__mmask64{0} : (__mmask64{1} << copy_len_) - 1;
    for (uint32_t i = 0; i < std::min(n, kWriteAhead); ++i) prefetch_for_write(span.fresh_frame(i));
    for (uint32_t i = 0; i < n; ++i) {
        if (i + kWriteAhead < n) prefetch_for_write(span.fresh_frame(i + kWriteAhead));
        const PlannedFrame& pf = plan[i];
        const Tmpl& t = t_[pf.tmpl];
        if (pf.len != t.len || !t.stamp_lanes) [[unlikely]] {  // growing lengths, another layout: as the other path
            write(span.fresh_frame(i), pf);
            continue;
        }
        uint64_t w0, w1;
        stamp_words(t, seqs_[t.flow]++, 0, w0, w1);
        // The template's 64 bytes (packed: 64-byte aligned), the stamp's four 4-byte words
        // expanded into its lanes, then the frame's copy_len bytes in one store.
        const __m512i bytes = _mm512_load_si512(t.bytes);
        const __m512i stamp = _mm512_castsi128_si512(_mm_set_epi64x(static_cast<int64_t>(w1), static_cast<int64_t>(w0)));
        _mm512_mask_storeu_epi8(span.fresh_frame(i), copy, _mm512_mask_expand_epi32(bytes, t.stamp_lanes, stamp));
    }
}

}  // namespace lr::worker
