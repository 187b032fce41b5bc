#include "tests/kernel_host/simt.h"

#include <ucontext.h>

#include <memory>
#include <vector>

namespace ft::host {
namespace {

constexpr size_t kStackBytes = 128 << 10;

enum class Wait { kNone, kShuffle, kBlock };

struct Lane {
  ucontext_t ctx;
  bool done = false;
  Wait wait = Wait::kNone;
};

// The running launch: one at a time, on the calling thread.
struct Run {
  Dim3 grid, id;
  int threads = 0;
  const std::function<void()>* body = nullptr;
  std::vector<Lane> lanes;
  std::vector<std::unique_ptr<char[]>> stacks;
  std::vector<float> slots;  // one shuffle value per lane
  ucontext_t scheduler;
  int current = 0;
};
Run* run = nullptr;

void lane_main() {
  (*run->body)();
  run->lanes[run->current].done = true;  // back to the scheduler through uc_link
}

void wait(Wait kind) {
  Lane& lane = run->lanes[run->current];
  lane.wait = kind;
  swapcontext(&lane.ctx, &run->scheduler);
}

// Runs the lanes of run->id's block until every one has returned.
void run_block() {
  for (int t = 0; t < run->threads; ++t) {
    Lane& lane = run->lanes[t];
    lane.done = false;
    lane.wait = Wait::kNone;
    getcontext(&lane.ctx);
    lane.ctx.uc_stack.ss_sp = run->stacks[t].get();
    lane.ctx.uc_stack.ss_size = kStackBytes;
    lane.ctx.uc_link = &run->scheduler;
    makecontext(&lane.ctx, lane_main, 0);
  }
  for (;;) {
    for (int t = 0; t < run->threads; ++t) {
      if (run->lanes[t].done || run->lanes[t].wait != Wait::kNone) continue;
      run->current = t;
      swapcontext(&run->scheduler, &run->lanes[t].ctx);
    }
    // Every live lane waits. Shuffles go first: their group's lanes are all
    // at the same one. A block barrier opens when every live lane is at it.
    bool live = false, shuffle = false;
    for (const Lane& lane : run->lanes) {
      live = live || !lane.done;
      shuffle = shuffle || (!lane.done && lane.wait == Wait::kShuffle);
    }
    if (!live) return;
    for (Lane& lane : run->lanes)
      if (!lane.done && (!shuffle || lane.wait == Wait::kShuffle)) lane.wait = Wait::kNone;
  }
}

}  // namespace

int thread_x() { return run->current; }
int block(int axis) { return axis == 0 ? run->id.x : axis == 1 ? run->id.y : run->id.z; }
int grid_x() { return run->grid.x; }
void barrier() { wait(Wait::kBlock); }
int atomic_add(int* p, int v) {
  const int old = *p;
  *p = old + v;
  return old;
}

float shfl_xor(float v, int mask, int width) {
  const int t = run->current;
  const int src = t ^ (mask & (width - 1));
  run->slots[t] = v;
  wait(Wait::kShuffle);  // every lane of the group has written its value
  const float got = src < run->threads ? run->slots[src] : 0.0f;
  wait(Wait::kShuffle);  // every lane of the group has read
  return got;
}

std::string launch(Dim3 grid, int block_threads, const std::function<void()>& body) {
  if (run) return "a launch is already running";
  if (block_threads < 1 || block_threads > 1024) return "block_threads must be 1 to 1024";
  if (grid.x < 1 || grid.y < 1 || grid.z < 1) return "empty grid";
  Run r;
  r.grid = grid;
  r.threads = block_threads;
  r.body = &body;
  r.lanes.resize(block_threads);
  r.slots.assign(block_threads, 0.0f);
  for (int t = 0; t < block_threads; ++t) r.stacks.emplace_back(new char[kStackBytes]);
  run = &r;
  for (int z = 0; z < grid.z; ++z)
    for (int y = 0; y < grid.y; ++y)
      for (int x = 0; x < grid.x; ++x) {
        r.id = {x, y, z};
        run_block();
      }
  run = nullptr;
  return {};
}

}  // namespace ft::host
