// libFuzzer target: the OpenAI request bodies ft-serve parses from the
// network (chat and completions, tokenize, detokenize, apply-template). A
// body either parses or gets an error; ASan turns any bad read into a crash.
#include <cstdint>
#include <string_view>

#include "runtime/server/protocol.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view body(reinterpret_cast<const char*>(data), size);
  (void)ft::server::parse_generation_request(ft::server::ApiKind::kChat, body);
  (void)ft::server::parse_generation_request(ft::server::ApiKind::kCompletion, body);
  (void)ft::server::parse_tokenize_request(body);
  (void)ft::server::parse_detokenize_request(body);
  (void)ft::server::parse_apply_template_request(body);
  return 0;
}
