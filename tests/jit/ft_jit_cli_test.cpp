// ft-jit as a user runs it: warm, inspect, cache, targets, errors.
#include <sys/stat.h>

#include <fstream>
#include <regex>
#include <thread>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "jit/catalog.h"
#include "tests/jit/test_util.h"

namespace ft {
namespace {

using nlohmann::json;
using testing::last_json;
using testing::run_ft_jit;
using testing::ScratchDir;

json parse_json(const ProcessResult& r) {
  json j = json::parse(last_json(r.output), nullptr, false);
  EXPECT_FALSE(j.is_discarded()) << r.output;
  return j;
}

TEST(FtJitCli, HelpVersionAndUsageErrors) {
  auto help = run_ft_jit({}, {"--help"});
  EXPECT_TRUE(help.exited_ok());
  EXPECT_NE(help.output.find("warm --arch"), std::string::npos);
  for (const char* cmd : {"warm", "inspect", "cache", "targets"}) {
    auto h = run_ft_jit({}, {cmd, "--help"});
    EXPECT_TRUE(h.exited_ok()) << cmd;
    EXPECT_NE(h.output.find("usage: ft-jit"), std::string::npos) << cmd;
  }
  EXPECT_TRUE(run_ft_jit({}, {"--version"}).exited_ok());
  auto bad = run_ft_jit({}, {"frobnicate"});
  EXPECT_EQ(WEXITSTATUS(bad.wait_status), 2);
  auto no_arch = run_ft_jit({}, {"warm"});
  EXPECT_EQ(WEXITSTATUS(no_arch.wait_status), 2);
  EXPECT_NE(no_arch.output.find("--arch is required"), std::string::npos);
}

TEST(FtJitCli, TargetsJsonListsTheTable) {
  auto r = run_ft_jit({}, {"targets", "--json"});
  ASSERT_TRUE(r.exited_ok()) << r.output;
  json j = parse_json(r);
  ASSERT_TRUE(j.is_array());
  EXPECT_EQ(j.size(), all_targets().size());
  bool saw_gfx1150 = false;
  for (const auto& t : j)
    if (t["name"] == "gfx1150") {
      saw_gfx1150 = true;
      EXPECT_EQ(t["wave_size"], 32);
      EXPECT_EQ(t["matrix_core"], "wmma-gfx11");
    }
  EXPECT_TRUE(saw_gfx1150);
}

TEST(FtJitCli, UnknownArchListsKnownTargets) {
  ScratchDir dir;
  auto r = run_ft_jit({"FT_CACHE_DIR=" + dir.path()}, {"warm", "--arch", "gfx9999"});
  EXPECT_FALSE(r.exited_ok());
  EXPECT_NE(r.output.find("unknown target 'gfx9999'"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("gfx1150"), std::string::npos);
}

// The whole catalog (344 kernels per target) with no spills, for the APU
// target users run most (gfx1150) and the GPU where execution is proven
// (sm_90); a second warm is all cache hits. The other targets compile each
// kernel family's heaviest kernels in the family tests (tests/ops*), which
// keeps CI on two cores within reason; `ft-jit warm --arch A` checks a whole
// catalog by hand.
// The occupancy the decode tiles were chosen for on AMD (gfx_targets/
// targets.cpp): memory-bound decode kernels need waves resident to keep
// loads in flight. Every decode GEMV and decode attention kernel keeps at
// least a quarter of the SIMD's wave slots (gfx1150: 4 of 16), and the m = 1
// GEMVs up to K = 4096 (every projection but the down one of an 8B model)
// half of them (gfx1150: 8, at most 128 VGPRs).
void decode_kernels_keep_their_occupancy(const TargetFacts& t, const json& rows) {
  const std::regex gemv_shape(R"(^ft_gemv_.*_k(\d+)_m(\d+))");
  int checked = 0;
  for (const auto& r : rows) {
    const std::string name = r["symbol"].get<std::string>();
    const bool gemv = name.starts_with("ft_gemv_"), attn = name.starts_with("ft_attn_decode_");
    if (!gemv && !attn) continue;
    const int waves = r["occupancy_waves"].get<int>();
    EXPECT_GE(waves, t.max_waves_per_simd / 4) << r.dump();
    std::smatch m;
    if (gemv && std::regex_search(name, m, gemv_shape) && std::stoi(m[1]) <= 4096 && std::stoi(m[2]) == 1)
      EXPECT_GE(waves, t.max_waves_per_simd / 2) << r.dump();
    ++checked;
  }
  EXPECT_GT(checked, 100);
}

class FtJitWarm : public ::testing::TestWithParam<const char*> {};

TEST_P(FtJitWarm, WholeCatalogCompilesWithoutSpillsThenHits) {
  ScratchDir dir;
  std::vector<std::string> env = {"FT_CACHE_DIR=" + dir.path()};
  auto cold = run_ft_jit(env, {"warm", "--arch", GetParam(), "--json"});
  ASSERT_TRUE(cold.exited_ok()) << cold.output;
  json c = parse_json(cold);
  const size_t kernels = kernel_catalog(*find_target(GetParam())).size();
  EXPECT_EQ(c["kernels"], kernels);
  EXPECT_EQ(c["compiled"], kernels);
  EXPECT_EQ(c["failed"], 0);
  auto hot = run_ft_jit(env, {"warm", "--arch", GetParam(), "--json"});
  ASSERT_TRUE(hot.exited_ok()) << hot.output;
  json h = parse_json(hot);
  EXPECT_EQ(h["cached"], kernels);
  EXPECT_EQ(h["compiled"], 0);

  auto inspect = run_ft_jit(env, {"inspect", "--arch", GetParam(), "--json"});
  ASSERT_TRUE(inspect.exited_ok()) << inspect.output;
  json rows = parse_json(inspect);
  ASSERT_EQ(rows.size(), kernels);
  const bool amd = find_target(GetParam())->is_amd();
  for (const auto& r : rows) {
    EXPECT_EQ(r["vgpr_spills"], 0) << r.dump();
    EXPECT_EQ(r["sgpr_spills"], 0) << r.dump();
    EXPECT_EQ(r["spill_store_bytes"], 0) << r.dump();
    EXPECT_EQ(r["scratch_bytes"], 0) << r.dump();
    EXPECT_GT(r[amd ? "vgprs" : "registers"].get<int>(), 0) << r.dump();
    EXPECT_GT(r["occupancy_waves"].get<int>(), 0) << r.dump();
  }
  if (amd) decode_kernels_keep_their_occupancy(*find_target(GetParam()), rows);
}

INSTANTIATE_TEST_SUITE_P(Targets, FtJitWarm, ::testing::Values("gfx1150", "sm_90"));

TEST(FtJitCli, FourProcessesWarmOneCacheAtOnce) {
  ScratchDir dir;
  std::vector<std::string> env = {"FT_CACHE_DIR=" + dir.path()};
  std::vector<ProcessResult> results(4);
  std::vector<std::thread> threads;
  for (int i = 0; i < 4; ++i)
    threads.emplace_back([&, i] {
      results[i] = run_ft_jit(env, {"warm", "--arch", "gfx1150", "--kernel", "rmsnorm_f16", "--jobs", "1", "--json"});
    });
  for (auto& t : threads) t.join();
  size_t kernels = 0;
  for (const auto& r : results) {
    ASSERT_TRUE(r.exited_ok()) << r.output;
    json j = parse_json(r);
    EXPECT_EQ(j["failed"], 0);
    kernels = j["kernels"];
  }
  ASSERT_GT(kernels, 5u);
  auto after = run_ft_jit(env, {"warm", "--arch", "gfx1150", "--kernel", "rmsnorm_f16", "--json"});
  json a = parse_json(after);
  EXPECT_EQ(a["cached"], kernels) << "every row readable and passing its checksum";
  auto list = run_ft_jit(env, {"cache", "list", "--json"});
  ASSERT_TRUE(list.exited_ok());
  EXPECT_EQ(parse_json(list).size(), kernels);
}

TEST(FtJitCli, UnwritableCacheDirFallsBackToMemory) {
  ScratchDir dir;
  std::string file = dir.path() + "/not-a-dir";
  std::ofstream(file) << "x";
  auto r = run_ft_jit({"FT_CACHE_DIR=" + file + "/cache"}, {"warm", "--arch", "gfx1150", "--kernel", "ft_rmsnorm_f32_h1024"});
  EXPECT_TRUE(r.exited_ok()) << r.output;
  EXPECT_NE(r.output.find("in-memory"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("1 compiled"), std::string::npos) << r.output;
}

TEST(FtJitCli, SiluIsaOnAmdUsesVExpAndNoNvidiaCode) {
  ScratchDir dir;
  auto r = run_ft_jit({"FT_CACHE_DIR=" + dir.path()},
                      {"inspect", "--arch", "gfx1150", "--kernel", "ft_silu_mul_bf16_i12288", "--isa"});
  ASSERT_TRUE(r.exited_ok()) << r.output;
  EXPECT_NE(r.output.find("v_exp_f32"), std::string::npos) << r.output.substr(0, 2000);
  EXPECT_NE(r.output.find("v_rcp_f32"), std::string::npos);
  for (const char* ptx : {"ex2.approx", "cvt.rn", "tanh.approx", "ld.global", ".reg ", "asm"})
    EXPECT_EQ(r.output.find(ptx), std::string::npos) << ptx;
}

TEST(FtJitCli, NvidiaIsaIsSassOrPtx) {
  ScratchDir dir;
  auto r = run_ft_jit({"FT_CACHE_DIR=" + dir.path()},
                      {"inspect", "--arch", "sm_90", "--kernel", "ft_rmsnorm_f32_h64", "--isa"});
  ASSERT_TRUE(r.exited_ok()) << r.output;
  EXPECT_NE(r.output.find("ft_rmsnorm_f32_h64"), std::string::npos);
  // SASS from nvdisasm/cuobjdump where installed, else NVRTC's PTX.
  bool sass = r.output.find("FFMA") != std::string::npos || r.output.find("Function : ft_rmsnorm") != std::string::npos;
  bool ptx = r.output.find(".entry ft_rmsnorm_f32_h64") != std::string::npos &&
             r.output.find(".target sm_90a") != std::string::npos;
  EXPECT_TRUE(sass || ptx) << r.output.substr(0, 3000);
}

TEST(FtJitCli, CacheStatsPruneAndClear) {
  ScratchDir dir;
  std::vector<std::string> env = {"FT_CACHE_DIR=" + dir.path()};
  ASSERT_TRUE(run_ft_jit(env, {"warm", "--arch", "gfx942", "--kernel", "rmsnorm_bf16_h4"}).exited_ok());
  auto stats = run_ft_jit(env, {"cache", "stats", "--json"});
  ASSERT_TRUE(stats.exited_ok()) << stats.output;
  json s = parse_json(stats);
  EXPECT_GT(s["entries"].get<int>(), 0);
  EXPECT_EQ(s["entries_per_arch"]["gfx942"], s["entries"]);
  auto prune = run_ft_jit(env, {"cache", "prune", "--max-bytes", "0"});
  ASSERT_TRUE(prune.exited_ok()) << prune.output;
  EXPECT_EQ(parse_json(run_ft_jit(env, {"cache", "stats", "--json"}))["entries"], 0);
  ASSERT_TRUE(run_ft_jit(env, {"warm", "--arch", "gfx942", "--kernel", "rmsnorm_bf16_h4"}).exited_ok());
  ASSERT_TRUE(run_ft_jit(env, {"cache", "clear"}).exited_ok());
  EXPECT_EQ(parse_json(run_ft_jit(env, {"cache", "stats", "--json"}))["entries"], 0);
  auto bad = run_ft_jit(env, {"cache", "explode"});
  EXPECT_EQ(WEXITSTATUS(bad.wait_status), 2);
}

}  // namespace
}  // namespace ft
