#include "runtime/text/tokenizer.h"

#include <algorithm>

#include "runtime/text/bpe_byte_level.h"
#include "runtime/text/tokenizer_impl.h"
#include "runtime/text/utf8.h"
#include "runtime/text/utf8_nfc.h"

namespace ft {
namespace {

// A stretch of input text, or an added token found in it.
struct Section {
  std::string_view text;
  const AddedToken* token = nullptr;
};

bool is_ascii_space(char c) { return c == ' ' || (c >= '\t' && c <= '\r'); }

std::string_view trim_left(std::string_view s) {
  while (!s.empty() && is_ascii_space(s.front())) s.remove_prefix(1);
  return s;
}

std::string_view trim_right(std::string_view s) {
  while (!s.empty() && is_ascii_space(s.back())) s.remove_suffix(1);
  return s;
}

const AddedToken* match_added(const Tokenizer::Impl& impl, std::string_view rest, bool parse_special) {
  for (int32_t index : impl.added_by_first_byte[static_cast<uint8_t>(rest[0])]) {
    const AddedToken& token = impl.added[index];
    if (token.special && !parse_special) continue;
    if (rest.starts_with(token.content)) return &token;
  }
  return nullptr;
}

// Splits out added tokens, longest match first at each position, then applies
// their lstrip/rstrip to the neighbouring text.
std::vector<Section> split_added(const Tokenizer::Impl& impl, std::string_view text, bool parse_special) {
  std::vector<Section> sections;
  size_t start = 0;
  size_t i = 0;
  while (i < text.size()) {
    const AddedToken* token = impl.added_by_first_byte[static_cast<uint8_t>(text[i])].empty()
                                  ? nullptr
                                  : match_added(impl, text.substr(i), parse_special);
    if (token == nullptr) {
      ++i;
      continue;
    }
    if (i > start) sections.push_back(Section{text.substr(start, i - start)});
    sections.push_back(Section{{}, token});
    i += token->content.size();
    start = i;
  }
  if (start < text.size()) sections.push_back(Section{text.substr(start)});

  for (size_t k = 0; k < sections.size(); ++k) {
    const AddedToken* token = sections[k].token;
    if (token == nullptr) continue;
    if (token->lstrip && k > 0 && !sections[k - 1].token) sections[k - 1].text = trim_right(sections[k - 1].text);
    if (token->rstrip && k + 1 < sections.size() && !sections[k + 1].token) {
      sections[k + 1].text = trim_left(sections[k + 1].text);
    }
  }
  return sections;
}

Status check_id(const Tokenizer::Impl& impl, int32_t id) {
  if (id < 0 || id >= impl.vocab_size) {
    return FT_ERROR(ErrorCode::kInvalidArgument, "token id {} is outside the vocabulary (size {})", id,
                    impl.vocab_size);
  }
  return Status::ok_status();
}

// Appends what `id` contributes to the text: bytes through `utf8`, or the
// text of an added token after flushing any incomplete byte sequence.
void decode_one(const Tokenizer::Impl& impl, int32_t id, const DecodeOptions& options,
                Utf8LossyDecoder& utf8, std::string& out) {
  if (const AddedToken* token = impl.added_token(id)) {
    if (token->special && options.skip_special) return;
    utf8.finish(out);
    out += token->content;
    return;
  }
  if (id < impl.bpe->size()) utf8.push(impl.bytes_of(id), out);
}

// SentencePiece-style tokenizers put a space before the text they encode and
// drop it again when decoding a whole text: `emitted` is the output so far,
// `chunk` what comes next.
void strip_first_space(const Tokenizer::Impl& impl, const DecodeOptions& options, bool emitted, std::string& chunk) {
  if (impl.spaces.strip_first && !options.continuation && !emitted && !chunk.empty() && chunk[0] == ' ') {
    chunk.erase(0, 1);
  }
}

// `body` with each space written as U+2581 and, where the tokenizer says so,
// one U+2581 in front. `at_start`: the section begins the text.
void mark_spaces(const SpaceMarker& spaces, std::string_view body, bool at_start, std::string& out) {
  out.clear();
  bool prepend = spaces.prepend == SpaceMarker::Prepend::kAlways ||
                 (spaces.prepend == SpaceMarker::Prepend::kFirst && at_start);
  if (spaces.unless_marked && body.starts_with(' ')) prepend = false;
  if (prepend) out += SpaceMarker::kMarker;
  for (char c : body) {
    if (c == ' ') {
      out += SpaceMarker::kMarker;
    } else {
      out += c;
    }
  }
}

// A word: its leading U+2581s and what follows up to the next U+2581; or a
// run of U+2581 alone.
constexpr const char* kWordPattern = "\u2581*[^\u2581]+|\u2581+";

// The piece has U+2581 only at its start.
bool marker_leads_only(const std::string& piece) {
  size_t i = 0;
  while (piece.compare(i, SpaceMarker::kMarker.size(), SpaceMarker::kMarker) == 0) i += SpaceMarker::kMarker.size();
  return piece.find(SpaceMarker::kMarker, i) == std::string::npos;
}

// What each piece of a SentencePiece-style vocabulary decodes to.
std::vector<std::string> decoded_pieces(const BpeVocab& vocab) {
  std::vector<std::string> out(vocab.pieces.size());
  for (size_t id = 0; id < vocab.pieces.size(); ++id) {
    const std::string& piece = vocab.pieces[id];
    std::string& bytes = out[id];
    for (size_t i = 0; i < piece.size();) {
      if (piece.compare(i, SpaceMarker::kMarker.size(), SpaceMarker::kMarker) == 0) {
        bytes += ' ';
        i += SpaceMarker::kMarker.size();
      } else {
        bytes += piece[i++];
      }
    }
  }
  for (int b = 0; b < 256; ++b) {
    const int32_t id = vocab.byte_tokens[b];
    if (id >= 0 && static_cast<size_t>(id) < out.size()) out[id] = std::string(1, static_cast<char>(b));
  }
  return out;
}

}  // namespace

int parse_byte_token(std::string_view piece) {
  if (piece.size() != 6 || !piece.starts_with("<0x") || piece[5] != '>') return -1;
  int value = 0;
  for (char c : piece.substr(3, 2)) {
    int digit = c >= '0' && c <= '9' ? c - '0' : c >= 'A' && c <= 'F' ? c - 'A' + 10 : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
    if (digit < 0) return -1;
    value = value * 16 + digit;
  }
  return value;
}

Result<Tokenizer> make_tokenizer(TokenizerParts parts) {
  auto impl = std::make_shared<Tokenizer::Impl>();
  if (parts.vocab.alphabet == BpeVocab::Alphabet::kChars) {
    impl->token_bytes = decoded_pieces(parts.vocab);
    // Where no token has a U+2581 after another character (SentencePiece's
    // split_by_whitespace, true of Llama-2, Mistral and Gemma), no merge can
    // cross the start of a word, so words are BPE'd one by one: the same
    // ids, and short pieces hit the piece cache.
    if (parts.spaces.enabled && std::all_of(parts.vocab.pieces.begin(), parts.vocab.pieces.end(), marker_leads_only)) {
      parts.patterns.push_back(kWordPattern);
    }
  }
  FT_ASSIGN_OR_RETURN(impl->bpe, BpeModel::create(std::move(parts.vocab)));
  impl->spaces = parts.spaces;
  FT_ASSIGN_OR_RETURN(impl->pre, PreTokenizer::create(parts.patterns));
  impl->nfc = parts.nfc;
  impl->vocab_size = impl->bpe->size();
  for (const AddedToken& token : parts.added) {
    if (token.id < 0) return FT_ERROR(ErrorCode::kCorrupt, "added token \"{}\" has id {}", token.content, token.id);
    if (token.content.empty()) return FT_ERROR(ErrorCode::kCorrupt, "added token {} is empty", token.id);
    impl->vocab_size = std::max(impl->vocab_size, token.id + 1);
  }
  impl->added = std::move(parts.added);
  impl->added_index.assign(impl->vocab_size, -1);
  for (size_t i = 0; i < impl->added.size(); ++i) {
    impl->added_index[impl->added[i].id] = static_cast<int32_t>(i);
    impl->added_by_first_byte[static_cast<uint8_t>(impl->added[i].content[0])].push_back(static_cast<int32_t>(i));
  }
  for (auto& bucket : impl->added_by_first_byte) {
    std::stable_sort(bucket.begin(), bucket.end(), [&](int32_t a, int32_t b) {
      return impl->added[a].content.size() > impl->added[b].content.size();
    });
  }
  for (int32_t id : {parts.bos_id, parts.eos_id, parts.pad_id}) {
    if (id >= impl->vocab_size) {
      return FT_ERROR(ErrorCode::kCorrupt, "special token id {} is outside the vocabulary (size {})", id,
                      impl->vocab_size);
    }
  }
  impl->bos_id = parts.bos_id;
  impl->eos_id = parts.eos_id;
  impl->pad_id = parts.pad_id;
  impl->add_bos = parts.add_bos && parts.bos_id >= 0;
  impl->add_eos = parts.add_eos && parts.eos_id >= 0;
  return Tokenizer(std::move(impl));
}

Result<std::vector<int32_t>> Tokenizer::encode(std::string_view text, const EncodeOptions& options) const {
  const Impl& impl = *impl_;
  std::string sanitized;
  if (!utf8_is_valid(text)) {
    sanitized = utf8_sanitize(text);
    text = sanitized;
  }
  std::vector<int32_t> ids;
  ids.reserve(text.size() / 3 + 2);
  if (options.add_special && impl.add_bos) ids.push_back(impl.bos_id);
  std::string normalized, marked;
  auto encode_piece = [&](std::string_view piece) { impl.bpe->encode_piece(piece, ids); };
  for (const Section& section : split_added(impl, text, options.parse_special)) {
    if (section.token != nullptr) {
      ids.push_back(section.token->id);
      continue;
    }
    std::string_view body = section.text;
    if (body.empty()) continue;
    if (impl.nfc) {
      normalized = utf8_nfc(body);
      body = normalized;
    }
    if (impl.spaces.enabled) {
      mark_spaces(impl.spaces, body, section.text.data() == text.data(), marked);
      body = marked;
    }
    FT_RETURN_IF_ERROR(impl.pre.split(body, encode_piece));
  }
  if (options.add_special && impl.add_eos) ids.push_back(impl.eos_id);
  return ids;
}

Result<std::string> Tokenizer::decode(std::span<const int32_t> ids, const DecodeOptions& options) const {
  const Impl& impl = *impl_;
  std::string out;
  Utf8LossyDecoder utf8;
  for (int32_t id : ids) {
    FT_RETURN_IF_ERROR(check_id(impl, id));
    decode_one(impl, id, options, utf8, out);
  }
  utf8.finish(out);
  strip_first_space(impl, options, false, out);
  return out;
}

int32_t Tokenizer::vocab_size() const { return impl_->vocab_size; }
int32_t Tokenizer::bos_id() const { return impl_->bos_id; }
int32_t Tokenizer::eos_id() const { return impl_->eos_id; }
int32_t Tokenizer::pad_id() const { return impl_->pad_id; }

bool Tokenizer::is_special(int32_t id) const {
  const AddedToken* token = impl_->added_token(id);
  return token != nullptr && token->special;
}

const AddedToken* Tokenizer::added_token(int32_t id) const { return impl_->added_token(id); }

// Token strings as the vocabulary writes them: byte-level strings for
// byte-level BPE, the vocabulary's own strings (U+2581, <0xXX>) otherwise.
std::string Tokenizer::token_string(int32_t id) const {
  if (const AddedToken* token = impl_->added_token(id)) return token->content;
  if (id < 0 || id >= impl_->bpe->size()) return {};
  if (!impl_->token_bytes.empty()) return impl_->bpe->piece(id);
  return bytes_to_byte_level(impl_->bpe->piece(id));
}

std::string_view Tokenizer::token_bytes(int32_t id) const {
  if (id < 0 || id >= impl_->bpe->size() || impl_->added_token(id)) return {};
  return impl_->bytes_of(id);
}

int Tokenizer::byte_fallback_value(int32_t id) const {
  if (!impl_->spaces.enabled || id < 0 || id >= impl_->bpe->size() || impl_->added_token(id)) return -1;
  return parse_byte_token(impl_->bpe->piece(id));
}

bool Tokenizer::prepends_space_marker() const {
  return impl_->spaces.enabled && impl_->spaces.prepend != SpaceMarker::Prepend::kNever;
}

int32_t Tokenizer::token_id(std::string_view token_string) const {
  for (const AddedToken& token : impl_->added) {
    if (token.content == token_string) return token.id;
  }
  if (!impl_->token_bytes.empty()) return impl_->bpe->find(token_string);
  return impl_->bpe->find(byte_level_to_bytes(token_string));
}

struct StreamDecoder::State {
  Utf8LossyDecoder utf8;
  bool emitted = false;  // some text has gone out
};

StreamDecoder::StreamDecoder(const Tokenizer& tokenizer, DecodeOptions options)
    : impl_(tokenizer.impl_), options_(options), state_(std::make_unique<State>()) {}
StreamDecoder::~StreamDecoder() = default;
StreamDecoder::StreamDecoder(StreamDecoder&&) noexcept = default;
StreamDecoder& StreamDecoder::operator=(StreamDecoder&&) noexcept = default;

Result<std::string> StreamDecoder::push(int32_t id) {
  FT_RETURN_IF_ERROR(check_id(*impl_, id));
  std::string out;
  decode_one(*impl_, id, options_, state_->utf8, out);
  strip_first_space(*impl_, options_, state_->emitted, out);
  state_->emitted = state_->emitted || !out.empty();
  return out;
}

std::string StreamDecoder::finish() {
  std::string out;
  state_->utf8.finish(out);
  return out;
}

}  // namespace ft
