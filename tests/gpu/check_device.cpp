// The backend's queued copies through page-locked host memory (alloc_host,
// upload, download), as each decode step uses them: uploads queued back to
// back from two host buffers, device work between, downloads read only after
// one wait. The metric is the number of bytes that differ (0 passes).
#include <cstring>

#include "tests/gpu/op_check.h"

namespace ft::gpu {
namespace {

Result<double> round_trip(Backend& b, size_t bytes, std::mt19937& rng) {
  FT_ASSIGN_OR_RETURN(HostBuffer in_a, b.alloc_host(bytes));
  FT_ASSIGN_OR_RETURN(HostBuffer in_b, b.alloc_host(bytes));
  FT_ASSIGN_OR_RETURN(HostBuffer out, b.alloc_host(2 * bytes));
  FT_ASSIGN_OR_RETURN(DeviceBuffer d, b.alloc(2 * bytes));
  FT_ASSIGN_OR_RETURN(DeviceBuffer d2, b.alloc(2 * bytes));
  auto* a = static_cast<uint8_t*>(in_a.ptr);
  auto* c = static_cast<uint8_t*>(in_b.ptr);
  for (size_t i = 0; i < bytes; ++i) {
    a[i] = static_cast<uint8_t>(rng());
    c[i] = static_cast<uint8_t>(rng());
  }
  std::memset(out.ptr, 0xEE, out.bytes);
  Status s = b.fill_bytes(d2, 0xFF);
  if (s.ok()) s = b.upload(slice(d, 0, bytes), in_a, bytes);
  if (s.ok()) s = b.upload(slice(d, bytes, bytes), in_b, bytes);
  if (s.ok()) s = b.copy_on_device(d2, d, 2 * bytes);  // in stream order after both uploads
  if (s.ok()) s = b.download(out, d2, 2 * bytes);
  if (s.ok()) s = b.synchronize();
  double differ = 0;
  const auto* o = static_cast<const uint8_t*>(out.ptr);
  for (size_t i = 0; s.ok() && i < bytes; ++i) differ += (o[i] != a[i]) + (o[bytes + i] != c[i]);
  // Out of range: refused, nothing queued.
  if (s.ok() && b.upload(d, in_a, bytes + 1).code() != ErrorCode::kInvalidArgument)
    s = FT_ERROR(ErrorCode::kInternal, "an upload past the host buffer was not refused");
  if (s.ok() && b.download(in_a, d, bytes + 1).code() != ErrorCode::kInvalidArgument)
    s = FT_ERROR(ErrorCode::kInternal, "a download past the host buffer was not refused");
  for (HostBuffer h : {in_a, in_b, out}) b.free_host(h);
  b.free(d);
  b.free(d2);
  if (!s.ok()) return s;
  return differ;
}

}  // namespace

std::vector<CheckCase> check_device(OpContext& ctx, std::mt19937& rng) {
  std::vector<CheckCase> cases;
  for (size_t bytes : {size_t{4}, size_t{4099}, size_t{3} << 20})
    cases.push_back(make_case("host copies (differ)", DType::kF32, fmt::format("{} bytes x 2", bytes),
                              round_trip(ctx.backend(), bytes, rng), 0.5));
  return cases;
}

}  // namespace ft::gpu
