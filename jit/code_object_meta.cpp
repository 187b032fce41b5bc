#include "jit/code_object_meta.h"

#include <elf.h>

#include <bit>
#include <charconv>
#include <cstdint>
#include <cstring>
#include <limits>
#include <optional>

namespace ft {
namespace {

// ---------------------------------------------------------------------------
// AMD: ELF notes
// ---------------------------------------------------------------------------

constexpr uint16_t kEmAmdgpu = 224;              // EM_AMDGPU (older <elf.h> lacks it)
constexpr uint32_t kNtAmdgpuMetadata = 32;       // NT_AMDGPU_METADATA
constexpr std::string_view kAmdgpuNoteName("AMDGPU\0", 7);

static_assert(std::endian::native == std::endian::little,
              "the ELF reader copies little-endian headers as-is");

// True if [offset, offset + size) lies inside a buffer of `total` bytes,
// without overflowing.
bool in_bounds(uint64_t offset, uint64_t size, uint64_t total) {
  return offset <= total && size <= total - offset;
}

template <typename T>
T read_struct(std::string_view bytes, uint64_t offset) {
  T value;
  std::memcpy(&value, bytes.data() + offset, sizeof(T));
  return value;
}

uint64_t align_up(uint64_t value, uint64_t alignment) {
  return (value + alignment - 1) / alignment * alignment;
}

// The descriptor of the AMDGPU metadata note in one note area, if present.
Result<std::optional<std::string_view>> find_metadata_note(std::string_view area,
                                                           uint64_t alignment) {
  alignment = alignment == 8 ? 8 : 4;
  uint64_t pos = 0;
  while (area.size() - pos >= sizeof(Elf64_Nhdr)) {
    auto header = read_struct<Elf64_Nhdr>(area, pos);
    uint64_t name_at = pos + sizeof(Elf64_Nhdr);
    uint64_t desc_at = align_up(name_at + header.n_namesz, alignment);
    if (!in_bounds(name_at, header.n_namesz, area.size()) ||
        !in_bounds(desc_at, header.n_descsz, area.size()))
      return FT_ERROR(ErrorCode::kCorrupt, "ELF note at offset {} overruns its note area", pos);
    std::string_view name = area.substr(name_at, header.n_namesz);
    if (header.n_type == kNtAmdgpuMetadata && name == kAmdgpuNoteName)
      return std::optional<std::string_view>(area.substr(desc_at, header.n_descsz));
    pos = align_up(desc_at + header.n_descsz, alignment);
    if (pos > area.size()) break;
  }
  return std::optional<std::string_view>();
}

// Searches PT_NOTE segments first (what the loader reads), then SHT_NOTE sections.
Result<std::string_view> find_amdgpu_metadata(std::string_view elf) {
  if (elf.size() < sizeof(Elf64_Ehdr) || std::memcmp(elf.data(), ELFMAG, SELFMAG) != 0)
    return FT_ERROR(ErrorCode::kCorrupt, "not an ELF file ({} bytes)", elf.size());
  auto eh = read_struct<Elf64_Ehdr>(elf, 0);
  if (eh.e_ident[EI_CLASS] != ELFCLASS64 || eh.e_ident[EI_DATA] != ELFDATA2LSB)
    return FT_ERROR(ErrorCode::kCorrupt, "not a 64-bit little-endian ELF file");
  if (eh.e_machine != kEmAmdgpu)
    return FT_ERROR(ErrorCode::kInvalidArgument, "ELF machine {} is not AMDGPU ({})", eh.e_machine,
                    kEmAmdgpu);

  if (eh.e_phnum > 0) {
    if (eh.e_phentsize < sizeof(Elf64_Phdr) ||
        !in_bounds(eh.e_phoff, uint64_t{eh.e_phnum} * eh.e_phentsize, elf.size()))
      return FT_ERROR(ErrorCode::kCorrupt, "ELF program headers out of bounds");
    for (uint64_t i = 0; i < eh.e_phnum; ++i) {
      auto ph = read_struct<Elf64_Phdr>(elf, eh.e_phoff + i * eh.e_phentsize);
      if (ph.p_type != PT_NOTE) continue;
      if (!in_bounds(ph.p_offset, ph.p_filesz, elf.size()))
        return FT_ERROR(ErrorCode::kCorrupt, "ELF note segment {} out of bounds", i);
      FT_ASSIGN_OR_RETURN(auto desc, find_metadata_note(elf.substr(ph.p_offset, ph.p_filesz), ph.p_align));
      if (desc) return *desc;
    }
  }
  if (eh.e_shnum > 0) {
    if (eh.e_shentsize < sizeof(Elf64_Shdr) ||
        !in_bounds(eh.e_shoff, uint64_t{eh.e_shnum} * eh.e_shentsize, elf.size()))
      return FT_ERROR(ErrorCode::kCorrupt, "ELF section headers out of bounds");
    for (uint64_t i = 0; i < eh.e_shnum; ++i) {
      auto sh = read_struct<Elf64_Shdr>(elf, eh.e_shoff + i * eh.e_shentsize);
      if (sh.sh_type != SHT_NOTE) continue;
      if (!in_bounds(sh.sh_offset, sh.sh_size, elf.size()))
        return FT_ERROR(ErrorCode::kCorrupt, "ELF note section {} out of bounds", i);
      FT_ASSIGN_OR_RETURN(auto desc, find_metadata_note(elf.substr(sh.sh_offset, sh.sh_size), sh.sh_addralign));
      if (desc) return *desc;
    }
  }
  return FT_ERROR(ErrorCode::kNotFound, "no NT_AMDGPU_METADATA note in the code object");
}

// An integer member that fits an int, or nullopt (absent or mistyped).
std::optional<int> int_member(const nlohmann::json& object, const char* name) {
  auto it = object.find(name);
  if (it == object.end() || !it->is_number_integer()) return std::nullopt;
  if (it->is_number_unsigned()) {
    auto v = it->get<uint64_t>();
    if (v > static_cast<uint64_t>(std::numeric_limits<int>::max())) return std::nullopt;
    return static_cast<int>(v);
  }
  auto v = it->get<int64_t>();
  if (v < std::numeric_limits<int>::min() || v > std::numeric_limits<int>::max()) return std::nullopt;
  return static_cast<int>(v);
}

std::string string_member(const nlohmann::json& object, const char* name) {
  auto it = object.find(name);
  return it != object.end() && it->is_string() ? it->get<std::string>() : std::string();
}

Result<KernelResources> amdgpu_kernel(const nlohmann::json& kernel, size_t index) {
  if (!kernel.is_object())
    return FT_ERROR(ErrorCode::kCorrupt, "amdhsa.kernels[{}] is not a map", index);
  KernelResources r;
  r.symbol = string_member(kernel, ".name");
  if (r.symbol.empty()) {
    r.symbol = string_member(kernel, ".symbol");
    if (r.symbol.ends_with(".kd")) r.symbol.resize(r.symbol.size() - 3);
  }
  if (r.symbol.empty())
    return FT_ERROR(ErrorCode::kCorrupt, "amdhsa.kernels[{}] has neither .name nor .symbol", index);
  const std::pair<int*, const char*> fields[] = {
      {&r.vgprs, ".vgpr_count"},
      {&r.sgprs, ".sgpr_count"},
      {&r.agprs, ".agpr_count"},
      {&r.vgpr_spills, ".vgpr_spill_count"},
      {&r.sgpr_spills, ".sgpr_spill_count"},
      {&r.lds_bytes, ".group_segment_fixed_size"},
      {&r.scratch_bytes, ".private_segment_fixed_size"},
      {&r.wavefront_size, ".wavefront_size"},
      {&r.max_workgroup_size, ".max_flat_workgroup_size"},
  };
  for (const auto& [field, name] : fields) {
    if (auto v = int_member(kernel, name)) *field = *v;
  }
  return r;
}

// ---------------------------------------------------------------------------
// NVIDIA: ptxas -v report
// ---------------------------------------------------------------------------

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r')) s.remove_suffix(1);
  return s;
}

// The number that starts `s` (after blanks), or nullopt.
std::optional<int> leading_int(std::string_view s) {
  while (!s.empty() && s.front() == ' ') s.remove_prefix(1);
  int value = 0;
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), value);
  if (ec != std::errc()) return std::nullopt;
  return value;
}

// The text after `marker` in `line`, if the marker occurs.
std::optional<std::string_view> after(std::string_view line, std::string_view marker) {
  size_t at = line.find(marker);
  if (at == std::string_view::npos) return std::nullopt;
  return line.substr(at + marker.size());
}

std::string unquote(std::string_view s) {
  s = trim(s);
  if (s.size() >= 2 && s.front() == '\'' && s.back() == '\'') s = s.substr(1, s.size() - 2);
  return std::string(s);
}

// Applies the comma-separated parts of a "Used N registers, ..." or
// "N bytes stack frame, ..." line. Each part is "N <what>" or "used N <what>".
void apply_counts(std::string_view list, KernelResources* r) {
  while (!list.empty()) {
    size_t comma = list.find(',');
    std::string_view part = trim(list.substr(0, comma));
    list = comma == std::string_view::npos ? std::string_view() : list.substr(comma + 1);
    if (part.starts_with("used ")) part.remove_prefix(5);
    std::optional<int> n = leading_int(part);
    if (!n) continue;
    if (part.ends_with(" registers")) r->registers = *n;
    else if (part.ends_with("bytes smem")) r->lds_bytes = *n;
    else if (part.ends_with("bytes spill stores")) r->spill_store_bytes = *n;
    else if (part.ends_with("bytes spill loads")) r->spill_load_bytes = *n;
    // The frame of the kernel alone, the cumulative size with its callees, and
    // (older ptxas) lmem all describe per-thread local memory: keep the largest.
    else if (part.ends_with("bytes stack frame") || part.ends_with("bytes cumulative stack size") ||
             part.ends_with("bytes lmem"))
      r->scratch_bytes = std::max(r->scratch_bytes, *n);
  }
}

}  // namespace

Result<std::vector<KernelResources>> read_amdgpu_kernel_resources(std::string_view code_object) {
  FT_ASSIGN_OR_RETURN(std::string_view note, find_amdgpu_metadata(code_object));
  nlohmann::json metadata = nlohmann::json::from_msgpack(note, true, false);
  if (metadata.is_discarded() || !metadata.is_object())
    return FT_ERROR(ErrorCode::kCorrupt, "AMDGPU metadata note ({} bytes) is not a MessagePack map",
                    note.size());
  std::vector<KernelResources> kernels;
  auto it = metadata.find("amdhsa.kernels");
  if (it == metadata.end()) return kernels;
  if (!it->is_array()) return FT_ERROR(ErrorCode::kCorrupt, "amdhsa.kernels is not a list");
  for (size_t i = 0; i < it->size(); ++i) {
    FT_ASSIGN_OR_RETURN(KernelResources r, amdgpu_kernel((*it)[i], i));
    kernels.push_back(std::move(r));
  }
  return kernels;
}

Result<std::vector<KernelResources>> parse_ptxas_report(std::string_view log) {
  std::vector<KernelResources> kernels;
  // Lines about a function apply to the current entry only while the latest
  // "Compiling entry function" / "Function properties for" names that entry:
  // a non-entry function's properties block must not overwrite a kernel.
  bool subject_is_entry = false;
  while (!log.empty()) {
    size_t newline = log.find('\n');
    std::string_view line = log.substr(0, newline);
    log = newline == std::string_view::npos ? std::string_view() : log.substr(newline + 1);

    if (auto rest = after(line, "Compiling entry function ")) {
      size_t for_at = rest->rfind(" for ");
      KernelResources r;
      r.symbol = unquote(rest->substr(0, for_at));
      r.wavefront_size = 32;
      kernels.push_back(std::move(r));
      subject_is_entry = true;
    } else if (auto name = after(line, "Function properties for ")) {
      subject_is_entry = !kernels.empty() && unquote(*name) == kernels.back().symbol;
    } else if (auto counts = after(line, "Used ")) {
      if (subject_is_entry) apply_counts("used " + std::string(*counts), &kernels.back());
    } else if (line.find("bytes stack frame") != std::string_view::npos) {
      // "ptxas         .     0 bytes stack frame, ..." (CUDA 13) or indented
      // without the prefix (older): the counts start at the first digit.
      size_t first_digit = line.find_first_of("0123456789");
      if (subject_is_entry) apply_counts(line.substr(first_digit), &kernels.back());
    }
  }
  if (kernels.empty())
    return FT_ERROR(ErrorCode::kNotFound,
                    "no 'Compiling entry function' line in the ptxas log (was --ptxas-options=-v "
                    "passed?)");
  return kernels;
}

nlohmann::json to_json(const KernelResources& r) {
  return {
      {"symbol", r.symbol},
      {"vgprs", r.vgprs},
      {"sgprs", r.sgprs},
      {"agprs", r.agprs},
      {"vgpr_spills", r.vgpr_spills},
      {"sgpr_spills", r.sgpr_spills},
      {"registers", r.registers},
      {"spill_store_bytes", r.spill_store_bytes},
      {"spill_load_bytes", r.spill_load_bytes},
      {"lds_bytes", r.lds_bytes},
      {"scratch_bytes", r.scratch_bytes},
      {"wavefront_size", r.wavefront_size},
      {"max_workgroup_size", r.max_workgroup_size},
  };
}

KernelResources kernel_resources_from_json(const nlohmann::json& json) {
  KernelResources r;
  if (!json.is_object()) return r;
  r.symbol = string_member(json, "symbol");
  const std::pair<int*, const char*> fields[] = {
      {&r.vgprs, "vgprs"},
      {&r.sgprs, "sgprs"},
      {&r.agprs, "agprs"},
      {&r.vgpr_spills, "vgpr_spills"},
      {&r.sgpr_spills, "sgpr_spills"},
      {&r.registers, "registers"},
      {&r.spill_store_bytes, "spill_store_bytes"},
      {&r.spill_load_bytes, "spill_load_bytes"},
      {&r.lds_bytes, "lds_bytes"},
      {&r.scratch_bytes, "scratch_bytes"},
      {&r.wavefront_size, "wavefront_size"},
      {&r.max_workgroup_size, "max_workgroup_size"},
  };
  for (const auto& [field, name] : fields) {
    if (auto v = int_member(json, name)) *field = *v;
  }
  return r;
}

}  // namespace ft
