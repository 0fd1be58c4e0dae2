// The shim's memory. Device memory (cudaMalloc) is carved out of one
// reserved region that is PROT_NONE except while a stream task runs, so
// host code that reads or writes device memory outside stream work faults,
// and the fault is reported with the allocation it hit. Pinned memory
// (cudaHostAlloc) is plain host memory the shim remembers, so that async
// copies and kernels can tell it from pageable memory.
//
//  region: [base, base + reserved)   reserved = 80 GiB of address space, never backed until touched
//          [base, base + used)       handed out (page-aligned, first fit; freed ranges
//                                    are reused and their pages returned)
#include <signal.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iterator>
#include <map>
#include <mutex>

#include "kernels/cuda_shim/detail.hpp"
#include "kernels/cuda_shim/shim.hpp"

namespace kvactor::cuda_shim {
namespace {

constexpr std::size_t page = 4096;
constexpr std::size_t reserved = std::size_t{80} << 30; // an H100's 80 GiB

struct allocation {
  std::size_t bytes;
  pointer_kind kind;
};

struct memory_state {
  std::mutex mutex;
  char* base = nullptr;
  std::size_t used = 0;        // high-water mark of the region
  std::size_t live_device = 0; // bytes of live device allocations
  int num_active = 0;          // stream tasks running: the region is accessible while > 0
  std::map<const char*, allocation> allocations; // by start; device and pinned
  std::map<std::size_t, std::size_t> free_ranges; // offset -> bytes, inside [0, used)
};

void protect(memory_state& m, std::size_t from, std::size_t to, int prot) {
  if (to > from && mprotect(m.base + from, to - from, prot) != 0) {
    std::perror("kvactor CUDA shim: mprotect");
    std::abort();
  }
}

std::size_t rounded_size(std::size_t bytes) {
  return (std::max<std::size_t>(bytes, 1) + page - 1) / page * page;
}

// First fit among the freed ranges, else the end of the region; SIZE_MAX when full.
std::size_t take_range(memory_state& m, std::size_t bytes) {
  for (auto it = m.free_ranges.begin(); it != m.free_ranges.end(); ++it) {
    if (it->second < bytes) continue;
    const std::size_t offset = it->first, left = it->second - bytes;
    m.free_ranges.erase(it);
    if (left > 0) m.free_ranges[offset + bytes] = left;
    return offset;
  }
  if (m.used + bytes > reserved) return SIZE_MAX;
  if (m.num_active > 0) protect(m, m.used, m.used + bytes, PROT_READ | PROT_WRITE);
  m.used += bytes;
  return m.used - bytes;
}

void give_back_range(memory_state& m, std::size_t offset, std::size_t bytes) {
  auto next = m.free_ranges.lower_bound(offset);
  if (next != m.free_ranges.end() && next->first == offset + bytes) {
    bytes += next->second;
    next = m.free_ranges.erase(next);
  }
  if (next != m.free_ranges.begin()) {
    auto prev = std::prev(next);
    if (prev->first + prev->second == offset) {
      prev->second += bytes;
      return;
    }
  }
  m.free_ranges[offset] = bytes;
}

memory_state& state();
thread_local bool on_stream_thread = false;

void on_fault(int sig, siginfo_t* info, void* ctx);
struct sigaction previous_action;

memory_state& state() {
  static memory_state* s = [] {
    auto* m = new memory_state;  // never destroyed: stream threads may outlive static destruction
    void* p =
      mmap(nullptr, reserved, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (p == MAP_FAILED) {
      std::fprintf(
        stderr, "kvactor CUDA shim: cannot reserve %zu bytes of address space for device memory\n",
        reserved);
      std::abort();
    }
    m->base = static_cast<char*>(p);
    struct sigaction sa {};
    sa.sa_sigaction = on_fault;
    sa.sa_flags = SA_SIGINFO;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGSEGV, &sa, &previous_action);
    return m;
  }();
  return *s;
}

void on_fault(int sig, siginfo_t* info, void* ctx) {
  const memory_state& m = state();
  const char* a = static_cast<const char*>(info->si_addr);
  if (a >= m.base && a < m.base + reserved) {
    static const char host_msg[] =
      "kvactor CUDA shim: host code touched device memory (cudaMalloc) outside stream work; "
      "copy it to pinned host memory with cudaMemcpyAsync first\n";
    static const char stream_msg[] =
      "kvactor CUDA shim: a kernel, copy or product touched device memory outside every allocation "
      "(out of bounds, or freed)\n";
    if (on_stream_thread)
      (void)!write(STDERR_FILENO, stream_msg, sizeof stream_msg - 1);
    else
      (void)!write(STDERR_FILENO, host_msg, sizeof host_msg - 1);
    signal(SIGABRT, SIG_DFL);
    abort();
  }
  // Not ours: let the previous handler (or the default action) have it.
  if (previous_action.sa_flags & SA_SIGINFO) {
    if (previous_action.sa_sigaction != nullptr)
      return previous_action.sa_sigaction(sig, info, ctx);
  } else if (previous_action.sa_handler != SIG_DFL && previous_action.sa_handler != SIG_IGN) {
    return previous_action.sa_handler(sig);
  }
  signal(SIGSEGV, SIG_DFL); // the faulting instruction runs again and gets the default action
}

const std::pair<const char* const, allocation>* find(memory_state& m, const void* p) {
  const char* c = static_cast<const char*>(p);
  auto it = m.allocations.upper_bound(c);
  if (it == m.allocations.begin()) return nullptr;
  --it;
  if (c >= it->first + it->second.bytes && !(it->second.bytes == 0 && c == it->first))
    return nullptr;
  return &*it;
}

} // namespace

pointer_kind kind_of(const void* p) {
  memory_state& m = state();
  std::lock_guard lock{m.mutex};
  const auto* a = find(m, p);
  return a != nullptr ? a->second.kind : pointer_kind::pageable;
}

namespace detail {

bool in_unallocated_device_memory(const void* p) {
  memory_state& m = state();
  std::lock_guard lock{m.mutex};
  const char* c = static_cast<const char*>(p);
  return c >= m.base && c < m.base + reserved && find(m, p) == nullptr;
}

} // namespace detail

namespace detail {

void mark_stream_thread() { on_stream_thread = true; }

void* device_alloc(std::size_t bytes) {
  memory_state& m = state();
  const std::size_t rounded = rounded_size(bytes);
  std::lock_guard lock{m.mutex};
  const std::size_t offset = take_range(m, rounded);
  if (offset == SIZE_MAX) return nullptr;
  char* p = m.base + offset;
  m.live_device += rounded;
  m.allocations[p] = allocation{bytes, pointer_kind::device};
  return p;
}

bool device_free(void* p) {
  memory_state& m = state();
  std::lock_guard lock{m.mutex};
  const auto it = m.allocations.find(static_cast<const char*>(p));
  if (it == m.allocations.end() || it->second.kind != pointer_kind::device) return false;
  const std::size_t rounded = rounded_size(it->second.bytes);
  (void)madvise(p, rounded, MADV_DONTNEED); // give the pages back
  m.live_device -= rounded;
  give_back_range(m, static_cast<std::size_t>(static_cast<char*>(p) - m.base), rounded);
  m.allocations.erase(it);
  return true;
}

void* pinned_alloc(std::size_t bytes) {
  memory_state& m = state();
  void* p = std::aligned_alloc(page, rounded_size(bytes));
  if (p == nullptr) return nullptr;
  std::lock_guard lock{m.mutex};
  m.allocations[static_cast<const char*>(p)] = allocation{bytes, pointer_kind::pinned};
  return p;
}

bool pinned_free(void* p) {
  memory_state& m = state();
  {
    std::lock_guard lock{m.mutex};
    const auto it = m.allocations.find(static_cast<const char*>(p));
    if (it == m.allocations.end() || it->second.kind != pointer_kind::pinned) return false;
    m.allocations.erase(it);
  }
  std::free(p);
  return true;
}

std::size_t device_bytes_in_use() {
  memory_state& m = state();
  std::lock_guard lock{m.mutex};
  return m.live_device;
}

std::size_t device_total_bytes() { return reserved; }

bool in_one_allocation(const void* p, std::size_t bytes) {
  memory_state& m = state();
  std::lock_guard lock{m.mutex};
  const auto* a = find(m, p);
  if (a == nullptr) return true; // pageable: not ours to bound
  return static_cast<const char*>(p) + bytes <= a->first + a->second.bytes;
}

std::string describe(const void* p) {
  memory_state& m = state();
  std::lock_guard lock{m.mutex};
  const auto* a = find(m, p);
  char buf[160];
  const char* c = static_cast<const char*>(p);
  if (a == nullptr && c >= m.base && c < m.base + reserved) {
    std::snprintf(buf, sizeof buf,
                  "%p (device memory that is not allocated: freed, or never handed out)", p);
  } else if (a == nullptr) {
    std::snprintf(buf, sizeof buf, "%p (pageable host memory)", p);
  } else {
    std::snprintf(buf, sizeof buf, "%p (%s, offset %td of an allocation of %zu bytes)", p,
                  a->second.kind == pointer_kind::device ? "device memory" : "pinned host memory",
                  static_cast<const char*>(p) - a->first, a->second.bytes);
  }
  return buf;
}

void begin_device_access() {
  memory_state& m = state();
  std::lock_guard lock{m.mutex};
  if (m.num_active++ == 0) protect(m, 0, m.used, PROT_READ | PROT_WRITE);
}

void end_device_access() {
  memory_state& m = state();
  std::lock_guard lock{m.mutex};
  if (--m.num_active == 0) protect(m, 0, m.used, PROT_NONE);
}

} // namespace detail
} // namespace kvactor::cuda_shim
