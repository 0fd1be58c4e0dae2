// kvactor's error codes and their caf::errors (actors/errors.cpp).

#include "kvactor/kvactor.hpp"

#include <gtest/gtest.h>

#include <set>
#include <string>

namespace kvactor {
namespace {

constexpr errc every_code[] = {errc::invalid_field,   errc::prompt_too_long, errc::overloaded,
                               errc::worker_lost,     errc::invalid_config,  errc::bad_model,
                               errc::device_unusable, errc::cannot_publish,
                               errc::non_finite_logits};

TEST(errors, every_code_has_a_name_of_its_own) {
  std::set<std::string> names{to_string(errc::none)};
  for (errc c : every_code)
    EXPECT_TRUE(names.insert(to_string(c)).second) << to_string(c);
  EXPECT_STREQ(to_string(errc::prompt_too_long), "prompt_too_long");
}

TEST(errors, code_of_reads_kvactors_errors_only) {
  for (errc c : every_code)
    EXPECT_EQ(code_of(make_error(c, "why")), c);
  EXPECT_EQ(code_of(caf::error{}), errc::none);
  // A CAF error with the same number is not one of kvactor's.
  EXPECT_EQ(code_of(caf::make_error(caf::sec::unexpected_message)), errc::none);
}

struct registered : caf::actor_system_config {
  registered() { kvactor::add_message_types(*this); }
};

TEST(errors, the_actor_system_renders_the_code_and_the_message) {
  registered cfg;
  caf::actor_system sys{cfg};
  EXPECT_EQ(sys.render(make_error(errc::bad_model, "/m/config.json: missing")),
            "bad_model: /m/config.json: missing");
}

} // namespace
} // namespace kvactor
