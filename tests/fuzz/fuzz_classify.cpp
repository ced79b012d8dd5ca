// libFuzzer target: the receive-side parsers must never read or write outside the frame,
// whatever arrives. Run with ASan and UBSan (tests/fuzz/meson.build).
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>

#include "packet/signature.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    // Exact-size copies so any overread is caught; the first two bytes pick nonce/streams.
    const uint16_t nonce = size >= 2 ? static_cast<uint16_t>(data[0] << 8 | data[1]) : 0;
    std::unique_ptr<uint8_t[]> buf(new uint8_t[size ? size : 1]);
    if (size) std::memcpy(buf.get(), data, size);
    const auto r = lr::packet::sig_classify(buf.get(), size, nonce, 1 + (size % 64));
    if (r.cls == lr::packet::FrameClass::ours && r.stream >= 1 + (size % 64)) __builtin_trap();
    lr::packet::reflect_swap(buf.get(), size);
    return 0;
}
