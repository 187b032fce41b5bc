#include "runtime/model/gguf_writer.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <set>

namespace ft {

namespace {

// Buffered output to a file descriptor; the first error sticks.
class FileOut {
 public:
  explicit FileOut(std::string path) : path_(std::move(path)) {}
  ~FileOut() {
    if (fd_ >= 0) ::close(fd_);
  }

  Status open() {
    fd_ = ::open(path_.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd_ < 0) return FT_ERROR(ErrorCode::kIo, "cannot create {}: {}", path_, std::strerror(errno));
    buffer_.reserve(kBufferBytes);
    return Status();
  }

  Status write(const void* data, size_t n) {
    const auto* p = static_cast<const uint8_t*>(data);
    if (buffer_.size() + n > kBufferBytes) FT_RETURN_IF_ERROR(flush());
    if (n >= kBufferBytes) return write_fd(p, n);
    buffer_.insert(buffer_.end(), p, p + n);
    written_ += n;
    return Status();
  }

  template <typename T>
  Status put(T v) { return write(&v, sizeof(T)); }

  Status put_string(const std::string& s) {
    FT_RETURN_IF_ERROR(put<uint64_t>(s.size()));
    return write(s.data(), s.size());
  }

  Status pad_to(uint64_t alignment) {
    static const uint8_t kZeros[64] = {};
    while (written_ % alignment != 0) {
      const uint64_t n = std::min<uint64_t>(sizeof(kZeros), alignment - written_ % alignment);
      FT_RETURN_IF_ERROR(write(kZeros, n));
    }
    return Status();
  }

  Status finish() {
    FT_RETURN_IF_ERROR(flush());
    if (::fsync(fd_) != 0) return FT_ERROR(ErrorCode::kIo, "cannot sync {}: {}", path_, std::strerror(errno));
    const int fd = fd_;
    fd_ = -1;
    if (::close(fd) != 0) return FT_ERROR(ErrorCode::kIo, "cannot close {}: {}", path_, std::strerror(errno));
    return Status();
  }

  uint64_t written() const { return written_; }

 private:
  static constexpr size_t kBufferBytes = 1 << 20;

  Status flush() {
    Status s = write_fd(buffer_.data(), buffer_.size(), /*count=*/false);
    buffer_.clear();
    return s;
  }

  Status write_fd(const uint8_t* p, size_t n, bool count = true) {
    if (count) written_ += n;
    while (n > 0) {
      const ssize_t w = ::write(fd_, p, n);
      if (w < 0 && errno == EINTR) continue;
      if (w <= 0) return FT_ERROR(ErrorCode::kIo, "cannot write {}: {}", path_, std::strerror(w < 0 ? errno : ENOSPC));
      p += w;
      n -= static_cast<size_t>(w);
    }
    return Status();
  }

  std::string path_;
  int fd_ = -1;
  std::vector<uint8_t> buffer_;
  uint64_t written_ = 0;
};

Status write_value(FileOut& out, const GgufValue& v);

Status write_array(FileOut& out, const GgufArray& a) {
  FT_RETURN_IF_ERROR(out.put<uint32_t>(static_cast<uint32_t>(a.elem_type)));
  FT_RETURN_IF_ERROR(out.put<uint64_t>(a.size()));
  return std::visit(
      [&](const auto& items) -> Status {
        using E = typename std::decay_t<decltype(items)>::value_type;
        if constexpr (std::is_same_v<E, std::string>) {
          for (const auto& s : items) FT_RETURN_IF_ERROR(out.put_string(s));
        } else if constexpr (std::is_same_v<E, GgufValue>) {
          for (const auto& item : items) {
            if (!item.array())
              return FT_ERROR(ErrorCode::kInvalidArgument, "a nested GGUF array element is not an array");
            FT_RETURN_IF_ERROR(write_array(out, *item.array()));
          }
        } else {
          FT_RETURN_IF_ERROR(out.write(items.data(), items.size() * sizeof(E)));
        }
        return Status();
      },
      a.items);
}

Status write_value(FileOut& out, const GgufValue& v) {
  if (const auto* s = v.get_if<std::string>()) return out.put_string(*s);
  if (const GgufArray* a = v.array()) return write_array(out, *a);
  if (const auto* b = v.get_if<bool>()) return out.put<uint8_t>(*b ? 1 : 0);
  if (const auto* x = v.get_if<float>()) return out.put(*x);
  if (const auto* x = v.get_if<double>()) return out.put(*x);
  if (const auto* x = v.get_if<uint8_t>()) return out.put(*x);
  if (const auto* x = v.get_if<int8_t>()) return out.put(*x);
  if (const auto* x = v.get_if<uint16_t>()) return out.put(*x);
  if (const auto* x = v.get_if<int16_t>()) return out.put(*x);
  if (const auto* x = v.get_if<uint32_t>()) return out.put(*x);
  if (const auto* x = v.get_if<int32_t>()) return out.put(*x);
  if (const auto* x = v.get_if<uint64_t>()) return out.put(*x);
  if (const auto* x = v.get_if<int64_t>()) return out.put(*x);
  return FT_ERROR(ErrorCode::kInternal, "unhandled GGUF value type {}", gguf_type_name(v.type()));
}

uint64_t align_up(uint64_t v, uint64_t a) { return (v + a - 1) / a * a; }

}  // namespace

GgufWriter::GgufWriter(uint32_t alignment) : alignment_(alignment == 0 ? 32 : alignment) {
  set("general.alignment", GgufValue(alignment_));
}

void GgufWriter::set(const std::string& key, GgufValue value) {
  for (auto& [k, v] : metadata_) {
    if (k == key) {
      v = std::move(value);
      return;
    }
  }
  metadata_.emplace_back(key, std::move(value));
}

Status GgufWriter::add_tensor(const std::string& name, GgmlType type, std::vector<uint64_t> shape,
                              GgufProducer producer) {
  for (const auto& t : tensors_)
    if (t.name == name) return FT_ERROR(ErrorCode::kInvalidArgument, "tensor {} added twice", name);
  if (shape.empty() || shape.size() > 4)
    return FT_ERROR(ErrorCode::kInvalidArgument, "tensor {}: {} dimensions (1 to 4 allowed)", name, shape.size());
  uint64_t n = 1;
  for (uint64_t d : shape) {
    if (d == 0 || __builtin_mul_overflow(n, d, &n))
      return FT_ERROR(ErrorCode::kInvalidArgument, "tensor {}: bad dimension {}", name, d);
  }
  const auto& traits = ggml_traits(type);
  auto bytes = ggml_bytes(type, n);
  if (!bytes || shape[0] % traits.block_size != 0)
    return FT_ERROR(ErrorCode::kInvalidArgument, "tensor {}: row length {} is not a multiple of the {} block size {}",
                    name, shape[0], traits.name, traits.block_size);
  tensors_.push_back({name, type, std::move(shape), *bytes, std::move(producer)});
  return Status();
}

Status GgufWriter::add_tensor_bytes(const std::string& name, GgmlType type, std::vector<uint64_t> shape,
                                    std::vector<uint8_t> bytes) {
  auto data = std::make_shared<std::vector<uint8_t>>(std::move(bytes));
  return add_tensor(name, type, std::move(shape), [data](const GgufSink& sink) { return sink(*data); });
}

Status GgufWriter::write(const std::string& path, const GgufProgress& progress) const {
  if ((alignment_ & (alignment_ - 1)) != 0)
    return FT_ERROR(ErrorCode::kInvalidArgument, "GGUF alignment {} is not a power of two", alignment_);
  const std::string tmp = path + ".tmp." + std::to_string(::getpid());
  auto fail = [&](Status s) {
    ::unlink(tmp.c_str());
    return s;
  };
  uint64_t total = 0;
  for (const auto& t : tensors_) total += t.n_bytes;
  {
    FileOut out(tmp);
    FT_RETURN_IF_ERROR(out.open());
    Status s = [&]() -> Status {
      FT_RETURN_IF_ERROR(out.write("GGUF", 4));
      FT_RETURN_IF_ERROR(out.put<uint32_t>(3));
      FT_RETURN_IF_ERROR(out.put<uint64_t>(tensors_.size()));
      FT_RETURN_IF_ERROR(out.put<uint64_t>(metadata_.size()));
      for (const auto& [key, value] : metadata_) {
        FT_RETURN_IF_ERROR(out.put_string(key));
        FT_RETURN_IF_ERROR(out.put<uint32_t>(static_cast<uint32_t>(value.type())));
        FT_RETURN_IF_ERROR(write_value(out, value));
      }
      uint64_t offset = 0;
      for (const auto& t : tensors_) {
        FT_RETURN_IF_ERROR(out.put_string(t.name));
        FT_RETURN_IF_ERROR(out.put<uint32_t>(static_cast<uint32_t>(t.shape.size())));
        for (uint64_t d : t.shape) FT_RETURN_IF_ERROR(out.put<uint64_t>(d));
        FT_RETURN_IF_ERROR(out.put<uint32_t>(static_cast<uint32_t>(t.type)));
        FT_RETURN_IF_ERROR(out.put<uint64_t>(offset));
        offset = align_up(offset + t.n_bytes, alignment_);
      }
      FT_RETURN_IF_ERROR(out.pad_to(alignment_));
      uint64_t done = 0;
      for (size_t i = 0; i < tensors_.size(); ++i) {
        const Tensor& t = tensors_[i];
        const uint64_t start = out.written();
        FT_RETURN_IF_ERROR(t.producer([&](std::span<const uint8_t> bytes) -> Status {
          if (out.written() - start + bytes.size() > t.n_bytes)
            return FT_ERROR(ErrorCode::kInternal, "tensor {}: producer wrote more than {} bytes", t.name, t.n_bytes);
          return out.write(bytes.data(), bytes.size());
        }));
        if (out.written() - start != t.n_bytes)
          return FT_ERROR(ErrorCode::kInternal, "tensor {}: producer wrote {} bytes, expected {}", t.name,
                          out.written() - start, t.n_bytes);
        FT_RETURN_IF_ERROR(out.pad_to(alignment_));
        done += t.n_bytes;
        if (progress) progress(i + 1, tensors_.size(), done, total);
      }
      return out.finish();
    }();
    if (!s.ok()) return fail(s);
  }
  if (::rename(tmp.c_str(), path.c_str()) != 0)
    return fail(FT_ERROR(ErrorCode::kIo, "cannot rename {} to {}: {}", tmp, path, std::strerror(errno)));
  return Status();
}

}  // namespace ft
