// NVIDIA PTX must never reach an AMD compile (HIP does not reject it when
// parsing and fails much later with a misleading error). Every kernel source
// is preprocessed with each AMD target's real flags; no `asm` may survive.
// A control run with FT_NVIDIA defined shows the check sees asm when it is there.
#include <gtest/gtest.h>

#include <filesystem>
#include <regex>

#include "jit/kernel_spec.h"
#include "jit/subprocess.h"
#include "jit/toolchain.h"

namespace ft {
namespace {

int asm_statements(const std::string& preprocessed) {
  static const std::regex kAsm(R"(\basm\b)");
  return static_cast<int>(std::distance(std::sregex_iterator(preprocessed.begin(), preprocessed.end(), kAsm),
                                        std::sregex_iterator()));
}

std::vector<std::string> kernel_files() {
  std::vector<std::string> files;
  for (const auto& e : std::filesystem::directory_iterator(FT_SOURCE_DIR "/kernel_src"))
    if (e.path().extension() == ".hip") files.push_back(e.path().string());
  std::sort(files.begin(), files.end());
  return files;
}

Result<std::string> preprocess(const std::string& clang, std::vector<std::string> flags, const std::string& file) {
  std::vector<std::string> argv = {clang, "-E"};
  argv.insert(argv.end(), flags.begin(), flags.end());
  for (const char* f : {"-I", FT_SOURCE_DIR "/kernel_src"}) argv.push_back(f);
  argv.push_back(file);
  argv.push_back("-o");
  argv.push_back("-");
  FT_ASSIGN_OR_RETURN(ProcessResult r, run_process(argv, ""));
  if (!r.exited_ok()) return FT_ERROR(ErrorCode::kCompileError, "{} {}: {}", file, r.describe(), r.output);
  return r.output;
}

TEST(VendorIsolation, NoPtxReachesAnAmdCompile) {
  auto clang = open_clang();
  ASSERT_TRUE(clang.ok()) << clang.status().to_string();
  const auto files = kernel_files();
  ASSERT_GE(files.size(), 8u);
  int checked = 0;
  for (const TargetFacts& t : all_targets()) {
    if (!t.is_amd() || !(*clang)->knows_arch(std::string(t.compile_arch))) continue;
    auto target = parse_target_id(t.name);
    ASSERT_TRUE(target.ok());
    const auto flags = compile_flags(*target, "clang");
    for (const auto& file : files) {
      auto out = preprocess((*clang)->location(), flags, file);
      ASSERT_TRUE(out.ok()) << out.status().to_string();
      EXPECT_EQ(asm_statements(*out), 0) << file << " keeps inline asm for " << t.name;
      ++checked;
    }
  }
  EXPECT_GT(checked, 0);
  // Control: the same sources seen as NVIDIA code do carry asm.
  auto gfx = parse_target_id("gfx1150");
  ASSERT_TRUE(gfx.ok());
  auto nvidia = compile_flags(*gfx, "clang");
  for (auto& f : nvidia)
    if (f == "-DFT_AMD=1") f = "-DFT_NVIDIA=1";
  auto out = preprocess((*clang)->location(), nvidia, FT_SOURCE_DIR "/kernel_src/gemm.hip");
  ASSERT_TRUE(out.ok()) << out.status().to_string();
  EXPECT_GT(asm_statements(*out), 0);
}

}  // namespace
}  // namespace ft
