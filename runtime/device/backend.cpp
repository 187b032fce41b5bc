#include "runtime/device/backend.h"

#include <cstdlib>

namespace ft {

Status check_2d(DeviceBuffer dst, size_t dst_pitch, DeviceBuffer src, size_t src_pitch, size_t width, size_t rows) {
  if (rows == 0) return Status();
  if (width > dst_pitch || width > src_pitch || (rows - 1) * dst_pitch + width > dst.bytes ||
      (rows - 1) * src_pitch + width > src.bytes)
    return FT_ERROR(ErrorCode::kInvalidArgument, "2-D copy of {} rows of {} bytes (pitches {} and {}) overruns a buffer",
                    rows, width, dst_pitch, src_pitch);
  return Status();
}

Result<HostBuffer> Backend::alloc_host(size_t bytes) {
  const size_t rounded = (bytes + 63) / 64 * 64;
  void* p = std::aligned_alloc(64, rounded ? rounded : 64);
  if (!p) return FT_ERROR(ErrorCode::kDevice, "out of host memory allocating {} bytes", bytes);
  return HostBuffer{p, bytes};
}

void Backend::free_host(HostBuffer buffer) { std::free(buffer.ptr); }

Status Backend::upload(DeviceBuffer dst, HostBuffer src, size_t bytes) {
  if (bytes > src.bytes) return FT_ERROR(ErrorCode::kInvalidArgument, "upload of {} bytes from a {}-byte host buffer", bytes, src.bytes);
  return copy_to_device(dst, src.ptr, bytes);
}

Status Backend::download(HostBuffer dst, DeviceBuffer src, size_t bytes) {
  if (bytes > dst.bytes) return FT_ERROR(ErrorCode::kInvalidArgument, "download of {} bytes into a {}-byte host buffer", bytes, dst.bytes);
  return copy_to_host(dst.ptr, src, bytes);
}

}  // namespace ft
