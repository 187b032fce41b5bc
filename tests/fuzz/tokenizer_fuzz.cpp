// libFuzzer target: text from a request encoded by a real tokenizer (with and
// without special tokens parsed), the ids decoded back, and the input's bytes
// read as ids and decoded (ids past the vocabulary must be errors). The
// tokenizer is FT_FUZZ_TOKENIZER (a tokenizer.json or its folder), by default
// build/models/tokenizer.json, which tools/setup.sh writes (Qwen3's).
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <vector>

#include "runtime/text/tokenizer.h"

namespace {
const ft::Tokenizer& tokenizer() {
  static const std::optional<ft::Tokenizer> t = [] {
    const char* path = std::getenv("FT_FUZZ_TOKENIZER");
    auto r = ft::Tokenizer::from_hf_path(path ? path : "build/models/tokenizer.json");
    if (!r.ok()) {
      std::fprintf(stderr, "tokenizer_fuzz: %s (set FT_FUZZ_TOKENIZER)\n", r.status().to_string().c_str());
      std::abort();
    }
    return std::optional<ft::Tokenizer>(std::move(*r));
  }();
  return *t;
}
}  // namespace

// Loaded before the first input, so its time (seconds under ASan) counts
// against no input's timeout.
extern "C" int LLVMFuzzerInitialize(int*, char***) {
  (void)tokenizer();
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const ft::Tokenizer& tok = tokenizer();
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  for (bool special : {true, false}) {
    auto ids = tok.encode(text, {.parse_special = special, .add_special = special});
    if (!ids.ok()) continue;
    for (int32_t id : *ids)
      if (id < 0 || id >= tok.vocab_size()) __builtin_trap();  // encode gave an id outside the vocabulary
    (void)tok.decode(*ids, {.skip_special = !special});
  }
  std::vector<int32_t> raw(size / 4);
  if (!raw.empty()) std::memcpy(raw.data(), data, raw.size() * 4);
  (void)tok.decode(raw, {.continuation = true});
  return 0;
}
