#include "cluster/worker_list.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace kvactor::cluster {
namespace {

using ::testing::HasSubstr;

TEST(worker_list, parses_hosts_and_ports) {
  auto w = parse_worker_list("127.0.0.1:7901,localhost:7902,[::1]:7903");
  ASSERT_TRUE(w) << w.error().message;
  ASSERT_EQ(w->size(), 3u);
  EXPECT_EQ((*w)[0], (endpoint{"127.0.0.1", 7901}));
  EXPECT_EQ((*w)[1], (endpoint{"localhost", 7902}));
  EXPECT_EQ((*w)[2], (endpoint{"::1", 7903}));
  EXPECT_EQ((*w)[2].str(), "[::1]:7903");
}

std::string error_of(std::string_view list) {
  auto w = parse_worker_list(list);
  EXPECT_FALSE(w) << list;
  return w ? "" : w.error().message;
}

TEST(worker_list, names_the_entry_at_fault) {
  EXPECT_THAT(error_of(""), HasSubstr("empty"));
  EXPECT_THAT(error_of("a:1,,b:2"), HasSubstr("empty entry"));
  EXPECT_THAT(error_of("a:1,hostonly"), HasSubstr("'hostonly' has no port"));
  EXPECT_THAT(error_of(":7901"), HasSubstr("':7901' has no host"));
  EXPECT_THAT(error_of("a:0"), HasSubstr("bad port '0'"));
  EXPECT_THAT(error_of("a:65536"), HasSubstr("bad port '65536'"));
  EXPECT_THAT(error_of("a:79x"), HasSubstr("bad port '79x'"));
  EXPECT_THAT(error_of("::1:7901"), HasSubstr("brackets"));
  EXPECT_THAT(error_of("a:1,a:1"), HasSubstr("a:1 is listed twice"));
}

} // namespace
} // namespace kvactor::cluster
