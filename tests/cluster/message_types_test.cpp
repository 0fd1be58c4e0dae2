// Every message between a front and its workers survives CAF's binary
// serialisation (what the middleman sends), and the worker's interface
// names only announced types (else a front cannot connect to it).

#include "cluster/protocol.hpp"

#include <caf/io/middleman.hpp>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace kvactor::cluster {
namespace {

using ::testing::Not;
using ::testing::HasSubstr;

struct cluster_config : caf::actor_system_config {
  cluster_config() {
    kvactor::add_message_types(*this);
    add_cluster_message_types(*this);
    load<caf::io::middleman>();
  }
};

struct message_types : ::testing::Test {
  cluster_config cfg;
  caf::actor_system sys{cfg};

  // The message after a trip through the wire format.
  caf::message round_trip(const caf::message& m) {
    std::vector<char> buf;
    caf::binary_serializer sink{sys, buf};
    auto out = m;
    EXPECT_FALSE(sink(out));
    EXPECT_FALSE(buf.empty());
    caf::message back;
    caf::binary_deserializer source{sys, buf};
    EXPECT_FALSE(source(back));
    return back;
  }
};

TEST_F(message_types, the_worker_interface_names_only_announced_types) {
  auto ifs = sys.message_types(caf::detail::type_list<worker_actor>{});
  ASSERT_FALSE(ifs.empty());
  for (const auto& s : ifs)
    EXPECT_THAT(s, Not(HasSubstr("invalid-type"))) << s;
}

TEST_F(message_types, requests_and_events_round_trip) {
  generate_request req;
  req.prompt = "once upon";
  req.prompt_tokens = {1, 2, 3};
  req.max_tokens = 9;
  req.temperature = 0.5f;
  req.stop = {"\n"};
  req.logprobs = 2;
  token_event tok;
  tok.id = 7;
  tok.index = 1;
  tok.token = 42;
  tok.text = "a";
  tok.has_logprobs = true;
  tok.logprob = {42, -0.5f, "a"};
  tok.top_logprobs = {{42, -0.5f, "a"}, {3, -1.5f, "b"}};
  done_event done;
  done.id = 7;
  done.finish_reason = finish_reason::error;
  done.error_code = errc::worker_lost;
  done.error_message = "worker h:1 was lost";
  done.tokens = {42};
  runtime_figures f;
  f.device_blocks_free = 5;
  f.time_to_first_token = {{0.1}, {1, 2}, 0.3, 3};
  f.workers = {worker_figures{"h:1", "live", "", 10, 5, 1, 0, 3, 1}};
  worker_hello hello{protocol_version, 8, "tiny"};
  admission a{7, 3, errc::overloaded, "no live worker"};
  sink_actor sink = sys.spawn([]() -> sink_actor::behavior_type {
    return {[](const token_event&) {}, [](const done_event&) {}};
  });
  for (const auto& m :
       {caf::make_message(generate_atom::value, req, sink),
        caf::make_message(cancel_atom::value, request_id{7}), caf::make_message(tok),
        caf::make_message(done), caf::make_message(f), caf::make_message(hello),
        caf::make_message(a), caf::make_message(preempt_atom::value, request_id{7}, true)}) {
    auto back = round_trip(m);
    EXPECT_EQ(to_string(back), to_string(m));
  }
  caf::anon_send_exit(sink, caf::exit_reason::user_shutdown);
}

TEST_F(message_types, an_error_event_keeps_its_code) {
  done_event d;
  d.finish_reason = finish_reason::error;
  d.error_code = errc::worker_lost;
  auto back = round_trip(caf::make_message(d));
  ASSERT_TRUE(back.match_elements<done_event>());
  EXPECT_EQ(back.get_as<done_event>(0).error_code, errc::worker_lost);
}

} // namespace
} // namespace kvactor::cluster
