// libFuzzer target: the safetensors header parser and tensor spans.
#include <cstdint>
#include <vector>

#include "runtime/model/safetensors.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  auto file = ft::SafetensorsFile::from_memory({data, size});
  if (!file.ok()) return 0;
  for (const auto& t : file->tensors()) {
    auto bytes = file->data(t.name);
    if (!bytes.ok()) continue;
    volatile uint8_t sink = 0;
    for (uint8_t b : *bytes) sink = sink ^ b;  // touch every byte the span claims
  }
  return 0;
}
