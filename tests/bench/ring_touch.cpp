// Benchmark (not a test): what reading a frame another core has just written costs a receiver,
// apart from any measuring code. The bound it gives is the one signed RX meets on a net_ring
// pair (docs/benchmarks.md, "Receive per core").
//
//     build/tests/bench/ring_touch [--rounds 5] [--seconds 2]
//
// One producer (lcore 1) takes 64-byte frames, written once, from a mempool and enqueues them in
// bursts of 64 (linerate's DPDK burst) on a single-producer/single-consumer ring of 1024, as
// net_ring's transmit does; one consumer (the main lcore) dequeues them, reads each frame's
// length from its mbuf header and frees them as linerate's receiver does (dpdk::free_received:
// without reading the header's second line), so that `plain` is linerate's plain receiver less
// ethdev and its loop. The modes add one thing each:
//   plain       nothing more (linerate's --no-signature on both sides);
//   read        the consumer also loads 16 bytes of each frame's payload (frames not rewritten);
//   stamp       the producer writes 16 bytes into each frame (sequence and clock, as the signer
//               does) and the consumer does not read them;
//   stamp+read  both: each frame's payload line is written by one core and read by the other,
//               the least any receiver that checks a signature pays.
// The consumer prefetches 8 frames ahead, as linerate's receive loop does. The share of the
// producer's bursts that found the ring full says who set the pace: near 100 % the consumer
// (the figure is its ceiling), near 0 the producer (the figure is only a lower bound).
// Each round runs every mode once, alternating; the medians are printed, with the ratio to plain.
#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include <rte_cycles.h>
#include <rte_eal.h>
#include <rte_errno.h>
#include <rte_launch.h>
#include <rte_lcore.h>
#include <rte_mbuf.h>
#include <rte_mempool.h>
#include <rte_prefetch.h>
#include <rte_ring.h>

#include "backend/dpdk/dpdk_queues.h"

namespace {

constexpr unsigned kBurst = 64, kRingSize = 1024, kPoolSize = 8191, kFrameLen = 60, kStampOffset = 42;
constexpr unsigned kPrefetchAhead = 8;

enum Mode : unsigned { kPlain = 0, kRead = 1, kStamp = 2, kStampRead = 3 };
const char* const kModeNames[] = {"plain", "read", "stamp", "stamp+read"};
volatile uint64_t g_sink;  // what the reads summed: kept, so the compiler keeps the reads

struct Shared {
    rte_ring* ring = nullptr;
    rte_mempool* pool = nullptr;
    bool stamp = false;
    std::atomic<bool> stop{false};
    uint64_t bursts = 0, ring_full = 0;  // written by the producer, read after it ends
};

int produce(void* arg) {
    auto& s = *static_cast<Shared*>(arg);
    rte_mbuf* bufs[kBurst];
    uint64_t seq = 0, bursts = 0, full = 0;
    while (!s.stop.load(std::memory_order_relaxed)) {
        if (rte_mempool_get_bulk(s.pool, reinterpret_cast<void**>(bufs), kBurst) != 0) continue;
        if (s.stamp) {
            const uint64_t now = rte_rdtsc();
            for (unsigned i = 0; i < kBurst; ++i) {
                uint8_t* p = rte_pktmbuf_mtod(bufs[i], uint8_t*) + kStampOffset;
                const uint64_t words[2] = {seq++, now};
                std::memcpy(p, words, sizeof words);
            }
        }
        unsigned sent = 0;
        bool found_full = false;
        while (sent < kBurst && !s.stop.load(std::memory_order_relaxed)) {
            const unsigned k = rte_ring_sp_enqueue_burst(s.ring, reinterpret_cast<void**>(bufs + sent),
                                                         kBurst - sent, nullptr);
            found_full |= sent + k < kBurst;
            sent += k;
        }
        if (sent < kBurst) rte_mempool_put_bulk(s.pool, reinterpret_cast<void**>(bufs + sent), kBurst - sent);
        ++bursts;
        full += found_full;
    }
    s.bursts = bursts;
    s.ring_full = full;
    return 0;
}

struct Result {
    double mpps = 0;
    double full_share = 0;  // the producer's bursts that found the ring full
};

Result run_mode(Mode mode, double seconds, unsigned index) {
    Shared s;
    const std::string ring_name = "touch_r" + std::to_string(index), pool_name = "touch_p" + std::to_string(index);
    s.ring = rte_ring_create(ring_name.c_str(), kRingSize, SOCKET_ID_ANY, RING_F_SP_ENQ | RING_F_SC_DEQ);
    s.pool = rte_pktmbuf_pool_create(pool_name.c_str(), kPoolSize, 256, 0, RTE_PKTMBUF_HEADROOM + 128, SOCKET_ID_ANY);
    if (!s.ring || !s.pool) {
        std::fprintf(stderr, "ring_touch: couldn't create the ring or the mempool: %s\n", rte_strerror(rte_errno));
        std::exit(2);
    }
    // Write every frame once, as linerate writes its sending pool's templates.
    rte_mempool_obj_iter(
        s.pool,
        [](rte_mempool*, void*, void* obj, unsigned) {
            auto* m = static_cast<rte_mbuf*>(obj);
            std::memset(rte_pktmbuf_mtod(m, uint8_t*), 0x5a, kFrameLen);
            m->data_len = kFrameLen;
            m->pkt_len = kFrameLen;
        },
        nullptr);
    s.stamp = mode == kStamp || mode == kStampRead;
    const bool read = mode == kRead || mode == kStampRead;

    rte_eal_remote_launch(produce, &s, rte_get_next_lcore(rte_lcore_id(), 1, 0));
    rte_mbuf* bufs[kBurst];
    uint64_t received = 0, bytes = 0, sink = 0;
    const uint64_t hz = rte_get_tsc_hz(), start = rte_rdtsc(), end = start + static_cast<uint64_t>(seconds * hz);
    while (rte_rdtsc() < end) {
        const unsigned n = rte_ring_sc_dequeue_burst(s.ring, reinterpret_cast<void**>(bufs), kBurst, nullptr);
        if (read)
            for (unsigned i = 0; i < n && i < kPrefetchAhead; ++i)
                rte_prefetch0(rte_pktmbuf_mtod(bufs[i], uint8_t*) + kStampOffset);
        for (unsigned i = 0; i < n; ++i) {
            bytes += rte_pktmbuf_pkt_len(bufs[i]);
            if (read) {
                if (i + kPrefetchAhead < n)
                    rte_prefetch0(rte_pktmbuf_mtod(bufs[i + kPrefetchAhead], uint8_t*) + kStampOffset);
                uint64_t words[2];
                std::memcpy(words, rte_pktmbuf_mtod(bufs[i], uint8_t*) + kStampOffset, sizeof words);
                sink += words[0] ^ words[1];
            }
        }
        lr::dpdk::free_received(bufs, n);
        received += n;
    }
    const double elapsed = static_cast<double>(rte_rdtsc() - start) / static_cast<double>(hz);
    s.stop.store(true, std::memory_order_relaxed);
    rte_eal_mp_wait_lcore();
    // Drain what the producer left, so the pool is whole before it is freed.
    unsigned n;
    while ((n = rte_ring_sc_dequeue_burst(s.ring, reinterpret_cast<void**>(bufs), kBurst, nullptr)) > 0)
        rte_pktmbuf_free_bulk(bufs, n);
    rte_ring_free(s.ring);
    rte_mempool_free(s.pool);
    g_sink = sink;
    if (bytes != received * kFrameLen) std::fprintf(stderr, "ring_touch: %lu bytes for %lu frames\n", bytes, received);
    return {static_cast<double>(received) / elapsed / 1e6,
            s.bursts ? static_cast<double>(s.ring_full) / static_cast<double>(s.bursts) : 0.0};
}

double median(std::vector<double> v) {
    std::sort(v.begin(), v.end());
    const size_t m = v.size() / 2;
    return v.size() % 2 ? v[m] : (v[m - 1] + v[m]) / 2;
}

}  // namespace

int main(int argc, char** argv) {
    unsigned rounds = 5;
    double seconds = 2;
    std::vector<char*> eal = {argv[0], const_cast<char*>("--no-pci"), const_cast<char*>("--lcores=0@0,1@1"),
                              const_cast<char*>("--in-memory"), const_cast<char*>("--no-telemetry"),
                              const_cast<char*>("--log-level=error")};
    for (int i = 1; i < argc; ++i) {
        const std::string a = argv[i];
        if ((a == "--rounds" || a == "--seconds") && i + 1 < argc) {
            char* endp = nullptr;
            const double v = std::strtod(argv[++i], &endp);
            if (*endp || v <= 0) {
                std::fprintf(stderr, "ring_touch: %s wants a positive number, not \"%s\"\n", a.c_str(), argv[i]);
                return 2;
            }
            if (a == "--rounds")
                rounds = static_cast<unsigned>(v);
            else
                seconds = v;
        } else {
            std::fprintf(stderr, "usage: ring_touch [--rounds N] [--seconds S]\n");
            return 2;
        }
    }
    if (rte_eal_init(static_cast<int>(eal.size()), eal.data()) < 0) {
        std::fprintf(stderr, "ring_touch: couldn't start DPDK's EAL: %s\n", rte_strerror(rte_errno));
        return 2;
    }
    if (rte_lcore_count() < 2) {
        std::fprintf(stderr, "ring_touch: needs two lcores\n");
        return 2;
    }
    std::vector<double> mpps[4];
    std::vector<double> full[4];
    unsigned index = 0;
    for (unsigned r = 0; r < rounds; ++r) {
        std::printf("round %u:", r + 1);
        for (unsigned m = 0; m < 4; ++m) {
            const Result res = run_mode(static_cast<Mode>(m), seconds, index++);
            mpps[m].push_back(res.mpps);
            full[m].push_back(res.full_share);
            std::printf("  %s %.2f (%.0f %% full)", kModeNames[m], res.mpps, 100 * res.full_share);
        }
        std::printf("\n");
        std::fflush(stdout);
    }
    const double plain = median(mpps[kPlain]);
    std::printf("\nmedians of %u rounds of %.1f s (Mpps, one consumer core):\n", rounds, seconds);
    for (unsigned m = 0; m < 4; ++m)
        std::printf("  %-11s %7.2f  %.2fx plain  the producer found the ring full in %.0f %% of its bursts\n",
                    kModeNames[m], median(mpps[m]), median(mpps[m]) / plain, 100 * median(full[m]));
    rte_eal_cleanup();
    return 0;
}
