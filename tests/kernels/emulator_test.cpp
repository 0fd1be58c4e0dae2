// The emulator itself: indices, barriers, shuffles, shared memory, grids.
#include "kernels/emulator/emulator.hpp"

#include <gtest/gtest.h>

#include <numeric>
#include <vector>

namespace {

__global__ void write_indices(int* out) {
  const unsigned block = blockIdx.x + gridDim.x * blockIdx.y;
  const unsigned thread = threadIdx.x + blockDim.x * threadIdx.y;
  out[block * blockDim.x * blockDim.y + thread] = static_cast<int>(block * 1000 + thread);
}

// Reverses each block's 128 values through shared memory: wrong without the
// barrier, since thread i reads what thread 127 - i wrote.
__global__ void reverse_block(const int* in, int* out) {
  __shared__ int tile[128];
  const unsigned base = blockIdx.x * 128;
  tile[threadIdx.x] = in[base + threadIdx.x];
  __syncthreads();
  out[base + threadIdx.x] = tile[127 - threadIdx.x];
}

__global__ void warp_sums(const float* in, float* out) {
  float v = in[blockIdx.x * blockDim.x + threadIdx.x];
  for (int m = 16; m > 0; m >>= 1) v += __shfl_xor_sync(0xffffffffu, v, m);
  out[blockIdx.x * blockDim.x + threadIdx.x] = v;
}

__global__ void broadcast_lane(const int* in, int* out, int src_lane) {
  out[threadIdx.x] = __shfl_sync(0xffffffffu, in[threadIdx.x], src_lane);
}

__global__ void segmented_xor(int* out) {
  out[threadIdx.x] = __shfl_xor_sync(0xffffffffu, static_cast<int>(threadIdx.x), 4, 8);
}

// Half a warp at __syncthreads, the other half at a shuffle: never meets.
__global__ void divergent(int* out) {
  if (threadIdx.x < 16) __syncthreads();
  else out[0] = __shfl_xor_sync(0xffffffffu, 1, 1);
}

TEST(emulator, indices_cover_the_grid_once) {
  const dim3 grid(3, 2), block(8, 4);
  std::vector<int> out(6 * 32, -1);
  kvactor::emu::launch(grid, block, write_indices, out.data());
  for (unsigned b = 0; b < 6; ++b)
    for (unsigned t = 0; t < 32; ++t) EXPECT_EQ(out[b * 32 + t], static_cast<int>(b * 1000 + t));
  EXPECT_EQ(kvactor::emu::last_launch_stats().num_blocks, 6u);
}

TEST(emulator, syncthreads_orders_shared_memory) {
  std::vector<int> in(3 * 128), out(3 * 128);
  std::iota(in.begin(), in.end(), 0);
  kvactor::emu::launch(dim3(3), dim3(128), reverse_block, in.data(), out.data());
  for (int b = 0; b < 3; ++b)
    for (int i = 0; i < 128; ++i) EXPECT_EQ(out[b * 128 + i], b * 128 + 127 - i);
}

TEST(emulator, shfl_xor_butterfly_sums_each_warp) {
  std::vector<float> in(2 * 96), out(2 * 96);
  for (size_t i = 0; i < in.size(); ++i) in[i] = static_cast<float>(i % 7);
  kvactor::emu::launch(dim3(2), dim3(96), warp_sums, in.data(), out.data());
  for (size_t w = 0; w < in.size() / 32; ++w) {
    float sum = 0;
    for (size_t i = 0; i < 32; ++i) sum += in[w * 32 + i];
    for (size_t i = 0; i < 32; ++i)
      EXPECT_EQ(out[w * 32 + i], sum) << "warp " << w << " lane " << i;
  }
}

TEST(emulator, shfl_broadcasts_a_lane) {
  std::vector<int> in(64), out(64);
  std::iota(in.begin(), in.end(), 100);
  kvactor::emu::launch(dim3(1), dim3(64), broadcast_lane, in.data(), out.data(), 5);
  for (int i = 0; i < 64; ++i) EXPECT_EQ(out[i], i < 32 ? 105 : 137);
}

TEST(emulator, shfl_width_limits_the_segment) {
  std::vector<int> out(32);
  kvactor::emu::launch(dim3(1), dim3(32), segmented_xor, out.data());
  for (int i = 0; i < 32; ++i) EXPECT_EQ(out[i], i ^ 4);
}

TEST(emulator_death, divergent_barriers_abort) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  std::vector<int> out(1);
  EXPECT_DEATH(kvactor::emu::launch(dim3(1), dim3(64), divergent, out.data()),
               "divergent barriers");
}

} // namespace
