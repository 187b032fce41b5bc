// Reading what a compiled kernel uses of the machine, from the compiler's own
// output: the AMDGPU metadata note inside an hsaco (AMD), or the ptxas -v
// report that NVRTC returns in its log (NVIDIA).
#pragma once

#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "jit/kernel_resources.h"
#include "runtime/base/status.h"

namespace ft {

// AMD: parses the ELF of an hsaco code object, finds the NT_AMDGPU_METADATA
// note (name "AMDGPU", type 32) in a PT_NOTE segment or SHT_NOTE section,
// decodes its MessagePack and returns the resources of every kernel in
// `amdhsa.kernels`, in the order listed there. `symbol` is the kernel's .name
// (the function name, not the ".kd" descriptor symbol). agprs stays -1 where
// the target has no accumulation registers (before gfx90a).
// Every offset and size is bounds-checked: a truncated or hostile file gives
// kCorrupt; a valid ELF without the note gives kNotFound.
Result<std::vector<KernelResources>> read_amdgpu_kernel_resources(std::string_view code_object);

// NVIDIA: parses the ptxas report that NVRTC returns in its program log when
// compiled with --ptxas-options=-v, one entry per "Compiling entry function"
// in log order. Non-entry functions (their "Function properties" blocks)
// are skipped. Lines ptxas omits in some versions ("used N barriers", "smem",
// the stack-frame line) leave the defaults. A log without any entry function
// gives kNotFound (most likely -v was not passed).
Result<std::vector<KernelResources>> parse_ptxas_report(std::string_view log);

// JSON round trip for storage. kernel_resources_from_json never throws:
// missing or mistyped members keep their defaults.
nlohmann::json to_json(const KernelResources& resources);
KernelResources kernel_resources_from_json(const nlohmann::json& json);

}  // namespace ft
