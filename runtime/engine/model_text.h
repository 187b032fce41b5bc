// The text side of a model file: its tokenizer and chat template, from GGUF
// metadata (tokenizer.ggml.*, tokenizer.chat_template[.name]) or from the HF
// files beside a safetensors model.
#pragma once

#include <optional>
#include <string>

#include "runtime/base/status.h"
#include "runtime/model/gguf_reader.h"
#include "runtime/text/chat_template.h"
#include "runtime/text/tokenizer.h"

namespace ft {

// The tokenizer.ggml.* keys, as llama.cpp's converter writes them.
Result<TokenizerSpec> tokenizer_spec_from_gguf(const GgufReader& reader);
// A GGUF file's tokenizer, or an HF tokenizer.json's (a folder or the file).
// `opened`: the file's reader when the caller has it already (not re-read).
Result<Tokenizer> load_model_tokenizer(const std::string& path, const GgufReader* opened = nullptr);

// The chat template stored in a GGUF file, with its special tokens; nullopt
// when the file has none.
Result<std::optional<ChatTemplate>> chat_template_from_gguf(const GgufReader& reader);
// A GGUF file's template, or ChatTemplate::load for folders and files.
Result<std::optional<ChatTemplate>> load_model_chat_template(const std::string& path,
                                                             const GgufReader* opened = nullptr);

}  // namespace ft
