// Sharing a core: when workers outnumber CPUs, a worker that keeps finding nothing to do
// (an empty RX poll, a TX ring that accepts nothing) yields once per 64 such polls, never
// per packet, so the thread it shares the core with still runs.
#pragma once
#include <cstdint>
#include <sched.h>

namespace lr::worker {

class IdleYield {
public:
    explicit IdleYield(bool on) : on_(on) {}
    // A poll that found nothing to do.
    void idle() {
        if (on_ && ++n_ >= 64) {
            n_ = 0;
            sched_yield();
        }
    }
    // A poll that did work: the count starts again.
    void busy() { n_ = 0; }

private:
    bool on_;
    uint32_t n_ = 0;
};

}  // namespace lr::worker
