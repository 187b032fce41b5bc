// Helpers shared by the JIT tests: where the built binaries are, a scratch
// directory, and running ft-jit with its own environment.
#pragma once

#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "jit/compile_service.h"
#include "jit/subprocess.h"
#include "runtime/base/files.h"

namespace ft::testing {

inline std::string bin_dir() {
  const char* env = std::getenv("FT_BIN_DIR");
  return env && *env ? env : FT_BINARY_DIR "/bin";
}

class ScratchDir {
 public:
  ScratchDir() {
    auto d = make_temp_dir("ft-jit-test-");
    EXPECT_TRUE(d.ok()) << d.status().to_string();
    path_ = d.ok() ? *d : "/tmp";
  }
  ~ScratchDir() { (void)remove_tree(path_); }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

// One compile service for a test binary: the built worker, two jobs, no cache
// (every request compiles).
inline CompileService& test_compile_service() {
  static std::unique_ptr<CompileService> s = [] {
    CompileServiceOptions o;
    o.worker_path = bin_dir() + "/ft-compile-worker";
    o.jobs = 2;
    auto r = CompileService::create(nullptr, o);
    EXPECT_TRUE(r.ok()) << r.status().to_string();
    return r.ok() ? std::move(r).value() : nullptr;
  }();
  return *s;
}

// Runs `env VARS... bin_dir()/ft-jit ARGS...`.
inline ProcessResult run_ft_jit(const std::vector<std::string>& env, const std::vector<std::string>& args) {
  std::vector<std::string> argv = {"/usr/bin/env"};
  argv.insert(argv.end(), env.begin(), env.end());
  argv.push_back(bin_dir() + "/ft-jit");
  argv.insert(argv.end(), args.begin(), args.end());
  auto r = run_process(argv, "");
  EXPECT_TRUE(r.ok()) << r.status().to_string();
  return r.ok() ? *r : ProcessResult{};
}

// The last line of output that parses as a JSON object or array.
inline std::string last_json(const std::string& output) {
  size_t obj = output.rfind("\n{"), arr = output.rfind("\n[");
  size_t start = output.rfind('{', 0) == 0 || output.rfind('[', 0) == 0 ? 0 : std::string::npos;
  size_t best = std::string::npos;
  for (size_t p : {obj, arr})
    if (p != std::string::npos && (best == std::string::npos || p > best)) best = p + 1;
  if (best == std::string::npos) best = start;
  return best == std::string::npos ? "" : output.substr(best);
}

}  // namespace ft::testing
