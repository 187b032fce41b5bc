#include "runtime/text/pretokenizer.h"

#include <array>

#include "runtime/text/utf8.h"

#ifndef PCRE2_CODE_UNIT_WIDTH
#error "build with PCRE2_CODE_UNIT_WIDTH=8 (set by runtime/text/tokenizer.cmake)"
#endif
#include <pcre2.h>

namespace ft {
namespace {

std::string pcre2_message(int code) {
  std::array<PCRE2_UCHAR, 256> buffer{};
  pcre2_get_error_message(code, buffer.data(), buffer.size());
  return std::string(reinterpret_cast<const char*>(buffer.data()));
}

// Match data and a JIT stack per thread, made once: allocating them per call
// would cost more than matching a short piece. The default JIT stack (32 KiB)
// is too small for long runs of whitespace under `\s+(?!\S)`.
struct ThreadMatchState {
  pcre2_match_data* data = pcre2_match_data_create(1, nullptr);
  pcre2_jit_stack* stack = pcre2_jit_stack_create(32 * 1024, 8 * 1024 * 1024, nullptr);
  pcre2_match_context* context = pcre2_match_context_create(nullptr);

  ThreadMatchState() { pcre2_jit_stack_assign(context, nullptr, stack); }
  ~ThreadMatchState() {
    pcre2_match_context_free(context);
    pcre2_jit_stack_free(stack);
    pcre2_match_data_free(data);
  }
};

ThreadMatchState& thread_match_state() {
  thread_local ThreadMatchState state;
  return state;
}

size_t utf8_char_length(std::string_view s, size_t pos) {
  size_t next = pos;
  char32_t cp;
  return utf8_next(s, next, cp) ? next - pos : 1;
}

}  // namespace

class PreTokenizer::Pattern {
 public:
  static Result<std::unique_ptr<Pattern>> compile(const std::string& pattern) {
    int error = 0;
    PCRE2_SIZE offset = 0;
    pcre2_code* code = pcre2_compile(reinterpret_cast<PCRE2_SPTR>(pattern.data()), pattern.size(),
                                     PCRE2_UTF | PCRE2_UCP, &error, &offset, nullptr);
    if (code == nullptr) {
      return FT_ERROR(ErrorCode::kInvalidArgument, "pre-tokenizer regex does not compile at offset {}: {}",
                      offset, pcre2_message(error));
    }
    auto result = std::unique_ptr<Pattern>(new Pattern(code));
    // Without JIT (a PCRE2 built without it) matching still works, only slower.
    result->jit_ = pcre2_jit_compile(code, PCRE2_JIT_COMPLETE) == 0;
    return result;
  }

  ~Pattern() { pcre2_code_free(code_); }

  // Splits `text` into matches and the gaps between them.
  Status split(std::string_view text, const PieceFn& fn) const {
    ThreadMatchState& state = thread_match_state();
    const auto* subject = reinterpret_cast<PCRE2_SPTR>(text.data());
    size_t gap_start = 0;
    size_t pos = 0;
    while (pos < text.size()) {
      int rc = jit_ ? pcre2_jit_match(code_, subject, text.size(), pos, 0, state.data, state.context)
                    : pcre2_match(code_, subject, text.size(), pos, PCRE2_NO_UTF_CHECK, state.data,
                                  state.context);
      if (rc == PCRE2_ERROR_NOMATCH) break;
      if (rc < 0) {
        return FT_ERROR(ErrorCode::kInternal, "pre-tokenizer regex failed at byte {}: {}", pos,
                        pcre2_message(rc));
      }
      const PCRE2_SIZE* ovector = pcre2_get_ovector_pointer(state.data);
      size_t start = ovector[0], end = ovector[1];
      if (start > gap_start) fn(text.substr(gap_start, start - gap_start));
      if (end > start) fn(text.substr(start, end - start));
      gap_start = end;
      pos = end > start ? end : end + utf8_char_length(text, end);  // an empty match must not stall
    }
    if (gap_start < text.size()) fn(text.substr(gap_start));
    return Status::ok_status();
  }

 private:
  explicit Pattern(pcre2_code* code) : code_(code) {}
  pcre2_code* code_;
  bool jit_ = false;
};

PreTokenizer::PreTokenizer() = default;
PreTokenizer::PreTokenizer(PreTokenizer&&) noexcept = default;
PreTokenizer& PreTokenizer::operator=(PreTokenizer&&) noexcept = default;
PreTokenizer::~PreTokenizer() = default;

Result<PreTokenizer> PreTokenizer::create(const std::vector<std::string>& patterns) {
  PreTokenizer result;
  result.patterns_ = patterns;
  for (const std::string& pattern : patterns) {
    FT_ASSIGN_OR_RETURN(auto compiled, Pattern::compile(pattern));
    result.compiled_.push_back(std::move(compiled));
  }
  return result;
}

Status PreTokenizer::split(std::string_view text, const PieceFn& fn) const { return split_from(0, text, fn); }

// Pattern `index` splits `text`; each of its pieces goes through the next
// pattern, and the pieces of the last pattern go to `fn`.
Status PreTokenizer::split_from(size_t index, std::string_view text, const PieceFn& fn) const {
  if (index == compiled_.size()) {
    if (!text.empty()) fn(text);
    return Status::ok_status();
  }
  if (index + 1 == compiled_.size()) return compiled_[index]->split(text, fn);
  Status status;
  FT_RETURN_IF_ERROR(compiled_[index]->split(text, [&](std::string_view piece) {
    if (status.ok()) status = split_from(index + 1, piece, fn);
  }));
  return status;
}

Result<std::vector<std::string>> pretokenizer_patterns_for_gguf(std::string_view pre) {
  // Names as llama.cpp's converter writes them into tokenizer.ggml.pre.
  if (pre == "qwen2") return std::vector<std::string>{std::string(kQwen2Pattern)};
  if (pre == "llama3" || pre == "llama-bpe") return std::vector<std::string>{std::string(kLlama3Pattern)};
  if (pre == "gpt2" || pre == "gpt-2") return std::vector<std::string>{std::string(kGpt2Pattern)};
  return FT_ERROR(ErrorCode::kUnsupported,
                  "tokenizer.ggml.pre \"{}\" is not supported (known: qwen2, llama-bpe, llama3, gpt-2)",
                  pre);
}

}  // namespace ft
