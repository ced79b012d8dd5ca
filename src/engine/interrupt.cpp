#include "engine/interrupt.h"

#include <atomic>
#include <csignal>

namespace lr::engine {
namespace {

std::atomic<bool> g_interrupt{false};
static_assert(std::atomic<bool>::is_always_lock_free);

void on_signal(int) { request_interrupt(); }

}  // namespace

void request_interrupt() noexcept { g_interrupt.store(true, std::memory_order_relaxed); }
bool interrupt_requested() noexcept { return g_interrupt.load(std::memory_order_relaxed); }
void clear_interrupt() noexcept { g_interrupt.store(false, std::memory_order_relaxed); }

void install_interrupt_handlers() {
    std::signal(SIGINT, on_signal);
    std::signal(SIGTERM, on_signal);
}

}  // namespace lr::engine
