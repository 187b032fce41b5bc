// A host emulator for kernel_src's portable kernels (FT_HOST in ft_device.h):
// a launch runs its blocks one after another and a block's lanes as
// cooperative fibers (ucontext) on the calling thread. A lane runs until it
// reaches a barrier (sync_threads, or either half of a shuffle's exchange)
// or returns; when every live lane of the block waits, all go on. That is
// the GPU's order for any kernel whose lanes meet at their barriers and
// shuffles as the hardware requires (every lane of a block at sync_threads,
// a shuffle group's lanes at the same shuffle), so a kernel's indexing,
// bounds and lane exchanges run exactly, while its speed and memory model do
// not: this checks logic, the GPU run checks the rest.
#pragma once

#include <functional>
#include <string>

namespace ft::host {

struct Dim3 {
  int x = 1, y = 1, z = 1;
};

// Runs body() for every lane of every block of `grid` (block_threads lanes
// each; lane ids and block ids as thread_x() and block_x/y/z() report them).
// Returns an empty string, or what went wrong (a lane that exceeded its stack
// is not caught: keep kernels' locals small, as on a GPU).
std::string launch(Dim3 grid, int block_threads, const std::function<void()>& body);

}  // namespace ft::host
