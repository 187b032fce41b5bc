// Regex pre-tokenization: cuts text into the pieces that BPE then encodes one
// by one, as the HF `Split` pre-tokenizer with behavior "Isolated" does (the
// matches and the text between them all become pieces). Patterns run through
// PCRE2 with Unicode properties (PCRE2_UTF | PCRE2_UCP), JIT-compiled.
//
// Classes follow PCRE2's Unicode tables (Unicode 14 in PCRE2 10.42). `\s`
// includes U+0085 (NEL), as in Oniguruma, which HF's Rust tokenizers use; JS
// regexes (and so @lenml/tokenizers) leave NEL out of `\s`, so text with NEL
// can split differently there. Letters assigned after Unicode 14 are not
// \p{L} here yet.
//
// Thread safety: a PreTokenizer is immutable after creation; `split` may be
// called from many threads at once.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "runtime/base/status.h"

namespace ft {

// The Split regexes of real tokenizer.json files, verbatim.
inline constexpr std::string_view kQwen2Pattern =
    R"((?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)";
inline constexpr std::string_view kLlama3Pattern =
    R"((?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)";
// What the ByteLevel pre-tokenizer splits with when its use_regex is true.
inline constexpr std::string_view kGpt2Pattern =
    R"('s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+)";

// The patterns for a GGUF `tokenizer.ggml.pre` name; kUnsupported for a name
// this build does not know.
Result<std::vector<std::string>> pretokenizer_patterns_for_gguf(std::string_view pre);

class PreTokenizer {
 public:
  // Each pattern splits the pieces the previous one produced. No patterns:
  // the whole text is one piece.
  static Result<PreTokenizer> create(const std::vector<std::string>& patterns);

  PreTokenizer();  // no patterns
  PreTokenizer(PreTokenizer&&) noexcept;
  PreTokenizer& operator=(PreTokenizer&&) noexcept;
  ~PreTokenizer();

  using PieceFn = std::function<void(std::string_view)>;
  // Calls `fn` with each piece of `text` (valid UTF-8; views into it), in
  // order, without collecting them. Fails only when PCRE2 reports a matching
  // error (such as a resource limit).
  Status split(std::string_view text, const PieceFn& fn) const;

  const std::vector<std::string>& patterns() const { return patterns_; }

 private:
  class Pattern;
  Status split_from(size_t index, std::string_view text, const PieceFn& fn) const;

  std::vector<std::string> patterns_;
  std::vector<std::unique_ptr<Pattern>> compiled_;
};

}  // namespace ft
