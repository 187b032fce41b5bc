// The planning backend (see backend.h): no memory, no device, no work.
#include <cstring>

#include "runtime/device/backend.h"

namespace ft {
namespace {

class PlanningBackend final : public Backend {
 public:
  PlanningBackend(DeviceKind kind, DeviceInfo info) : kind_(kind), info_(std::move(info)) {}
  DeviceKind kind() const override { return kind_; }
  bool holds_data() const override { return false; }
  const DeviceInfo& info() const override { return info_; }
  Result<int64_t> free_bytes() override { return info_.total_bytes; }
  Result<DeviceBuffer> alloc(size_t bytes) override {
    // Distinct, aligned, never dereferenced.
    DeviceBuffer b{next_, bytes};
    next_ += (bytes + 255) / 256 * 256 + 256;
    return b;
  }
  void free(DeviceBuffer) override {}
  Status copy_to_device(DeviceBuffer, const void*, size_t) override { return Status(); }
  Status copy_to_host(void* dst, DeviceBuffer, size_t bytes) override {
    std::memset(dst, 0, bytes);
    return Status();
  }
  Status fill_bytes(DeviceBuffer, uint8_t) override { return Status(); }
  Status copy_on_device(DeviceBuffer, DeviceBuffer, size_t) override { return Status(); }
  Status copy_2d(DeviceBuffer dst, size_t dst_pitch, DeviceBuffer src, size_t src_pitch, size_t width,
                 size_t rows) override {
    return check_2d(dst, dst_pitch, src, src_pitch, width, rows);
  }
  Result<KernelHandle> load_kernel(const std::string&, const std::string&) override { return KernelHandle{}; }
  Status launch(KernelHandle, const LaunchDims&, const void*, size_t) override { return Status(); }
  Status synchronize() override { return Status(); }
  Status begin_capture() override { return Status(); }
  Result<GraphHandle> end_capture() override { return GraphHandle{}; }
  Status replay(GraphHandle) override { return Status(); }
  void destroy_graph(GraphHandle) override {}
  Result<double> time_ms(const std::function<Status()>&, int) override { return 0.0; }

 private:
  DeviceKind kind_;
  DeviceInfo info_;
  uint64_t next_ = 1ull << 40;
};

}  // namespace

std::unique_ptr<Backend> make_planning_backend(DeviceKind kind, const std::string& arch) {
  DeviceInfo info;
  info.name = "planning stand-in for " + arch;
  info.arch = arch;
  info.total_bytes = int64_t{1} << 40;
  info.compute_units = 1;
  return std::make_unique<PlanningBackend>(kind, std::move(info));
}

}  // namespace ft
