// libFuzzer target: a structured-output JSON Schema (it comes from the
// request, so from the network) compiled, then the bytes after the first NUL
// fed to its recognizer as an answer. Compiling either succeeds or refuses;
// the recognizer either takes a byte or refuses it.
#include <cstdint>
#include <cstring>
#include <string_view>

#include "runtime/engine/json_schema.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const void* nul = std::memchr(data, 0, size);
  const size_t schema_size = nul ? static_cast<const uint8_t*>(nul) - data : size;
  auto schema = ft::JsonSchema::compile({reinterpret_cast<const char*>(data), schema_size});
  if (!schema.ok()) return 0;
  ft::SchemaState state((*schema).get());
  for (size_t i = schema_size + 1; i < size; ++i) {
    (void)ft::string_spot(state);
    (void)ft::string_room(state);
    if (!state.feed(data[i])) break;
  }
  (void)state.complete();
  return 0;
}
