// Device selection and the parts of the backends that run without a GPU: the
// CPU backend, clear errors for missing drivers and devices, and reading AMD
// GPUs from the kernel driver's topology.
#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>
#include <fstream>

#include "runtime/base/files.h"
#include "runtime/device/backend.h"
#include "runtime/device/kfd_topology.h"

namespace ft {
namespace {

TEST(KfdTopology, TargetVersionsBecomeGfxNames) {
  EXPECT_EQ(gfx_name_from_target_version(110500), "gfx1150");
  EXPECT_EQ(gfx_name_from_target_version(110501), "gfx1151");
  EXPECT_EQ(gfx_name_from_target_version(110000), "gfx1100");
  EXPECT_EQ(gfx_name_from_target_version(120001), "gfx1201");
  EXPECT_EQ(gfx_name_from_target_version(90010), "gfx90a");
  EXPECT_EQ(gfx_name_from_target_version(90402), "gfx942");
  EXPECT_EQ(gfx_name_from_target_version(0), "");
}

TEST(KfdTopology, ListsGpuNodesInOrderAndSkipsCpus) {
  auto dir = make_temp_dir("ft-kfd");
  ASSERT_TRUE(dir.ok());
  auto node = [&](int i, const std::string& text) {
    std::filesystem::create_directories(*dir + "/" + std::to_string(i));
    std::ofstream(*dir + "/" + std::to_string(i) + "/properties") << text;
  };
  node(0, "cpu_cores_count 16\nsimd_count 0\ngfx_target_version 0\n");
  node(2, "simd_count 8\ngfx_target_version 90010\nmax_waves_per_simd 8\n");
  node(1, "cpu_cores_count 0\nsimd_count 32\ngfx_target_version 110500\n");
  auto arches = kfd_gpu_arches(*dir);
  ASSERT_EQ(arches.size(), 2u);
  EXPECT_EQ(arches[0], "gfx1150");
  EXPECT_EQ(arches[1], "gfx90a");
  EXPECT_TRUE(kfd_gpu_arches(*dir + "/missing").empty());
  remove_tree(*dir);
}

TEST(Devices, CpuBackendCopiesAndFills) {
  auto b = open_backend("cpu");
  ASSERT_TRUE(b.ok()) << b.status().to_string();
  EXPECT_EQ((*b)->kind(), DeviceKind::kCpu);
  EXPECT_EQ((*b)->info().arch, "cpu");
  EXPECT_GT((*b)->info().total_bytes, 0);
  auto free_bytes = (*b)->free_bytes();
  ASSERT_TRUE(free_bytes.ok());
  EXPECT_GT(*free_bytes, 0);
  auto buf = (*b)->alloc(100);
  ASSERT_TRUE(buf.ok());
  EXPECT_EQ(buf->ptr % 64, 0u);
  std::vector<uint8_t> in(100), out(100);
  for (int i = 0; i < 100; ++i) in[i] = static_cast<uint8_t>(i * 3);
  ASSERT_TRUE((*b)->copy_to_device(*buf, in.data(), 100).ok());
  ASSERT_TRUE((*b)->copy_to_host(out.data(), *buf, 100).ok());
  EXPECT_EQ(in, out);
  EXPECT_EQ((*b)->copy_to_device(*buf, in.data(), 101).code(), ErrorCode::kInvalidArgument);
  ASSERT_TRUE((*b)->fill_bytes(*buf, 0xAB).ok());
  ASSERT_TRUE((*b)->copy_to_host(out.data(), *buf, 100).ok());
  EXPECT_EQ(out[57], 0xAB);
  EXPECT_EQ((*b)->begin_capture().code(), ErrorCode::kUnsupported);
  EXPECT_EQ((*b)->load_kernel("", "f").status().code(), ErrorCode::kUnsupported);
  (*b)->free(*buf);
}

// Host buffers on the CPU backend: plain memory, and upload/download are the
// synchronous copies, bounds-checked on both sides.
TEST(Devices, CpuBackendHostBuffers) {
  auto b = open_backend("cpu");
  ASSERT_TRUE(b.ok()) << b.status().to_string();
  auto host = (*b)->alloc_host(40);
  ASSERT_TRUE(host.ok());
  ASSERT_NE(host->ptr, nullptr);
  EXPECT_EQ(host->bytes, 40u);
  auto dev = (*b)->alloc(48);
  ASSERT_TRUE(dev.ok());
  auto* p = static_cast<uint8_t*>(host->ptr);
  for (int i = 0; i < 40; ++i) p[i] = static_cast<uint8_t>(200 - i);
  ASSERT_TRUE((*b)->upload(*dev, *host, 40).ok());
  std::memset(host->ptr, 0, 40);
  ASSERT_TRUE((*b)->download(*host, *dev, 40).ok());
  for (int i = 0; i < 40; ++i) ASSERT_EQ(p[i], static_cast<uint8_t>(200 - i)) << i;
  EXPECT_EQ((*b)->upload(*dev, *host, 41).code(), ErrorCode::kInvalidArgument);    // past the host buffer
  EXPECT_EQ((*b)->download(*host, *dev, 41).code(), ErrorCode::kInvalidArgument);  // likewise
  auto small = (*b)->alloc(8);
  ASSERT_TRUE(small.ok());
  EXPECT_EQ((*b)->upload(*small, *host, 9).code(), ErrorCode::kInvalidArgument);   // past the device buffer
  (*b)->free(*small);
  (*b)->free(*dev);
  (*b)->free_host(*host);
}

TEST(Devices, BadNamesAreErrorsThatListTheChoices) {
  for (const char* bad : {"gpu", "cuda:x", "cuda:", "hip:-1", "tpu:0"}) {
    auto b = open_backend(bad);
    ASSERT_FALSE(b.ok()) << bad;
    EXPECT_EQ(b.status().code(), ErrorCode::kInvalidArgument) << bad;
    EXPECT_NE(b.status().message().find(bad), std::string::npos) << b.status().message();
  }
  auto unknown = open_backend("gpu");
  EXPECT_NE(unknown.status().message().find("cpu, cuda:N, hip:N or auto"), std::string::npos);
}

// CI machines have no GPU: asking for one is a clear error, never a crash,
// and "auto" falls back to the CPU.
TEST(Devices, MissingGpusAreClearErrors) {
  if (std::filesystem::exists("/dev/nvidiactl") || std::filesystem::exists("/dev/kfd"))
    GTEST_SKIP() << "this machine has a GPU";
  auto cuda = open_backend("cuda:0");
  ASSERT_FALSE(cuda.ok());
  EXPECT_NE(cuda.status().message().find("NVIDIA"), std::string::npos) << cuda.status().to_string();
  auto hip = open_backend("hip:0");
  ASSERT_FALSE(hip.ok());
  EXPECT_TRUE(hip.status().message().find("hip") != std::string::npos ||
              hip.status().message().find("ROCm") != std::string::npos)
      << hip.status().to_string();
  auto cuda7 = open_backend("cuda:7");
  EXPECT_FALSE(cuda7.ok());
  auto autodetect = open_backend("auto");
  ASSERT_TRUE(autodetect.ok()) << autodetect.status().to_string();
  EXPECT_EQ((*autodetect)->kind(), DeviceKind::kCpu);
}

}  // namespace
}  // namespace ft
