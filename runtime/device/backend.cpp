#include "runtime/device/backend.h"

namespace ft {

Status check_2d(DeviceBuffer dst, size_t dst_pitch, DeviceBuffer src, size_t src_pitch, size_t width, size_t rows) {
  if (rows == 0) return Status();
  if (width > dst_pitch || width > src_pitch || (rows - 1) * dst_pitch + width > dst.bytes ||
      (rows - 1) * src_pitch + width > src.bytes)
    return FT_ERROR(ErrorCode::kInvalidArgument, "2-D copy of {} rows of {} bytes (pitches {} and {}) overruns a buffer",
                    rows, width, dst_pitch, src_pitch);
  return Status();
}

}  // namespace ft
