// Reading VmRSS and RssFile from /proc/PID/status text.
#include <gtest/gtest.h>

#include <vector>

#include "base/resident_memory.hpp"

namespace kvactor {
namespace {

TEST(resident_memory, reads_the_resident_and_file_backed_sizes) {
  const auto m = parse_resident_memory("Name:\tkvactor-serve\nVmPeak:\t 2000 kB\n"
                                       "VmRSS:\t  935388 kB\nRssAnon:\t  863004 kB\n"
                                       "RssFile:\t   72384 kB\nRssShmem:\t0 kB\n");
  ASSERT_TRUE(m.has_value());
  EXPECT_EQ(m->bytes, 935388LL * 1024);
  EXPECT_EQ(m->file_bytes, 72384LL * 1024);
}

TEST(resident_memory, a_missing_or_malformed_field_is_nullopt) {
  EXPECT_FALSE(parse_resident_memory("VmRSS:\t 10 kB\n").has_value());
  EXPECT_FALSE(parse_resident_memory("VmRSS:\t ten kB\nRssFile:\t 1 kB\n").has_value());
  EXPECT_FALSE(parse_resident_memory("VmRSSx:\t 10 kB\nRssFile:\t 1 kB\n").has_value());
}

TEST(resident_memory, this_process_counts_memory_it_touches) {
  const auto before = current_resident_memory();
  ASSERT_TRUE(before.has_value());
  std::vector<char> block(64 << 20, 1);
  const auto after = current_resident_memory();
  ASSERT_TRUE(after.has_value());
  EXPECT_GE(after->bytes - before->bytes, 48 << 20) << static_cast<int>(block.back());
}

} // namespace
} // namespace kvactor
