// The AVX-512 subsets the data path's vector code uses (the receive lanes, stats/run_lane.cpp;
// the streams composer, worker/frame_composer_wide.cpp): one check of the CPU, one target for
// the functions that use them. Code so compiled runs only where cpu_has_avx512() holds.
#pragma once

#define LR_AVX512_TARGET __attribute__((target("avx512f,avx512bw,avx512dq,avx512cd,avx512vl")))

namespace lr::util {

// Whether this CPU has AVX-512 F, BW, DQ, CD and VL.
inline bool cpu_has_avx512() {
    __builtin_cpu_init();
    return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
           __builtin_cpu_supports("avx512dq") && __builtin_cpu_supports("avx512cd") &&
           __builtin_cpu_supports("avx512vl");
}

}  // namespace lr::util
