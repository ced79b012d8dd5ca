// The burst operations a backend supplies for one queue. The queue engines (tx_engine.h,
// rx_engine.h, rr_engine.h, reflect_engine.h) are written once over them, so every backend
// counts the same way by construction. Ops are concrete types and the engines templates:
// the hot loop is monomorphic, with no dispatch per packet or per burst.
#pragma once
#include <concepts>
#include <cstddef>
#include <cstdint>

namespace lr::worker {

// The most frames a burst takes (every backend's burst arrays; spec::kMaxBurst, --burst).
inline constexpr uint32_t kMaxBurstFrames = 512;

// Frames taken for sending by the last acquire(): frame i's data is at base[i] + offset, for
// i in [from, to) (an mbuf array and the data's offset in an mbuf, say).
struct FrameSpan {
    void* const* base = nullptr;
    size_t offset = 0;
    uint32_t from = 0, to = 0;
    // The data of the acquire's frame i (base[from + i] + offset).
    uint8_t* fresh_frame(uint32_t i) const { return static_cast<uint8_t*>(base[from + i]) + offset; }
};

struct Acquired {
    uint32_t got = 0;
    bool no_buffer = false;  // fewer free frames than asked (pool or UMEM exhausted)
    bool ring_full = false;  // the TX ring had less room than asked (back-pressure)
};

struct Transmitted {
    uint32_t taken = 0;    // frames the device took in this call
    bool partial = false;  // it took fewer than were offered (back-pressure)
};

// TX: frames are acquired ready-made (templates written once), stamped by the engine,
// handed to the device, and counted when the device confirms them.
//   held       frames acquired and stamped that the device has not taken yet (re-offered)
//   in device  taken, not yet confirmed (AF_XDP: submitted, not yet completed)
//   confirmed  what the device accepted: the only number reported as sent
template <class T>
concept TxQueueOps = requires(T o, const T c, uint32_t n) {
    { o.reclaim() } -> std::same_as<void>;                // collect confirmations (completions)
    { c.room(n) } -> std::convertible_to<uint32_t>;       // new frames a burst of n may take
    { o.acquire(n) } -> std::same_as<Acquired>;
    { c.fresh() } -> std::same_as<FrameSpan>;             // the frames of the last acquire()
    { o.transmit() } -> std::same_as<Transmitted>;        // offer held frames to the device
    { c.issued() } -> std::convertible_to<uint64_t>;      // confirmed + in device + held
    { c.held() } -> std::convertible_to<uint64_t>;
    { c.confirmed() } -> std::convertible_to<uint64_t>;
    { c.errors() } -> std::convertible_to<uint64_t>;      // transient send errors
    { c.failed() } -> std::convertible_to<bool>;          // a non-transient error ended sending
    { o.finish() } -> std::same_as<void>;                 // after stop: bounded wait for confirmations
    { o.drop_held() } -> std::same_as<void>;              // return held frames to their pool
    // Queues that carry streams (worker/tx_streams_engine.h) size each frame and tag it with
    // its template, and count the bytes of what the device confirmed.
    { o.set_frame(n, uint16_t{}, n) } -> std::same_as<void>;  // fresh frame n: length (no FCS), tag
    { o.avail(n) } -> std::convertible_to<uint32_t>;  // at most n frames acquire() surely takes now
    { c.confirmed_bytes() } -> std::convertible_to<uint64_t>;  // FCS included
};

// RX: a burst of received frames, looked at in place, then released.
template <class T>
concept RxQueueOps = requires(T o, const T c, uint32_t i) {
    { o.receive(i) } -> std::convertible_to<uint32_t>;    // up to i frames; they stay valid until release()
    { c.data(i) } -> std::convertible_to<const uint8_t*>;
    { c.len(i) } -> std::convertible_to<uint32_t>;        // bytes at data(i) (first segment)
    { c.wire_bytes(i) } -> std::convertible_to<uint64_t>; // the frame on the wire incl. FCS
    { c.csum_verified(i) } -> std::convertible_to<bool>;  // the device verified its L4 checksum
    { o.release() } -> std::same_as<void>;
    { o.idle() } -> std::same_as<void>;                   // nothing arrived: wake the kernel if it asks
};

// Queue operations that can take the next burst while they still hold the current one: its
// frames then follow the current burst's (frames [n, n + m) of a current burst of n), and
// release() frees the current burst and makes them the current one ([0, m)). A receiver that
// measures its frames takes the next burst before it measures this one, so that the next
// burst's first frames are fetched while this one's last are measured, instead of after.
// (burst_time_ns(), where the operations have it: the time of the burst the last receive() or
// receive_ahead() brought.)
template <class Ops>
concept HasLookahead = requires(Ops o) { { o.receive_ahead(0u) } -> std::convertible_to<uint32_t>; };

// Queue operations that can ask for a frame's data without reading its buffer header first,
// where the data usually lies (a hint: a wrong guess costs a useless fetch, nothing else).
template <class Ops>
concept HasDataHint = requires(const Ops c) { c.prefetch_data(0u); };

// Reflect: receive, keep the frames to send back (rewritten in place), send them from the
// same buffers, and count what the device accepted.
template <class T>
concept ReflectQueueOps = requires(T o, const T c, uint32_t i) {
    { o.reclaim() } -> std::same_as<void>;                // collect confirmations, recycle buffers
    { o.receive(i) } -> std::convertible_to<uint32_t>;
    { c.data(i) } -> std::convertible_to<uint8_t*>;       // writable: the frame is rewritten in place
    { c.len(i) } -> std::convertible_to<uint32_t>;
    { c.wire_bytes(i) } -> std::convertible_to<uint64_t>;
    { o.keep(i) } -> std::same_as<void>;                  // send frame i back
    { o.send_back() } -> std::same_as<Transmitted>;       // send the kept frames, free the rest
    { o.idle() } -> std::same_as<void>;
    { c.confirmed() } -> std::convertible_to<uint64_t>;   // sent back, as the device confirmed
    { c.confirmed_bytes() } -> std::convertible_to<uint64_t>;
    { c.dropped() } -> std::convertible_to<uint64_t>;     // kept frames the device never accepted
    { c.errors() } -> std::convertible_to<uint64_t>;
    { o.finish() } -> std::same_as<void>;
};

}  // namespace lr::worker
