#pragma once
// test_runtime: the runtime's actors in front of a stand-in model
// (tests/actors/test_runner.hpp), for the servers' tests over loopback.

#include "actors/runtime/spawn.hpp"
#include "model/tiny/tiny_tokenizer.hpp"
#include "net/bridge.hpp"
#include "net/server.hpp"
#include "test_runner.hpp"

#include <gtest/gtest.h>

#include <memory>

namespace kvactor::net {

struct test_config : caf::actor_system_config {
  test_config() {
    kvactor::add_message_types(*this);
    kvactor::net::add_message_types(*this);
  }
};

struct test_runtime {
  static constexpr int32_t vocab = 512;

  test_runtime(caf::actor_system& sys, int32_t device_blocks, int32_t max_waiting) {
    model::tiny::tiny_options o;
    o.vocab_size = vocab;
    auto tok = model::tokenizer::build(model::tiny::make_tokenizer_spec(o), "tiny");
    EXPECT_TRUE(tok.has_value());
    tokenizer = std::make_shared<const model::tokenizer>(std::move(*tok));
    runner = std::make_shared<kvactor::testing::test_runner>(device_blocks, 64, 4, vocab);
    runtime = spawn_actors(sys, runner, {tokenizer, {vocab, 8192}}, {}, max_waiting);
  }

  // The tokens the stand-in model generates after `history`, sampling with
  // `seed`.
  static std::vector<int32_t> expected_output(std::vector<int32_t> history, int32_t n,
                                              uint64_t seed = 1) {
    std::vector<int32_t> out;
    for (int32_t i = 0; i < n; ++i) {
      out.push_back(kvactor::testing::test_runner::next_token(history, vocab, seed));
      history.push_back(out.back());
    }
    return out;
  }

  std::shared_ptr<const model::tokenizer> tokenizer;
  std::shared_ptr<kvactor::testing::test_runner> runner;
  runtime_actor runtime;
};

inline void shutdown(caf::actor_system& sys, const runtime_actor& runtime) {
  caf::scoped_actor self{sys};
  self->request(runtime, caf::infinite, shutdown_atom::value)
    .receive([](bool) {}, [](const caf::error&) {});
}

// A server on an ephemeral loopback port (port() tells which).
inline std::unique_ptr<server> serve_on_loopback(connection_factory make,
                                                 std::shared_ptr<connection_limit> limit = {}) {
  auto s = std::make_unique<server>(std::move(make), std::move(limit));
  auto bound = s->listen("127.0.0.1", 0);
  EXPECT_TRUE(std::holds_alternative<uint16_t>(bound)) << std::get<std::string>(bound);
  return s;
}

// Stops as kvactor-serve does: no new connections, the runtime shut down
// (live requests end as aborted and their last bytes go out), the server.
inline void stop_serving(server& s, caf::actor_system& sys, const runtime_actor& runtime) {
  s.stop_accepting();
  shutdown(sys, runtime);
  s.stop();
}

} // namespace kvactor::net
