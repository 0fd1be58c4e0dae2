#include "kernels/emulator/emulator.hpp"

#include <ucontext.h>

#include <cstdio>
#include <cstdlib>
#include <memory>
#include <vector>

#include "base/assert.hpp"

thread_local uint3 threadIdx{0, 0, 0};
thread_local uint3 blockIdx{0, 0, 0};
thread_local dim3 blockDim{1, 1, 1};
thread_local dim3 gridDim{1, 1, 1};

namespace kvactor::emu {
namespace {

constexpr int warp_size = 32;
// NOTE: kernel frames are small (a few KiB); 256 KiB leaves room for -O0
// builds. Untouched stack pages cost nothing.
constexpr size_t stack_bytes = 256 * 1024;

enum class fiber_state { runnable, at_block_barrier, at_warp_barrier, done };

struct fiber {
  ucontext_t context;
  std::unique_ptr<char[]> stack;
  uint3 index{0, 0, 0};
  int warp = 0;
  int lane = 0;
  unsigned num_shuffles = 0;  // selects the slot buffer (double buffering)
  fiber_state state = fiber_state::done;
};

struct warp_slots {
  unsigned char data[2][warp_size][16];
};

struct block_runner {
  ucontext_t scheduler;
  std::vector<fiber> fibers;
  std::vector<warp_slots> slots;
  fiber* current = nullptr;
  const std::function<void()>* body = nullptr;
  uint64_t num_switches = 0;
};

thread_local block_runner* runner = nullptr;
thread_local launch_stats stats;
// NOTE: fiber stacks outlive launches on their OS thread: a fresh 256 KiB
// stack per fiber and launch cost a page fault per touched page, which
// dominated launches of short kernels (the CUDA shim runs many).
thread_local std::vector<std::unique_ptr<char[]>> stack_pool;

void fiber_main() {
  block_runner* r = runner;
  (*r->body)();
  r->current->state = fiber_state::done;
  // returning switches to uc_link (the scheduler)
}

void yield_to_scheduler(fiber_state state) {
  block_runner* r = runner;
  KVACTOR_ASSERT(r != nullptr, "CUDA intrinsic called outside an emulated launch");
  fiber* f = r->current;
  f->state = state;
  swapcontext(&f->context, &r->scheduler);
  // resumed by the scheduler; it has restored threadIdx and runner->current
}

void resume(block_runner& r, fiber& f) {
  f.state = fiber_state::runnable;
  threadIdx = f.index;
  r.current = &f;
  ++r.num_switches;
  swapcontext(&r.scheduler, &f.context);
}

[[noreturn]] void divergence(const char* what) {
  std::fprintf(stderr, "kvactor emulator: %s in block (%u,%u,%u)\n", what, blockIdx.x, blockIdx.y,
               blockIdx.z);
  std::abort();
}

void run_block(block_runner& r) {
  const int n = static_cast<int>(r.fibers.size());
  for (fiber& f : r.fibers) {
    getcontext(&f.context);
    f.context.uc_stack.ss_sp = f.stack.get();
    f.context.uc_stack.ss_size = stack_bytes;
    f.context.uc_link = &r.scheduler;
    makecontext(&f.context, fiber_main, 0);
    f.state = fiber_state::runnable;
    f.num_shuffles = 0;
  }
  const int num_warps = (n + warp_size - 1) / warp_size;
  for (;;) {
    for (fiber& f : r.fibers)
      if (f.state == fiber_state::runnable) resume(r, f);
    // Every fiber now waits at a barrier or is done.
    bool released = false;
    int live = 0, at_block = 0;
    for (int w = 0; w < num_warps; ++w) {
      int warp_live = 0, warp_waiting = 0;
      for (int i = w * warp_size; i < n && i < (w + 1) * warp_size; ++i) {
        const fiber_state s = r.fibers[static_cast<size_t>(i)].state;
        if (s == fiber_state::done) continue;
        ++warp_live;
        warp_waiting += s == fiber_state::at_warp_barrier;
        at_block += s == fiber_state::at_block_barrier;
      }
      live += warp_live;
      if (warp_live > 0 && warp_waiting == warp_live) {
        for (int i = w * warp_size; i < n && i < (w + 1) * warp_size; ++i)
          if (r.fibers[static_cast<size_t>(i)].state == fiber_state::at_warp_barrier)
            r.fibers[static_cast<size_t>(i)].state = fiber_state::runnable;
        released = true;
      }
    }
    if (live == 0) return;
    if (released) continue;
    if (at_block == live) {
      for (fiber& f : r.fibers)
        if (f.state == fiber_state::at_block_barrier) f.state = fiber_state::runnable;
      continue;
    }
    divergence("divergent barriers (some threads at __syncthreads, others at a warp barrier)");
  }
}

} // namespace

void syncthreads() { yield_to_scheduler(fiber_state::at_block_barrier); }

void syncwarp(unsigned mask) {
  if (mask != 0xffffffffu) divergence("__syncwarp with a partial mask is not emulated");
  yield_to_scheduler(fiber_state::at_warp_barrier);
}

int lane_id() {
  KVACTOR_ASSERT(runner != nullptr, "CUDA intrinsic called outside an emulated launch");
  return runner->current->lane;
}

void shuffle(const void* in, void* out, unsigned bytes, unsigned mask, int src_lane) {
  if (mask != 0xffffffffu) divergence("shuffle with a partial mask is not emulated");
  block_runner* r = runner;
  fiber* f = r->current;
  warp_slots& slots = r->slots[static_cast<size_t>(f->warp)];
  const unsigned buffer = f->num_shuffles++ & 1u;
  std::memcpy(slots.data[buffer][f->lane], in, bytes);
  // NOTE: one barrier per shuffle suffices: a lane can write this buffer again
  // only after the next shuffle's barrier, which every lane reaches after
  // reading this one.
  yield_to_scheduler(fiber_state::at_warp_barrier);
  std::memcpy(out, slots.data[buffer][src_lane], bytes);
}

void launch_body(dim3 grid, dim3 block, const std::function<void()>& body) {
  KVACTOR_ASSERT(runner == nullptr, "nested emulated launch");
  const unsigned n = block.x * block.y * block.z;
  KVACTOR_ASSERT(n >= 1 && n <= 1024, "block size must be 1..1024 threads");
  block_runner r;
  r.body = &body;
  r.fibers.resize(n);
  r.slots.resize((n + warp_size - 1) / warp_size);
  while (stack_pool.size() < n) stack_pool.emplace_back(new char[stack_bytes]); // uninitialised
  for (unsigned i = 0; i < n; ++i) {
    fiber& f = r.fibers[i];
    f.stack = std::move(stack_pool[stack_pool.size() - 1 - i]);
    f.index = uint3{i % block.x, (i / block.x) % block.y, i / (block.x * block.y)};
    f.warp = static_cast<int>(i) / warp_size;
    f.lane = static_cast<int>(i) % warp_size;
  }
  runner = &r;
  blockDim = block;
  gridDim = grid;
  uint64_t num_blocks = 0;
  for (unsigned z = 0; z < grid.z; ++z)
    for (unsigned y = 0; y < grid.y; ++y)
      for (unsigned x = 0; x < grid.x; ++x) {
        blockIdx = uint3{x, y, z};
        run_block(r);
        ++num_blocks;
      }
  runner = nullptr;
  stack_pool.resize(stack_pool.size() - n);
  for (fiber& f : r.fibers) stack_pool.push_back(std::move(f.stack));
  stats = launch_stats{num_blocks, r.num_switches};
}

launch_stats last_launch_stats() { return stats; }

} // namespace kvactor::emu
