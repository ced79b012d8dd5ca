// What one TX queue sends when it carries streams (several, or one whose frames vary in
// size, start late, come in bursts or from a pcap file): its frame templates and its share of
// each stream, fixed by the planner before the trial. The scheduler (worker/stream_scheduler.h)
// decides which stream's frame goes next; the composer (worker/frame_composer.h) writes it.
#pragma once
#include <atomic>
#include <cstdint>
#include <memory>
#include <vector>

#include "packet/frame.h"
#include "packet/signature.h"
#include "worker/pacer.h"

namespace lr::worker {

// A frame as built for one flow of a stream (signed templates: sequence and timestamp zero).
struct FrameTemplate {
    std::vector<uint8_t> bytes;  // without FCS, zero-padded to at least TxProgram::copy_len
    uint16_t len = 0;            // the frame's length (without FCS)
    uint16_t sig_id = 0;         // the signature's stream id of this flow
    packet::SigLayout layout;    // level none: sent unsigned
};

// A stream's share of the queue.
struct StreamShare {
    uint32_t stream = 0;  // index in the trial's mix
    // Templates: `rows` signature layouts x `flows` flows, templates[row * flows + flow] indexes
    // TxProgram::templates. A replayed stream has one row of one template per record.
    std::vector<uint32_t> templates;
    uint32_t flows = 1;
    // Sizes (FCS included), their template row, and the order they are sent in: `period` lists
    // a size index per frame of one period (every size exactly as often as its weight); empty
    // with one size, or with random sizes (drawn from `seed`).
    std::vector<uint16_t> sizes;
    std::vector<uint16_t> size_row;
    std::vector<uint16_t> period;
    bool random_sizes = false;
    uint64_t seed = 1;
    PacingPlan pacing;       // pps 0: unpaced, takes `weight` of what the paced shares leave
    double weight = 0;
    uint64_t count = 0;      // frames this queue sends of the stream (0: until the trial ends)
    uint32_t burst_frames = 0;  // multi-burst: frames per burst on this queue...
    uint64_t burst_gap_ns = 0;  // ...and the gap between bursts
    uint64_t delay_ns = 0;      // starts this long after the trial (after its predecessor, with `after`)
    int32_t after = -1;         // waits until this stream (mix index) is done on every queue
    bool replay = false;        // templates are a pcap file's records, sent in order
    uint64_t replay_loops = 0;  // times through the file (0: until the end of the trial)
};

// Written by the workers once per stream share that ends; read by the workers whose streams
// wait for it (`after`). One per stream of the mix, per trial.
struct StreamProgress {
    alignas(64) std::atomic<uint32_t> done_shares{0};
    uint32_t shares = 0;  // queues that carry the stream
};

struct TxProgram {
    std::vector<FrameTemplate> templates;
    std::vector<StreamShare> shares;
    uint32_t copy_len = 64;  // bytes of a template written into every frame (the same for all)
    std::shared_ptr<std::vector<StreamProgress>> progress;  // the trial's, shared by its workers
    std::vector<std::shared_ptr<std::vector<double>>> gaps;  // replays' recorded gaps (PacingPlan::gaps)
};

// The length (without FCS) of every frame `p` sends, or 0 when they differ: a backend whose
// buffers keep their length from one use to the next sizes them once, not per frame.
inline uint16_t one_frame_len(const TxProgram& p) {
    uint32_t len = 0;
    auto same = [&len](uint32_t l) {
        if (len == 0) len = l;
        return l == len;
    };
    for (const auto& s : p.shares) {
        if (s.replay) {
            for (const uint32_t t : s.templates)
                if (!same(p.templates[t].len)) return 0;
        } else {
            for (const uint16_t z : s.sizes)
                if (!same(z - packet::kFcsLen)) return 0;
        }
    }
    return static_cast<uint16_t>(len);
}

// Per stream share, handed over when the worker ends: what it sent.
struct ShareSent {
    uint64_t frames = 0, bytes = 0;   // confirmed by the device, FCS included
    uint64_t signed_frames = 0;       // of those, signed (a replay's records without room are not)
    std::vector<uint64_t> per_size;   // frames per size index
    std::vector<uint64_t> per_flow;   // frames per flow
};

}  // namespace lr::worker
