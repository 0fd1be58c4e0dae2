#include "tools/command_line.hpp"

#include <gtest/gtest.h>

namespace kvactor::tools {
namespace {

struct test_config : caf::actor_system_config {
  int32_t port = 7878;
  std::string host = "127.0.0.1";
  int64_t kv_cache_mib = 256;
  bool no_prefix_caching = false;

  test_config() {
    opt_group{custom_options_, "global"}
      .add(port, "port", "TCP port")
      .add(host, "host", "address to listen on")
      .add(kv_cache_mib, "kv-cache-mib", "KV cache in MiB")
      .add(no_prefix_caching, "no-prefix-caching", "turn the prefix cache off");
  }
};

// What parsing `arg` says is wrong with it.
std::string explain(std::string arg) {
  test_config cfg;
  const caf::error err = cfg.parse(caf::actor_system_config::string_list{std::move(arg)});
  EXPECT_TRUE(err);
  return explain_parse_error(err, options_of(cfg));
}

TEST(command_line, names_an_unknown_option_and_the_nearest_known_one) {
  EXPECT_EQ(explain("--prot=5"),
            "unknown option --prot=5 (did you mean --port?); --help lists the options");
  EXPECT_EQ(explain("--kv-cache-mb=64"), "unknown option --kv-cache-mb=64 (did you mean "
                                         "--kv-cache-mib?); --help lists the options");
  EXPECT_EQ(explain("--openssl.cafil=ca.pem"), "unknown option --openssl.cafil=ca.pem (did you "
                                               "mean --openssl.cafile?); --help lists the options");
  EXPECT_EQ(explain("--cafile=ca.pem"), "unknown option --cafile=ca.pem (did you mean "
                                        "--openssl.cafile?); --help lists the options");
  EXPECT_EQ(explain("--frobnicate"), "unknown option --frobnicate; --help lists the options");
}

TEST(command_line, names_a_malformed_value_and_the_type_it_should_be) {
  EXPECT_EQ(explain("--port=abc"), "malformed value for --port: \"abc\" is not an integer (int32)");
  EXPECT_EQ(explain("--no-prefix-caching=3"),
            "malformed value for --no-prefix-caching: \"3\" is not true or false (boolean)");
  EXPECT_EQ(explain("--port=99999999999"),
            "value out of range for --port: \"99999999999\" does not fit an integer (int32)");
  EXPECT_EQ(explain("--port"), "--port needs a value: --port=VALUE, an integer (int32)");
}

TEST(command_line, parse_command_line_says_what_is_wrong_after_the_tools_name) {
  test_config cfg;
  char tool[] = "kvactor-test", bad[] = "--prot=5";
  char* argv[] = {tool, bad};
  ::testing::internal::CaptureStderr();
  EXPECT_FALSE(parse_command_line(cfg, 2, argv, "kvactor-test"));
  EXPECT_EQ(::testing::internal::GetCapturedStderr(),
            "kvactor-test: unknown option --prot=5 (did you mean --port?); --help lists the "
            "options\n");
  char good[] = "--port=80";
  char* ok_argv[] = {tool, good};
  test_config ok;
  EXPECT_TRUE(parse_command_line(ok, 2, ok_argv, "kvactor-test"));
  EXPECT_EQ(ok.port, 80);
}

TEST(command_line, edit_distance_counts_a_swap_of_neighbours_once) {
  EXPECT_EQ(edit_distance("prot", "port"), 1u);
  EXPECT_EQ(edit_distance("kitten", "sitting"), 3u);
  EXPECT_EQ(edit_distance("", "abc"), 3u);
  EXPECT_EQ(edit_distance("port", "port"), 0u);
}

} // namespace
} // namespace kvactor::tools
