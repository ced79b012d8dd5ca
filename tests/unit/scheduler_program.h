// A program of stream shares for the scheduler alone (worker/stream_scheduler.h): templates
// are indexes, nothing is written.
#pragma once
#include <memory>
#include <vector>

#include "worker/stream_scheduler.h"

namespace lr::test_support {

struct SchedulerProgram {
    lr::worker::TxProgram p;
    SchedulerProgram() { p.progress = std::make_shared<std::vector<lr::worker::StreamProgress>>(4); }
    lr::worker::StreamShare& add(uint32_t stream, uint32_t flows = 1) {
        lr::worker::StreamShare sh;
        sh.stream = stream;
        sh.flows = flows;
        for (uint32_t f = 0; f < flows; ++f) {
            sh.templates.push_back(static_cast<uint32_t>(p.templates.size()));
            p.templates.emplace_back();
        }
        sh.sizes = {64};
        sh.size_row = {0};
        p.shares.push_back(sh);
        (*p.progress)[stream].shares = 1;
        return p.shares.back();
    }
};

// The frames due at `now`, up to `room`.
inline std::vector<lr::worker::PlannedFrame> due_frames(lr::worker::StreamScheduler& s, uint64_t now, uint32_t room) {
    std::vector<lr::worker::PlannedFrame> out(room);
    out.resize(s.next(now, room, out.data()));
    return out;
}

}  // namespace lr::test_support
