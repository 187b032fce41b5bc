#include "jit/code_object_meta.h"

#include <elf.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>

#include <gtest/gtest.h>

#include "runtime/base/files.h"

namespace ft {
namespace {

// ---------------------------------------------------------------------------
// AMD: real code objects from clang-19
// ---------------------------------------------------------------------------

std::string first_existing(const char* env, std::initializer_list<const char*> candidates) {
  if (const char* v = std::getenv(env); v && *v) return v;
  for (const char* c : candidates)
    if (::access(c, X_OK) == 0) return c;
  return *candidates.begin();
}

std::string clang_path() {
  return first_existing("FT_CLANG", {"/usr/bin/clang++-19", "/usr/lib/llvm-19/bin/clang++"});
}
std::string readobj_path() {
  return first_existing("FT_LLVM_READOBJ", {"/usr/bin/llvm-readobj-19", "/usr/lib/llvm-19/bin/llvm-readobj"});
}

// Runs a shell command; returns its exit status and stdout.
int run(const std::string& command, std::string* out) {
  FILE* pipe = ::popen(command.c_str(), "r");
  if (!pipe) return -1;
  char buf[4096];
  size_t n;
  while ((n = std::fread(buf, 1, sizeof(buf), pipe)) > 0) out->append(buf, n);
  return ::pclose(pipe);
}

class AmdCodeObject : public ::testing::TestWithParam<const char*> {
 protected:
  void SetUp() override {
    auto dir = make_temp_dir("ft-meta-test-");
    ASSERT_TRUE(dir.ok());
    dir_ = *dir;
    hsaco_ = dir_ + "/probe.hsaco";
    std::string log;
    std::string cmd = clang_path() + " -x hip --offload-arch=" + GetParam() +
                      " -nogpuinc -nogpulib --offload-device-only --no-gpu-bundle-output -O3 -o " +
                      hsaco_ + " " FT_SOURCE_DIR "/tests/cache/data/resources_probe.hip 2>&1";
    ASSERT_EQ(run(cmd, &log), 0) << cmd << "\n" << log;
    auto bytes = read_file(hsaco_);
    ASSERT_TRUE(bytes.ok());
    bytes_ = *bytes;
  }
  void TearDown() override { (void)remove_tree(dir_); }

  const KernelResources& kernel(const std::vector<KernelResources>& all, const std::string& name) {
    for (const auto& k : all)
      if (k.symbol == name) return k;
    ADD_FAILURE() << "no kernel " << name;
    static const KernelResources kNone;
    return kNone;
  }

  std::string dir_, hsaco_, bytes_;
};

// The top-level members of each kernel in `llvm-readobj --notes` output (YAML):
// "  - .name: x" opens a kernel, "    .key: value" belongs to it, deeper lines
// are its argument list.
std::vector<std::map<std::string, std::string>> readobj_kernels(const std::string& text) {
  std::vector<std::map<std::string, std::string>> kernels;
  bool in_kernels = false;
  size_t pos = 0;
  while (pos < text.size()) {
    size_t end = text.find('\n', pos);
    std::string line = text.substr(pos, end == std::string::npos ? std::string::npos : end - pos);
    pos = end == std::string::npos ? text.size() : end + 1;
    if (line.find("amdhsa.kernels:") != std::string::npos) {
      in_kernels = true;
      continue;
    }
    if (!in_kernels) continue;
    if (!line.empty() && line[0] != ' ') break;  // next top-level key
    std::string member;
    if (line.rfind("  - .", 0) == 0) {
      kernels.emplace_back();
      member = line.substr(4);
    } else if (line.rfind("    .", 0) == 0) {
      member = line.substr(4);
    } else {
      continue;
    }
    size_t colon = member.find(':');
    if (kernels.empty() || colon == std::string::npos) continue;
    std::string value = member.substr(colon + 1);
    value.erase(0, value.find_first_not_of(' '));
    kernels.back()[member.substr(0, colon)] = value;
  }
  return kernels;
}

TEST_P(AmdCodeObject, ResourcesMatchLlvmReadobj) {
  auto kernels = read_amdgpu_kernel_resources(bytes_);
  ASSERT_TRUE(kernels.ok()) << kernels.status().to_string();
  std::string notes;
  ASSERT_EQ(run(readobj_path() + " --notes " + hsaco_, &notes), 0) << notes;
  auto expected = readobj_kernels(notes);
  ASSERT_EQ(kernels->size(), 3u);
  ASSERT_EQ(expected.size(), kernels->size()) << notes;

  for (size_t i = 0; i < expected.size(); ++i) {
    auto& want = expected[i];
    const KernelResources& got = (*kernels)[i];
    auto number = [&](const char* key) { return want.count(key) ? std::stoi(want[key]) : -1; };
    SCOPED_TRACE(want[".name"]);
    EXPECT_EQ(got.symbol, want[".name"]);
    EXPECT_EQ(got.vgprs, number(".vgpr_count"));
    EXPECT_EQ(got.sgprs, number(".sgpr_count"));
    EXPECT_EQ(got.agprs, number(".agpr_count"));
    EXPECT_EQ(got.vgpr_spills, number(".vgpr_spill_count"));
    EXPECT_EQ(got.sgpr_spills, number(".sgpr_spill_count"));
    EXPECT_EQ(got.lds_bytes, number(".group_segment_fixed_size"));
    EXPECT_EQ(got.scratch_bytes, number(".private_segment_fixed_size"));
    EXPECT_EQ(got.wavefront_size, number(".wavefront_size"));
    EXPECT_EQ(got.max_workgroup_size, number(".max_flat_workgroup_size"));
    EXPECT_EQ(got.registers, -1) << "NVIDIA-only field";
  }
}

TEST_P(AmdCodeObject, ResourcesReflectTheSource) {
  auto kernels = read_amdgpu_kernel_resources(bytes_);
  ASSERT_TRUE(kernels.ok()) << kernels.status().to_string();
  bool wave64 = std::string(GetParam()).rfind("gfx9", 0) == 0;

  const KernelResources& scale = kernel(*kernels, "probe_scale");
  EXPECT_EQ(scale.max_workgroup_size, 256);
  EXPECT_EQ(scale.lds_bytes, 0);
  EXPECT_EQ(scale.scratch_bytes, 0);
  EXPECT_FALSE(scale.has_spills());
  EXPECT_GT(scale.vgprs, 0);
  EXPECT_GT(scale.sgprs, 0);
  EXPECT_EQ(scale.wavefront_size, wave64 ? 64 : 32);
  // Accumulation registers exist from gfx90a on, and only there is the field emitted.
  if (wave64) EXPECT_GE(scale.agprs, 0);
  else EXPECT_EQ(scale.agprs, -1);

  const KernelResources& lds = kernel(*kernels, "probe_lds_scratch");
  EXPECT_EQ(lds.max_workgroup_size, 128);
  EXPECT_EQ(lds.lds_bytes, 512 * 4) << "float tile[512]";
  EXPECT_GE(lds.scratch_bytes, 300 * 4) << "float local[300] lives in scratch";

  const KernelResources& spills = kernel(*kernels, "probe_spills");
  EXPECT_EQ(spills.max_workgroup_size, 64);
  EXPECT_GT(spills.vgpr_spills, 0);
  EXPECT_TRUE(spills.has_spills());
  EXPECT_GT(spills.scratch_bytes, 0);
}

// Cutting the file anywhere before the end of its note never reads out of
// bounds and always reports corruption.
TEST_P(AmdCodeObject, TruncatedFileIsCorrupt) {
  auto eh = *reinterpret_cast<const Elf64_Ehdr*>(bytes_.data());
  uint64_t note_end = 0;
  for (int i = 0; i < eh.e_phnum; ++i) {
    auto ph = *reinterpret_cast<const Elf64_Phdr*>(bytes_.data() + eh.e_phoff + i * eh.e_phentsize);
    if (ph.p_type == PT_NOTE) note_end = std::max(note_end, ph.p_offset + ph.p_filesz);
  }
  ASSERT_GT(note_end, 0u);
  for (size_t len = 0; len < note_end; ++len) {
    auto r = read_amdgpu_kernel_resources(std::string_view(bytes_).substr(0, len));
    ASSERT_FALSE(r.ok()) << "length " << len;
    ASSERT_EQ(r.status().code(), ErrorCode::kCorrupt) << "length " << len << ": " << r.status().to_string();
  }
  // Past the note (section headers cut off), the program headers still lead to it.
  for (size_t len = note_end; len < bytes_.size(); len += 97) {
    auto r = read_amdgpu_kernel_resources(std::string_view(bytes_).substr(0, len));
    if (r.ok()) EXPECT_EQ(r->size(), 3u);
    else EXPECT_EQ(r.status().code(), ErrorCode::kCorrupt);
  }
}

TEST_P(AmdCodeObject, HostileHeadersAreCorrupt) {
  auto patched = [&](auto patch) {
    std::string copy = bytes_;
    patch(reinterpret_cast<Elf64_Ehdr*>(copy.data()), copy);
    return read_amdgpu_kernel_resources(copy);
  };
  auto expect_corrupt = [](const Result<std::vector<KernelResources>>& r, const char* what) {
    ASSERT_FALSE(r.ok()) << what;
    EXPECT_EQ(r.status().code(), ErrorCode::kCorrupt) << what << ": " << r.status().to_string();
  };
  expect_corrupt(patched([](Elf64_Ehdr* eh, std::string&) { eh->e_phoff = ~0ull - 8; }), "phoff");
  expect_corrupt(patched([](Elf64_Ehdr* eh, std::string&) { eh->e_phnum = 0xffff; }), "phnum");
  expect_corrupt(patched([](Elf64_Ehdr* eh, std::string&) { eh->e_phentsize = 8; }), "phentsize");
  auto note_header = [](Elf64_Ehdr* eh, std::string& f) -> Elf64_Nhdr* {
    for (int i = 0; i < eh->e_phnum; ++i) {
      auto* ph = reinterpret_cast<Elf64_Phdr*>(f.data() + eh->e_phoff + i * eh->e_phentsize);
      if (ph->p_type == PT_NOTE) return reinterpret_cast<Elf64_Nhdr*>(f.data() + ph->p_offset);
    }
    return nullptr;
  };
  expect_corrupt(patched([&](Elf64_Ehdr* eh, std::string& f) {
                   for (int i = 0; i < eh->e_phnum; ++i) {
                     auto* ph = reinterpret_cast<Elf64_Phdr*>(f.data() + eh->e_phoff + i * eh->e_phentsize);
                     if (ph->p_type == PT_NOTE) ph->p_filesz = ~0ull - ph->p_offset + 2;
                   }
                 }),
                 "note segment size");
  expect_corrupt(patched([&](Elf64_Ehdr* eh, std::string& f) { note_header(eh, f)->n_descsz = 0xfffffff0u; }),
                 "note descsz");
  expect_corrupt(patched([&](Elf64_Ehdr* eh, std::string& f) { note_header(eh, f)->n_namesz = 0xfffffffcu; }),
                 "note namesz");
  // MessagePack with a reserved type byte (0xc1) where the map header is.
  expect_corrupt(patched([&](Elf64_Ehdr* eh, std::string& f) {
                   Elf64_Nhdr* n = note_header(eh, f);
                   char* desc = reinterpret_cast<char*>(n + 1) + ((n->n_namesz + 3) & ~3u);
                   desc[0] = static_cast<char>(0xc1);
                 }),
                 "msgpack");
}

INSTANTIATE_TEST_SUITE_P(CodeObjectMeta, AmdCodeObject, ::testing::Values("gfx1100", "gfx90a"));

TEST(CodeObjectMeta, GarbageIsCorruptAndOtherElfIsRejected) {
  std::string garbage(4096, '\x5a');
  auto r = read_amdgpu_kernel_resources(garbage);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), ErrorCode::kCorrupt);

  std::string elf_magic_only = std::string(ELFMAG) + std::string(60, '\0');
  r = read_amdgpu_kernel_resources(elf_magic_only);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), ErrorCode::kCorrupt);

  auto self = read_file("/proc/self/exe");
  ASSERT_TRUE(self.ok());
  r = read_amdgpu_kernel_resources(*self);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), ErrorCode::kInvalidArgument) << r.status().to_string();
}

// ---------------------------------------------------------------------------
// NVIDIA: ptxas reports
// ---------------------------------------------------------------------------

std::string fixture(const std::string& name) {
  auto text = read_file(FT_SOURCE_DIR "/tests/cache/data/" + name);
  EXPECT_TRUE(text.ok()) << text.status().to_string();
  return text.ok() ? *text : std::string();
}

const KernelResources* find(const std::vector<KernelResources>& all, const std::string& name) {
  for (const auto& k : all)
    if (k.symbol == name) return &k;
  return nullptr;
}

TEST(CodeObjectMeta, PtxasReportFromNvrtc13Sm90) {
  auto kernels = parse_ptxas_report(fixture("ptxas_nvrtc13.0_sm_90.log"));
  ASSERT_TRUE(kernels.ok()) << kernels.status().to_string();
  ASSERT_EQ(kernels->size(), 4u) << "entry functions only, not the __noinline__ helper";
  EXPECT_EQ((*kernels)[0].symbol, "ft_spill");
  EXPECT_EQ((*kernels)[3].symbol, "ft_rmsnorm_f32");

  const KernelResources* spill = find(*kernels, "ft_spill");
  ASSERT_TRUE(spill);
  EXPECT_EQ(spill->registers, 32);
  EXPECT_EQ(spill->scratch_bytes, 2800);
  EXPECT_EQ(spill->lds_bytes, 0);
  EXPECT_FALSE(spill->has_spills()) << "a stack frame is not a spill";

  const KernelResources* copy = find(*kernels, "ft_copy");
  ASSERT_TRUE(copy);
  EXPECT_EQ(copy->registers, 40);
  EXPECT_EQ(copy->scratch_bytes, 160) << "the helper's 0-byte frame that follows must not overwrite it";

  const KernelResources* norm = find(*kernels, "ft_rmsnorm_f32");
  ASSERT_TRUE(norm);
  EXPECT_EQ(norm->registers, 15);
  EXPECT_EQ(norm->lds_bytes, 128);
  EXPECT_EQ(norm->scratch_bytes, 0);
  for (const auto& k : *kernels) {
    EXPECT_EQ(k.wavefront_size, 32);
    EXPECT_EQ(k.vgprs, -1) << "AMD-only field";
    EXPECT_EQ(k.agprs, -1);
  }
}

TEST(CodeObjectMeta, PtxasReportWithSpillsFromNvrtc13Sm80) {
  auto kernels = parse_ptxas_report(fixture("ptxas_nvrtc13.0_sm_80_maxrregcount24.log"));
  ASSERT_TRUE(kernels.ok()) << kernels.status().to_string();
  ASSERT_EQ(kernels->size(), 4u);
  const KernelResources* pressure = find(*kernels, "ft_pressure");
  ASSERT_TRUE(pressure);
  EXPECT_EQ(pressure->registers, 24);
  EXPECT_EQ(pressure->spill_store_bytes, 1240);
  EXPECT_EQ(pressure->spill_load_bytes, 1520);
  EXPECT_EQ(pressure->scratch_bytes, 736);
  EXPECT_TRUE(pressure->has_spills());
  const KernelResources* norm = find(*kernels, "ft_rmsnorm_f32");
  ASSERT_TRUE(norm);
  EXPECT_EQ(norm->lds_bytes, 128) << "cmem[0] after smem is not shared memory";
  EXPECT_FALSE(norm->has_spills());
}

TEST(CodeObjectMeta, PtxasReportWordingVariants) {
  // Older ptxas: stack-frame line without the "ptxas ." prefix, no barrier
  // count, lmem, CRLF line ends, a quoted name in "Function properties".
  const char* log =
      "ptxas info    : 0 bytes gmem\r\n"
      "ptxas info    : Compiling entry function '_Z6kernelPf' for 'sm_70'\r\n"
      "ptxas info    : Function properties for '_Z6kernelPf'\r\n"
      "    8 bytes stack frame, 4 bytes spill stores, 4 bytes spill loads\r\n"
      "ptxas info    : Used 63 registers, 16 bytes lmem, 356 bytes cmem[0]\r\n"
      "ptxas info    : Compiling entry function 'no_smem' for 'sm_70'\n"
      "ptxas info    : Used 0 registers, 320 bytes cmem[0]\n"
      "ptxas info    : Function properties for _Z6helperv\n"
      "    64 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads\n"
      "ptxas info    : Compiling entry function 'smem_only' for 'sm_75'\n"
      "ptxas info    : Used 12 registers, 4096 bytes smem\n";
  auto kernels = parse_ptxas_report(log);
  ASSERT_TRUE(kernels.ok()) << kernels.status().to_string();
  ASSERT_EQ(kernels->size(), 3u);

  const KernelResources& a = (*kernels)[0];
  EXPECT_EQ(a.symbol, "_Z6kernelPf");
  EXPECT_EQ(a.registers, 63);
  EXPECT_EQ(a.spill_store_bytes, 4);
  EXPECT_EQ(a.spill_load_bytes, 4);
  EXPECT_EQ(a.scratch_bytes, 16) << "the larger of stack frame and lmem";

  const KernelResources& b = (*kernels)[1];
  EXPECT_EQ(b.symbol, "no_smem");
  EXPECT_EQ(b.registers, 0);
  EXPECT_EQ(b.lds_bytes, 0);
  EXPECT_EQ(b.scratch_bytes, 0) << "the helper's frame belongs to the helper";

  const KernelResources& c = (*kernels)[2];
  EXPECT_EQ(c.symbol, "smem_only");
  EXPECT_EQ(c.registers, 12);
  EXPECT_EQ(c.lds_bytes, 4096);
}

TEST(CodeObjectMeta, PtxasReportWithoutEntriesIsNotFound) {
  for (const char* log : {"", "ptxas info    : 0 bytes gmem\n", "garbage\nUsed 12 registers\n"}) {
    auto r = parse_ptxas_report(log);
    ASSERT_FALSE(r.ok()) << log;
    EXPECT_EQ(r.status().code(), ErrorCode::kNotFound);
  }
}

// ---------------------------------------------------------------------------
// JSON storage
// ---------------------------------------------------------------------------

TEST(CodeObjectMeta, JsonRoundTrip) {
  KernelResources r;
  r.symbol = "probe";
  r.vgprs = 1;
  r.sgprs = 2;
  r.agprs = 3;
  r.vgpr_spills = 4;
  r.sgpr_spills = 5;
  r.registers = 6;
  r.spill_store_bytes = 7;
  r.spill_load_bytes = 8;
  r.lds_bytes = 9;
  r.scratch_bytes = 10;
  r.wavefront_size = 11;
  r.max_workgroup_size = 12;
  KernelResources back = kernel_resources_from_json(nlohmann::json::parse(to_json(r).dump()));
  EXPECT_EQ(to_json(back), to_json(r));
  EXPECT_EQ(back.symbol, "probe");
  EXPECT_EQ(back.max_workgroup_size, 12);
}

TEST(CodeObjectMeta, JsonWithWrongShapeKeepsDefaults) {
  KernelResources defaults;
  for (const char* text : {"[]", "null", "17", R"({"vgprs": "many", "lds_bytes": 1e300})",
                           R"({"registers": 99999999999})"}) {
    KernelResources r = kernel_resources_from_json(nlohmann::json::parse(text));
    EXPECT_EQ(to_json(r), to_json(defaults)) << text;
  }
}

}  // namespace
}  // namespace ft
