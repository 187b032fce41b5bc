// AMD GPUs as the kernel driver lists them (/sys/class/kfd/kfd/topology/nodes/
// N/properties): each GPU node has a gfx_target_version such as 110500.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace ft {

// 110500 -> "gfx1150", 90010 -> "gfx90a", 90402 -> "gfx942"; "" for 0.
std::string gfx_name_from_target_version(uint32_t version);
// The gfx names of the GPU nodes under `topology_dir`, in node order.
std::vector<std::string> kfd_gpu_arches(const std::string& topology_dir);

}  // namespace ft
