#include "kvactor/finish_reason.hpp"

#include <gtest/gtest.h>

#include <sstream>

namespace kvactor {
namespace {

TEST(finish_reason, names_read_back_as_their_reasons) {
  for (auto r : {finish_reason::none, finish_reason::eos, finish_reason::max_tokens,
                 finish_reason::stop, finish_reason::aborted, finish_reason::error})
    EXPECT_EQ(finish_reason_of(to_string(r)), r) << to_string(r);
  EXPECT_EQ(to_string(finish_reason::max_tokens), "max_tokens");
  EXPECT_EQ(finish_reason_of("length"), std::nullopt); // OpenAI's name, not kvactor's
  EXPECT_EQ(finish_reason_of(""), std::nullopt);
  EXPECT_EQ(finish_reason_of("Stop"), std::nullopt);
}

TEST(finish_reason, prints_as_its_name) {
  std::ostringstream os;
  os << finish_reason::aborted << ' ' << finish_reason::eos;
  EXPECT_EQ(os.str(), "aborted eos");
  EXPECT_EQ(::testing::PrintToString(finish_reason::max_tokens), "max_tokens");
}

} // namespace
} // namespace kvactor
