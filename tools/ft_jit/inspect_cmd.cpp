#include <unistd.h>

#include <cstdio>
#include <filesystem>

#include <nlohmann/json.hpp>

#include "jit/kernel_resources.h"
#include "jit/code_object_meta.h"
#include "jit/subprocess.h"
#include "runtime/base/files.h"
#include "tools/common/cli_args.h"
#include "tools/ft_jit/commands.h"
#include "tools/ft_jit/jit_session.h"

namespace ft::tools {
namespace {

std::string inspect_help() {
  return std::string(
             "usage: ft-jit inspect [--arch A [--model PATH]] [--kernel SUBSTR] [--isa] [--json]\n"
             "Per kernel: registers (VGPR/SGPR/AGPR on AMD, registers on NVIDIA), spills, LDS or\n"
             "shared memory, scratch, and waves per SIMD (warps per SM on NVIDIA) from the target\n"
             "facts. With --arch, the catalog for that target (or --model's kernels) as the current\n"
             "kernel sources build it (the built-in ones, or FT_KERNEL_SRC_DIR's: set it as for the\n"
             "run you inspect), compiled on demand into the cache; without it, every kernel already\n"
             "in the cache.\n") +
         kKernelSelectionHelp +
         "  --isa           print the disassembly (llvm-objdump for AMD, nvdisasm or cuobjdump for\n"
         "                  NVIDIA; without either, NVRTC's PTX of the same sources)\n"
         "  --json          print the rows as JSON\n";
}

struct Row {
  std::string arch;
  KernelResources res;
  std::string code_object;  // only when --isa
  std::string ptx;          // NVIDIA, when no SASS disassembler is installed
};

nlohmann::json row_json(const Row& r, int waves) {
  nlohmann::json j = to_json(r.res);
  j["arch"] = r.arch;
  j["occupancy_waves"] = waves;
  return j;
}

int occupancy_of(const Row& r) {
  auto target = parse_target_id(r.arch);
  if (!target.ok()) return 0;
  return occupancy_waves(*target->facts, r.res, r.res.max_workgroup_size);
}

// The disassembler for a code object: llvm-objdump next to the clang in use
// (or on the PATH) for AMD; nvdisasm, else cuobjdump, for NVIDIA.
std::vector<std::string> disassembler_for(const TargetId& target, const std::string& file) {
  namespace fs = std::filesystem;
  if (target.facts->is_amd()) {
    std::vector<std::string> candidates;
    if (const char* clang = std::getenv("FT_CLANG"))
      candidates.push_back((fs::path(clang).parent_path() / "llvm-objdump").string());
    for (int v = 22; v >= 17; --v) candidates.push_back("/usr/bin/llvm-objdump-" + std::to_string(v));
    candidates.push_back("/usr/bin/llvm-objdump");
    for (const auto& c : candidates)
      if (::access(c.c_str(), X_OK) == 0)
        return {c, "-d", "--mcpu=" + std::string(target.facts->compile_arch), file};
    return {};
  }
  std::vector<std::string> dirs = {"/usr/local/cuda/bin"};
  if (const char* path = std::getenv("PATH"))
    for (std::string rest = path; !rest.empty();) {
      size_t colon = rest.find(':');
      dirs.push_back(rest.substr(0, colon));
      rest = colon == std::string::npos ? "" : rest.substr(colon + 1);
    }
  for (const char* tool : {"nvdisasm", "cuobjdump"})
    for (const auto& dir : dirs) {
      std::string exe = dir + "/" + tool;
      if (::access(exe.c_str(), X_OK) == 0)
        return std::string(tool) == "nvdisasm" ? std::vector<std::string>{exe, "-c", file}
                                               : std::vector<std::string>{exe, "-sass", file};
    }
  return {};
}

int print_isa(const Row& r) {
  auto target = parse_target_id(r.arch);
  auto dir = make_temp_dir("ft-isa-");
  if (!target.ok() || !dir.ok()) return 1;
  std::string file = *dir + "/code.o";
  int rc = 1;
  if (write_file_atomic(file, r.code_object.data(), r.code_object.size()).ok()) {
    auto argv = disassembler_for(*target, file);
    if (argv.empty() && !r.ptx.empty()) {
      std::printf("==== %s (%s): PTX (no nvdisasm or cuobjdump found for SASS) ====\n%s\n", r.res.symbol.c_str(),
                  r.arch.c_str(), r.ptx.c_str());
      rc = 0;
    } else if (argv.empty()) {
      std::fprintf(stderr, "ft-jit inspect: no disassembler found for %s (install llvm-19 for AMD, the CUDA toolkit's nvdisasm for NVIDIA)\n",
                   r.arch.c_str());
    } else if (auto out = run_process(argv, ""); out.ok()) {
      std::printf("==== %s (%s) ====\n%s\n", r.res.symbol.c_str(), r.arch.c_str(), out->output.c_str());
      rc = out->exited_ok() ? 0 : 1;
    }
  }
  (void)remove_tree(*dir);
  return rc;
}

}  // namespace

int cmd_inspect(int argc, char** argv) {
  auto parsed = CliArgs::parse(
      {.value_options = {"--arch", "--kernel", "--model", "--max-batch", "--ctx"}, .flags = {"--isa", "--json"}},
      argc, argv);
  if (parsed.ok() && parsed->help()) {
    std::fputs(inspect_help().c_str(), stdout);
    return 0;
  }
  const Result<PlanOptions> plan_options =
      parsed.ok() ? kernel_plan_options(*parsed) : Result<PlanOptions>(parsed.status());
  const Status& selection = plan_options.status();
  if (!selection.ok() || !parsed->positional().empty() || (parsed->has("--model") && !parsed->has("--arch"))) {
    std::fprintf(stderr, "ft-jit inspect: %s\n\n%s",
                 !selection.ok()                   ? selection.user_message().c_str()
                 : !parsed->positional().empty() ? "unexpected argument"
                                                  : "--model needs --arch",
                 inspect_help().c_str());
    return 2;
  }
  const CliArgs& args = *parsed;
  const std::string filter = args.get("--kernel");
  std::vector<Row> rows;
  int failures = 0;
  if (args.has("--arch")) {
    auto session = open_session(args.get("--arch"), 0, "");
    if (!session) return 1;
    // Without a SASS disassembler, --isa on NVIDIA shows NVRTC's PTX instead.
    const bool want_ptx = args.has("--isa") && !session->target.facts->is_amd() &&
                          disassembler_for(session->target, "x").empty();
    auto selected = selected_kernels(args, *plan_options, session->target);
    if (!selected.ok()) {
      std::fprintf(stderr, "ft-jit inspect: %s\n", selected.status().user_message().c_str());
      return 1;
    }
    for (const auto& spec : *selected) {
      auto k = session->service->get(spec, session->target);
      if (!k.ok()) {
        std::fprintf(stderr, "ft-jit inspect: %s\n", k.status().message().c_str());
        ++failures;
        continue;
      }
      Row row{k->target, k->resources, args.has("--isa") ? k->code_object : "", ""};
      if (want_ptx) {
        auto ptx = session->service->ptx(spec, session->target);
        if (ptx.ok()) row.ptx = *ptx;
        else std::fprintf(stderr, "ft-jit inspect: %s\n", ptx.status().message().c_str());
      }
      rows.push_back(std::move(row));
    }
  } else {
    auto cache = open_cache_or_report();
    if (!cache) return 1;
    auto list = cache->list();
    if (!list.ok()) {
      std::fprintf(stderr, "ft-jit inspect: %s\n", list.status().message().c_str());
      return 1;
    }
    for (const auto& e : *list) {
      if (e.fields.kernel.find(filter) == std::string::npos) continue;
      Row row{e.fields.arch, e.resources, "", ""};
      if (args.has("--isa"))
        if (auto hit = cache->get(e.key); hit.ok() && hit->has_value()) row.code_object = (*hit)->blob;
      rows.push_back(std::move(row));
    }
  }
  if (rows.empty() && failures == 0) {
    std::fprintf(stderr, "ft-jit inspect: no kernel matches%s\n", args.has("--arch") ? "" : " in the cache (run ft-jit warm --arch A first, or pass --arch)");
    return 1;
  }
  if (args.has("--isa")) {
    for (const auto& r : rows) failures += print_isa(r);
    return failures ? 1 : 0;
  }
  if (args.has("--json")) {
    nlohmann::json out = nlohmann::json::array();
    for (const auto& r : rows) out.push_back(row_json(r, occupancy_of(r)));
    std::printf("%s\n", out.dump(2).c_str());
    return failures ? 1 : 0;
  }
  std::printf("%-34s %-14s %5s %5s %5s %6s %7s %7s %7s %5s\n", "kernel", "arch", "vgpr", "sgpr", "agpr", "regs",
              "spills", "lds", "scratch", "occ");
  auto num = [](int v) { return v < 0 ? std::string("-") : std::to_string(v); };
  for (const auto& r : rows) {
    int spills = r.res.vgpr_spills + r.res.sgpr_spills + r.res.spill_store_bytes + r.res.spill_load_bytes;
    std::printf("%-34s %-14s %5s %5s %5s %6s %7d %7d %7d %5d\n", r.res.symbol.c_str(), r.arch.c_str(),
                num(r.res.vgprs).c_str(), num(r.res.sgprs).c_str(), num(r.res.agprs).c_str(),
                num(r.res.registers).c_str(), spills, r.res.lds_bytes, r.res.scratch_bytes, occupancy_of(r));
  }
  std::printf("occ: resident waves per SIMD (AMD) or warps per SM (NVIDIA) from registers, LDS and block size\n");
  return failures ? 1 : 0;
}

}  // namespace ft::tools
