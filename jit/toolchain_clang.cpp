// clang++ >= 17 as an offline HIP compiler: no ROCm install needed, every gfx
// target it knows, output linked by lld into an hsaco.
#include <sys/wait.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <set>
#include <sstream>

#include "jit/subprocess.h"
#include "jit/toolchain.h"
#include "runtime/base/files.h"

namespace ft {
namespace {

constexpr int kMinClangMajor = 17;

class ClangToolchain final : public Toolchain {
 public:
  ClangToolchain(std::string path, std::string version, std::set<std::string> archs)
      : path_(std::move(path)), version_(std::move(version)), archs_(std::move(archs)) {}

  std::string name() const override { return "clang"; }
  std::string version() const override { return version_; }
  std::string location() const override { return path_; }
  Vendor vendor() const override { return Vendor::kAmd; }
  bool knows_arch(const std::string& arch) const override { return archs_.count(arch) > 0; }

  Result<CompileOutput> compile(const CompileJob& job) const override {
    FT_ASSIGN_OR_RETURN(std::string dir, make_temp_dir("ft-clang-"));
    auto result = compile_in(dir, job);
    (void)remove_tree(dir);
    return result;
  }

 private:
  Result<CompileOutput> compile_in(const std::string& dir, const CompileJob& job) const {
    for (const auto& [name, text] : job.headers)
      FT_RETURN_IF_ERROR(write_file_atomic(dir + "/" + name, text.data(), text.size()));
    std::string src = dir + "/" + job.source_name;
    std::string out = dir + "/out.hsaco";
    FT_RETURN_IF_ERROR(write_file_atomic(src, job.source.data(), job.source.size()));
    std::vector<std::string> argv = {path_};
    argv.insert(argv.end(), job.flags.begin(), job.flags.end());
    for (const char* a : {"-I", dir.c_str(), "-o", out.c_str(), src.c_str()}) argv.emplace_back(a);
    FT_ASSIGN_OR_RETURN(ProcessResult run, run_process(argv, dir));
    CompileOutput output;
    output.log = strip_dir(run.output, dir + "/");
    if (!run.exited_ok())
      return Status(ErrorCode::kCompileError, fmt::format("clang {} ({}):\n{}", run.describe(), path_, output.log));
    FT_ASSIGN_OR_RETURN(output.code_object, read_file(out));
    return output;
  }

  static std::string strip_dir(std::string text, const std::string& dir) {
    for (size_t p; (p = text.find(dir)) != std::string::npos;) text.erase(p, dir.size());
    return text;
  }

  std::string path_, version_;
  std::set<std::string> archs_;
};

// "Debian clang version 19.1.7 (3~deb12u1)" -> "19.1.7"
std::string parse_clang_version(const std::string& text) {
  size_t p = text.find("clang version ");
  if (p == std::string::npos) return "";
  p += 14;
  size_t e = text.find_first_of(" \n(", p);
  return text.substr(p, e - p);
}

Result<std::string> find_clang() {
  if (const char* env = std::getenv("FT_CLANG"); env && *env) return std::string(env);
  const char* path_env = std::getenv("PATH");
  std::string path = path_env ? path_env : "/usr/bin:/bin";
  std::vector<std::string> dirs;
  std::stringstream ss(path);
  for (std::string d; std::getline(ss, d, ':');) dirs.push_back(d);
  for (int major = 22; major >= kMinClangMajor; --major)
    for (const auto& d : dirs)
      if (std::filesystem::exists(d + "/clang++-" + std::to_string(major))) return d + "/clang++-" + std::to_string(major);
  for (const auto& d : dirs)
    if (std::filesystem::exists(d + "/clang++")) return d + "/clang++";
  return FT_ERROR(ErrorCode::kNotFound, "no clang++ found (set FT_CLANG, or install clang-19 and lld-19)");
}

}  // namespace

Result<std::unique_ptr<Toolchain>> open_clang() {
  FT_ASSIGN_OR_RETURN(std::string path, find_clang());
  FT_ASSIGN_OR_RETURN(ProcessResult ver, run_process({path, "--version"}, ""));
  std::string version = parse_clang_version(ver.output);
  if (!ver.exited_ok() || version.empty())
    return FT_ERROR(ErrorCode::kNotFound, "{} is not a working clang: {}", path, ver.output);
  if (std::atoi(version.c_str()) < kMinClangMajor)
    return FT_ERROR(ErrorCode::kNotFound, "{} is clang {}; ft needs clang >= {} (set FT_CLANG or install clang-19)",
                    path, version, kMinClangMajor);
  // The processors this clang's AMDGPU backend knows, one per line.
  FT_ASSIGN_OR_RETURN(ProcessResult cpus,
                      run_process({path, "--target=amdgcn-amd-amdhsa", "-nogpulib", "--print-supported-cpus"}, ""));
  std::set<std::string> archs;
  std::stringstream ss(cpus.output);
  for (std::string line; std::getline(ss, line);) {
    line.erase(0, line.find_first_not_of(" \t"));
    line.erase(line.find_last_not_of(" \t\r") + 1);
    if (line.rfind("gfx", 0) == 0) archs.insert(line);
  }
  if (archs.empty())
    return FT_ERROR(ErrorCode::kNotFound, "{} (clang {}) reports no AMDGPU processors; is it built with the AMDGPU target?",
                    path, version);
  return std::unique_ptr<Toolchain>(new ClangToolchain(path, version, std::move(archs)));
}

}  // namespace ft
