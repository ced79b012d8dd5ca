// SIGINT/SIGTERM: the signal handler raises a flag that the control thread polls. It ends the
// current trial early (drained and reported) and the session runs no further trial. A new
// session starts with the flag cleared, so nothing sticks from one session to the next.
#pragma once

namespace lr::engine {

void request_interrupt() noexcept;  // async-signal-safe
bool interrupt_requested() noexcept;
void clear_interrupt() noexcept;
// Installs the SIGINT and SIGTERM handlers that call request_interrupt().
void install_interrupt_handlers();

}  // namespace lr::engine
