// Unicode Normalization Form C, as the NFC normalizer of HF tokenizers
// (Qwen2/Qwen3) applies it before pre-tokenization.
//
// Own code over tables generated from the Unicode data (utf8_nfc_gen.py), so
// that binaries need no ICU data library (about 30 MB when linked statically).
#pragma once

#include <string>
#include <string_view>

namespace ft {

// NFC of `text`, which must be valid UTF-8. Text that is already in NFC for
// certain (the common case: no combining marks, no decomposable characters)
// is returned by a quick scan without building the decomposition.
std::string utf8_nfc(std::string_view text);

}  // namespace ft
