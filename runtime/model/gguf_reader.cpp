#include "runtime/model/gguf_reader.h"

#include <algorithm>
#include <cstring>
#include <limits>

namespace ft {

namespace {

constexpr uint32_t kMaxArrayDepth = 4;
constexpr uint32_t kMaxDims = 4;
constexpr uint64_t kMaxAlignment = 1u << 20;
// The smallest encodings: a key-value pair is a key length, a type and at
// least one value byte; a tensor info is a name length, n_dims, one dim, a
// type and an offset. Counts are checked against the bytes left at this rate.
constexpr uint64_t kMinKvBytes = 8 + 4 + 1;
constexpr uint64_t kMinTensorInfoBytes = 8 + 4 + 8 + 4 + 8;

uint64_t min_value_bytes(GgufType t) {
  switch (t) {
    case GgufType::kUint8: case GgufType::kInt8: case GgufType::kBool: return 1;
    case GgufType::kUint16: case GgufType::kInt16: return 2;
    case GgufType::kUint32: case GgufType::kInt32: case GgufType::kFloat32: return 4;
    case GgufType::kUint64: case GgufType::kInt64: case GgufType::kFloat64: return 8;
    case GgufType::kString: return 8;
    case GgufType::kArray: return 12;
  }
  return 1;
}

}  // namespace

// Reads little-endian fields with a bounds check on every access. The first
// error sticks: later reads return zeros, and status() reports what failed.
class GgufParser {
 public:
  GgufParser(std::span<const uint8_t> bytes) : bytes_(bytes) {}

  Result<GgufReader> parse(std::shared_ptr<const MappedFile> file);

 private:
  uint64_t left() const { return bytes_.size() - pos_; }

  Status need(uint64_t n, std::string_view what) {
    if (n > left())
      return FT_ERROR(ErrorCode::kCorrupt, "truncated GGUF: {} needs {} bytes at offset {}, only {} left", what, n,
                      pos_, left());
    return Status();
  }

  template <typename T>
  Result<T> read(std::string_view what) {
    FT_RETURN_IF_ERROR(need(sizeof(T), what));
    T v;
    std::memcpy(&v, bytes_.data() + pos_, sizeof(T));
    pos_ += sizeof(T);
    return v;
  }

  Result<std::string> read_string(std::string_view what) {
    FT_ASSIGN_OR_RETURN(uint64_t len, read<uint64_t>(what));
    if (len > left())
      return FT_ERROR(ErrorCode::kCorrupt, "{}: string length {} at offset {} runs past the end ({} bytes left)",
                      what, len, pos_ - 8, left());
    std::string s(reinterpret_cast<const char*>(bytes_.data() + pos_), len);
    pos_ += len;
    return s;
  }

  Result<uint64_t> read_count(uint64_t min_elem_bytes, std::string_view what) {
    FT_ASSIGN_OR_RETURN(uint64_t count, read<uint64_t>(what));
    if (count > left() / min_elem_bytes)
      return FT_ERROR(ErrorCode::kCorrupt, "{}: count {} cannot fit in the {} bytes left", what, count, left());
    return count;
  }

  Result<GgufValue> read_value(GgufType type, const std::string& key, uint32_t depth);
  Result<GgufValue> read_array(const std::string& key, uint32_t depth);
  Result<GgufArray::Items> read_items(GgufType elem, uint64_t count, const std::string& key, uint32_t depth);
  template <typename T>
  Result<GgufArray::Items> read_numbers(uint64_t count, const std::string& key);
  Status read_header(GgufReader* r, uint64_t* n_tensors, uint64_t* n_kv);
  Status read_metadata(GgufReader* r, uint64_t n_kv);
  Status read_alignment(GgufReader* r);
  Result<GgufTensorInfo> read_tensor_info(const GgufReader& r, uint64_t index);
  Status check_tensor_extents(GgufReader* r);

  std::span<const uint8_t> bytes_;
  uint64_t pos_ = 0;
};

Result<GgufValue> GgufParser::read_value(GgufType type, const std::string& key, uint32_t depth) {
  switch (type) {
    case GgufType::kUint8: { FT_ASSIGN_OR_RETURN(auto v, read<uint8_t>(key)); return GgufValue(v); }
    case GgufType::kInt8: { FT_ASSIGN_OR_RETURN(auto v, read<int8_t>(key)); return GgufValue(v); }
    case GgufType::kUint16: { FT_ASSIGN_OR_RETURN(auto v, read<uint16_t>(key)); return GgufValue(v); }
    case GgufType::kInt16: { FT_ASSIGN_OR_RETURN(auto v, read<int16_t>(key)); return GgufValue(v); }
    case GgufType::kUint32: { FT_ASSIGN_OR_RETURN(auto v, read<uint32_t>(key)); return GgufValue(v); }
    case GgufType::kInt32: { FT_ASSIGN_OR_RETURN(auto v, read<int32_t>(key)); return GgufValue(v); }
    case GgufType::kFloat32: { FT_ASSIGN_OR_RETURN(auto v, read<float>(key)); return GgufValue(v); }
    case GgufType::kUint64: { FT_ASSIGN_OR_RETURN(auto v, read<uint64_t>(key)); return GgufValue(v); }
    case GgufType::kInt64: { FT_ASSIGN_OR_RETURN(auto v, read<int64_t>(key)); return GgufValue(v); }
    case GgufType::kFloat64: { FT_ASSIGN_OR_RETURN(auto v, read<double>(key)); return GgufValue(v); }
    case GgufType::kBool: {
      FT_ASSIGN_OR_RETURN(uint8_t v, read<uint8_t>(key));
      if (v > 1) return FT_ERROR(ErrorCode::kCorrupt, "metadata {}: bool byte is {}, not 0 or 1", key, v);
      return GgufValue(v == 1);
    }
    case GgufType::kString: { FT_ASSIGN_OR_RETURN(auto v, read_string(key)); return GgufValue(std::move(v)); }
    case GgufType::kArray: return read_array(key, depth + 1);
  }
  return FT_ERROR(ErrorCode::kCorrupt, "metadata {}: unknown value type {}", key, static_cast<uint32_t>(type));
}

template <typename T>
Result<GgufArray::Items> GgufParser::read_numbers(uint64_t count, const std::string& key) {
  // read_count already checked count * sizeof(T) <= bytes left.
  std::vector<T> v(count);
  if (count > 0) std::memcpy(v.data(), bytes_.data() + pos_, count * sizeof(T));
  pos_ += count * sizeof(T);
  return GgufArray::Items(std::move(v));
}

Result<GgufArray::Items> GgufParser::read_items(GgufType elem, uint64_t count, const std::string& key,
                                               uint32_t depth) {
  switch (elem) {
    case GgufType::kUint8: return read_numbers<uint8_t>(count, key);
    case GgufType::kInt8: return read_numbers<int8_t>(count, key);
    case GgufType::kUint16: return read_numbers<uint16_t>(count, key);
    case GgufType::kInt16: return read_numbers<int16_t>(count, key);
    case GgufType::kUint32: return read_numbers<uint32_t>(count, key);
    case GgufType::kInt32: return read_numbers<int32_t>(count, key);
    case GgufType::kFloat32: return read_numbers<float>(count, key);
    case GgufType::kUint64: return read_numbers<uint64_t>(count, key);
    case GgufType::kInt64: return read_numbers<int64_t>(count, key);
    case GgufType::kFloat64: return read_numbers<double>(count, key);
    case GgufType::kBool: {
      FT_ASSIGN_OR_RETURN(GgufArray::Items items, read_numbers<uint8_t>(count, key));
      for (uint8_t b : std::get<std::vector<uint8_t>>(items))
        if (b > 1) return FT_ERROR(ErrorCode::kCorrupt, "metadata {}: bool array element is {}, not 0 or 1", key, b);
      return items;
    }
    case GgufType::kString: {
      std::vector<std::string> v;
      v.reserve(count);
      for (uint64_t i = 0; i < count; ++i) {
        FT_ASSIGN_OR_RETURN(std::string s, read_string(key));
        v.push_back(std::move(s));
      }
      return GgufArray::Items(std::move(v));
    }
    case GgufType::kArray: {
      std::vector<GgufValue> v;
      v.reserve(count);
      for (uint64_t i = 0; i < count; ++i) {
        FT_ASSIGN_OR_RETURN(GgufValue item, read_array(key, depth + 1));
        v.push_back(std::move(item));
      }
      return GgufArray::Items(std::move(v));
    }
  }
  return FT_ERROR(ErrorCode::kCorrupt, "metadata {}: unknown array element type", key);
}

Result<GgufValue> GgufParser::read_array(const std::string& key, uint32_t depth) {
  if (depth > kMaxArrayDepth)
    return FT_ERROR(ErrorCode::kCorrupt, "metadata {}: arrays nested deeper than {}", key, kMaxArrayDepth);
  FT_ASSIGN_OR_RETURN(uint32_t type_id, read<uint32_t>(key));
  if (!gguf_type_valid(type_id))
    return FT_ERROR(ErrorCode::kCorrupt, "metadata {}: unknown array element type {}", key, type_id);
  const auto elem = static_cast<GgufType>(type_id);
  FT_ASSIGN_OR_RETURN(uint64_t count, read_count(min_value_bytes(elem), key));
  FT_ASSIGN_OR_RETURN(GgufArray::Items items, read_items(elem, count, key, depth));
  GgufArray array{elem, std::move(items)};
  return GgufValue(std::move(array));
}

Status GgufParser::read_header(GgufReader* r, uint64_t* n_tensors, uint64_t* n_kv) {
  if (bytes_.size() < 4) return FT_ERROR(ErrorCode::kCorrupt, "not a GGUF file: only {} bytes", bytes_.size());
  if (std::memcmp(bytes_.data(), "GGUF", 4) != 0) {
    return FT_ERROR(ErrorCode::kCorrupt, "not a GGUF file: magic is {:02x} {:02x} {:02x} {:02x}, expected \"GGUF\"",
                    bytes_[0], bytes_[1], bytes_[2], bytes_[3]);
  }
  pos_ = 4;
  FT_ASSIGN_OR_RETURN(r->version_, read<uint32_t>("version"));
  if (r->version_ == 1) return FT_ERROR(ErrorCode::kUnsupported, "GGUF version 1 is not supported (ft reads v2 and v3)");
  if (r->version_ == 0x02000000 || r->version_ == 0x03000000)
    return FT_ERROR(ErrorCode::kUnsupported, "big-endian GGUF is not supported");
  if (r->version_ != 2 && r->version_ != 3)
    return FT_ERROR(ErrorCode::kCorrupt, "unknown GGUF version {} (ft reads v2 and v3)", r->version_);
  FT_ASSIGN_OR_RETURN(*n_tensors, read<uint64_t>("tensor count"));
  FT_ASSIGN_OR_RETURN(*n_kv, read<uint64_t>("metadata count"));
  if (*n_kv > left() / kMinKvBytes)
    return FT_ERROR(ErrorCode::kCorrupt, "metadata count {} cannot fit in a {}-byte file", *n_kv, bytes_.size());
  if (*n_tensors > left() / kMinTensorInfoBytes)
    return FT_ERROR(ErrorCode::kCorrupt, "tensor count {} cannot fit in a {}-byte file", *n_tensors, bytes_.size());
  return Status();
}

Status GgufParser::read_metadata(GgufReader* r, uint64_t n_kv) {
  r->metadata_.reserve(n_kv);
  for (uint64_t i = 0; i < n_kv; ++i) {
    FT_ASSIGN_OR_RETURN(std::string key, read_string(fmt::format("metadata key #{}", i)));
    FT_ASSIGN_OR_RETURN(uint32_t type_id, read<uint32_t>(key));
    if (!gguf_type_valid(type_id))
      return FT_ERROR(ErrorCode::kCorrupt, "metadata {}: unknown value type {}", key, type_id);
    FT_ASSIGN_OR_RETURN(GgufValue value, read_value(static_cast<GgufType>(type_id), key, 0));
    if (!r->metadata_index_.emplace(key, r->metadata_.size()).second)
      return FT_ERROR(ErrorCode::kCorrupt, "metadata key {} appears twice", key);
    r->metadata_.emplace_back(std::move(key), std::move(value));
  }
  return Status();
}

Status GgufParser::read_alignment(GgufReader* r) {
  const GgufValue* v = r->find("general.alignment");
  if (!v) return Status();
  auto a = v->to_uint();
  if (!a.ok()) return FT_ERROR(ErrorCode::kCorrupt, "general.alignment: {}", a.status().message());
  if (*a == 0 || (*a & (*a - 1)) != 0 || *a > kMaxAlignment)
    return FT_ERROR(ErrorCode::kCorrupt, "general.alignment {} is not a power of two up to {}", *a, kMaxAlignment);
  r->alignment_ = *a;
  return Status();
}

Result<GgufTensorInfo> GgufParser::read_tensor_info(const GgufReader& r, uint64_t index) {
  GgufTensorInfo t;
  FT_ASSIGN_OR_RETURN(t.name, read_string(fmt::format("tensor #{} name", index)));
  FT_ASSIGN_OR_RETURN(uint32_t n_dims, read<uint32_t>(t.name));
  if (n_dims == 0 || n_dims > kMaxDims)
    return FT_ERROR(ErrorCode::kCorrupt, "tensor {}: {} dimensions (1 to {} allowed)", t.name, n_dims, kMaxDims);
  t.n_elements = 1;
  for (uint32_t d = 0; d < n_dims; ++d) {
    FT_ASSIGN_OR_RETURN(uint64_t dim, read<uint64_t>(t.name));
    if (dim == 0) return FT_ERROR(ErrorCode::kCorrupt, "tensor {}: dimension {} is zero", t.name, d);
    if (dim > static_cast<uint64_t>(std::numeric_limits<int64_t>::max()) ||
        __builtin_mul_overflow(t.n_elements, dim, &t.n_elements))
      return FT_ERROR(ErrorCode::kCorrupt, "tensor {}: element count overflows", t.name);
    t.shape.push_back(dim);
  }
  FT_ASSIGN_OR_RETURN(uint32_t type_id, read<uint32_t>(t.name));
  auto traits = ggml_traits(type_id);
  if (!traits) return FT_ERROR(ErrorCode::kCorrupt, "tensor {}: unknown ggml type id {}", t.name, type_id);
  t.type = traits->type;
  if (t.shape[0] % traits->block_size != 0)
    return FT_ERROR(ErrorCode::kCorrupt, "tensor {}: row length {} is not a multiple of the {} block size {}", t.name,
                    t.shape[0], traits->name, traits->block_size);
  auto bytes = ggml_bytes(t.type, t.n_elements);
  if (!bytes) return FT_ERROR(ErrorCode::kCorrupt, "tensor {}: byte size overflows", t.name);
  t.n_bytes = *bytes;
  FT_ASSIGN_OR_RETURN(t.offset, read<uint64_t>(t.name));
  if (t.offset % r.alignment_ != 0)
    return FT_ERROR(ErrorCode::kCorrupt, "tensor {}: data offset {} is misaligned (alignment {})", t.name, t.offset,
                    r.alignment_);
  return t;
}

Status GgufParser::check_tensor_extents(GgufReader* r) {
  const uint64_t file_size = bytes_.size();
  std::vector<const GgufTensorInfo*> by_offset;
  for (const auto& t : r->tensors_) {
    uint64_t end;
    if (__builtin_add_overflow(r->data_offset_, t.offset, &end) || __builtin_add_overflow(end, t.n_bytes, &end) ||
        end > file_size)
      return FT_ERROR(ErrorCode::kCorrupt, "tensor {}: data ({} bytes at offset {}) runs past the end of the {}-byte file",
                      t.name, t.n_bytes, t.offset, file_size);
    by_offset.push_back(&t);
  }
  std::sort(by_offset.begin(), by_offset.end(), [](auto* a, auto* b) { return a->offset < b->offset; });
  for (size_t i = 1; i < by_offset.size(); ++i) {
    if (by_offset[i - 1]->offset + by_offset[i - 1]->n_bytes > by_offset[i]->offset)
      return FT_ERROR(ErrorCode::kCorrupt, "tensors {} and {} overlap", by_offset[i - 1]->name, by_offset[i]->name);
  }
  return Status();
}

Result<GgufReader> GgufParser::parse(std::shared_ptr<const MappedFile> file) {
  GgufReader r;
  r.file_ = std::move(file);
  uint64_t n_tensors = 0, n_kv = 0;
  FT_RETURN_IF_ERROR(read_header(&r, &n_tensors, &n_kv));
  FT_RETURN_IF_ERROR(read_metadata(&r, n_kv));
  FT_RETURN_IF_ERROR(read_alignment(&r));
  r.tensors_.reserve(n_tensors);
  for (uint64_t i = 0; i < n_tensors; ++i) {
    FT_ASSIGN_OR_RETURN(GgufTensorInfo t, read_tensor_info(r, i));
    if (!r.tensor_index_.emplace(t.name, r.tensors_.size()).second)
      return FT_ERROR(ErrorCode::kCorrupt, "tensor {} appears twice", t.name);
    r.tensors_.push_back(std::move(t));
  }
  const uint64_t rem = pos_ % r.alignment_;
  r.data_offset_ = rem == 0 ? pos_ : pos_ + (r.alignment_ - rem);
  FT_RETURN_IF_ERROR(check_tensor_extents(&r));
  return r;
}

Result<GgufReader> GgufReader::open(const std::string& path) {
  FT_ASSIGN_OR_RETURN(auto file, MappedFile::open(path));
  GgufParser parser(file->bytes());
  auto r = parser.parse(file);
  if (!r.ok()) {
    Status s = r.status();
    return s.with_context(path);
  }
  return r;
}

Result<GgufReader> GgufReader::from_memory(std::span<const uint8_t> bytes) {
  auto file = MappedFile::borrow(bytes, "<memory>");
  GgufParser parser(bytes);
  return parser.parse(file);
}

const GgufValue* GgufReader::find(std::string_view key) const {
  auto it = metadata_index_.find(key);
  return it == metadata_index_.end() ? nullptr : &metadata_[it->second].second;
}

namespace {

Result<const GgufValue*> require(const GgufReader& r, std::string_view key) {
  const GgufValue* v = r.find(key);
  if (!v) return FT_ERROR(ErrorCode::kNotFound, "GGUF metadata key {} is missing", key);
  return v;
}

template <typename T>
Result<T> with_key(Result<T> r, std::string_view key) {
  if (r.ok()) return r;
  Status s = r.status();
  return s.with_context(fmt::format("GGUF metadata key {}", key));
}

}  // namespace

Result<std::string> GgufReader::get_string(std::string_view key) const {
  FT_ASSIGN_OR_RETURN(const GgufValue* v, require(*this, key));
  if (const auto* s = v->get_if<std::string>()) return *s;
  return FT_ERROR(ErrorCode::kCorrupt, "GGUF metadata key {} has type {}, expected string", key,
                  gguf_type_name(v->type()));
}

Result<int64_t> GgufReader::get_int(std::string_view key) const {
  FT_ASSIGN_OR_RETURN(const GgufValue* v, require(*this, key));
  return with_key(v->to_int(), key);
}

Result<uint64_t> GgufReader::get_uint(std::string_view key) const {
  FT_ASSIGN_OR_RETURN(const GgufValue* v, require(*this, key));
  return with_key(v->to_uint(), key);
}

Result<double> GgufReader::get_float(std::string_view key) const {
  FT_ASSIGN_OR_RETURN(const GgufValue* v, require(*this, key));
  return with_key(v->to_float(), key);
}

Result<bool> GgufReader::get_bool(std::string_view key) const {
  FT_ASSIGN_OR_RETURN(const GgufValue* v, require(*this, key));
  if (const auto* b = v->get_if<bool>()) return *b;
  return FT_ERROR(ErrorCode::kCorrupt, "GGUF metadata key {} has type {}, expected bool", key,
                  gguf_type_name(v->type()));
}

Result<const GgufArray*> GgufReader::get_array(std::string_view key) const {
  FT_ASSIGN_OR_RETURN(const GgufValue* v, require(*this, key));
  if (const GgufArray* a = v->array()) return a;
  return FT_ERROR(ErrorCode::kCorrupt, "GGUF metadata key {} has type {}, expected array", key,
                  gguf_type_name(v->type()));
}

Result<std::vector<std::string>> GgufReader::get_strings(std::string_view key) const {
  FT_ASSIGN_OR_RETURN(const GgufArray* a, get_array(key));
  if (const auto* s = a->as<std::string>()) return *s;
  return FT_ERROR(ErrorCode::kCorrupt, "GGUF metadata key {} is an array of {}, expected strings", key,
                  gguf_type_name(a->elem_type));
}

const GgufTensorInfo* GgufReader::find_tensor(std::string_view name) const {
  auto it = tensor_index_.find(name);
  return it == tensor_index_.end() ? nullptr : &tensors_[it->second];
}

Result<std::span<const uint8_t>> GgufReader::tensor_data(std::string_view name) const {
  const GgufTensorInfo* t = find_tensor(name);
  if (!t) return FT_ERROR(ErrorCode::kNotFound, "tensor {} is not in {}", name, path());
  return tensor_data(*t);
}

Result<std::span<const uint8_t>> GgufReader::tensor_data(const GgufTensorInfo& other) const {
  // Look the tensor up again so that an info from another reader cannot
  // point outside this mapping.
  const GgufTensorInfo* t = find_tensor(other.name);
  if (!t) return FT_ERROR(ErrorCode::kNotFound, "tensor {} is not in {}", other.name, path());
  const GgufTensorInfo& info = *t;
  const auto& traits = ggml_traits(info.type);
  if (!traits.supported)
    return FT_ERROR(ErrorCode::kUnsupported, "tensor {} has type {}, which ft cannot use", info.name, traits.name);
  // Extents were validated in parse().
  return file_->bytes().subspan(data_offset_ + info.offset, info.n_bytes);
}

}  // namespace ft
