// The relay holds a worker's events until the front has handed the client
// its admission, gives them the front's id, and reports the end.

#include "cluster/relay_actor.hpp"

#include <gtest/gtest.h>

#include <optional>

namespace kvactor::cluster {
namespace {

using namespace std::chrono_literals;

struct relay_config : caf::actor_system_config {
  relay_config() { kvactor::add_message_types(*this); }
};

struct relay : ::testing::Test {
  relay_config cfg;
  caf::actor_system sys{cfg};
  caf::scoped_actor client{sys}; // the client's sink
  caf::scoped_actor front{sys};  // the front

  relay_actor spawn(request_id id, int32_t num_choices = 1) {
    return spawn_relay(sys, id, caf::actor_cast<sink_actor>(client),
                       caf::actor_cast<relay_owner>(front), num_choices);
  }
  static token_event token(request_id id, int32_t index) {
    token_event t;
    t.id = id;
    t.index = index;
    t.token = 40 + index;
    return t;
  }
  // The client's next token index, -1 for a done event, -2 for nothing within 100 ms.
  int32_t next_at_client(request_id expected_id) {
    int32_t got = -2;
    client->receive(
      [&](const token_event& t) {
        EXPECT_EQ(t.id, expected_id);
        got = t.index;
      },
      [&](const done_event& d) {
        EXPECT_EQ(d.id, expected_id);
        got = -1;
      },
      caf::after(100ms) >> [] {});
    return got;
  }
};

TEST_F(relay, holds_events_until_admitted_then_passes_them_with_the_front_id) {
  auto r = spawn(9);
  caf::anon_send(r, token(3, 0));
  caf::anon_send(r, token(3, 1));
  EXPECT_EQ(next_at_client(9), -2); // held: the admission may still be on its way
  caf::anon_send(r, admitted_atom::value);
  EXPECT_EQ(next_at_client(9), 0);
  EXPECT_EQ(next_at_client(9), 1);
  caf::anon_send(r, token(3, 2));
  EXPECT_EQ(next_at_client(9), 2);
  done_event d;
  d.id = 3;
  d.finish_reason = finish_reason::eos;
  caf::anon_send(r, d);
  EXPECT_EQ(next_at_client(9), -1);
  request_id ended = 0;
  front->receive([&](ended_atom, request_id id) { ended = id; }, caf::after(1s) >> [] {});
  EXPECT_EQ(ended, 9u);
}

TEST_F(relay, passes_the_fronts_own_end_at_once) {
  auto r = spawn(5);
  caf::anon_send(r, token(1, 0)); // held, never admitted
  done_event lost;
  lost.finish_reason = finish_reason::error;
  lost.error_code = errc::worker_lost;
  caf::anon_send(r, end_atom::value, lost);
  std::string code;
  client->receive([&](const done_event& d) { code = to_string(d.error_code); EXPECT_EQ(d.id, 5u); },
                  [&](const token_event&) { code = "a token"; }, caf::after(1s) >> [] {});
  EXPECT_EQ(code, "worker_lost");
}

// A request of several choices ends with the last choice's done event; the
// front's own end goes out for each choice still live.
TEST_F(relay, ends_with_the_last_choice) {
  auto r = spawn(4, 3);
  caf::anon_send(r, admitted_atom::value);
  done_event d;
  d.finish_reason = finish_reason::eos;
  d.choice = 1;
  caf::anon_send(r, d);
  EXPECT_EQ(next_at_client(4), -1);
  request_id ended = 0;
  front->receive([&](ended_atom, request_id id) { ended = id; }, caf::after(200ms) >> [] {});
  EXPECT_EQ(ended, 0u); // two choices live
  done_event lost;
  lost.finish_reason = finish_reason::error;
  lost.error_code = errc::worker_lost;
  caf::anon_send(r, end_atom::value, lost);
  std::vector<int32_t> choices;
  for (int i = 0; i < 3; ++i)
    client->receive([&](const done_event& e) { choices.push_back(e.choice); },
                    caf::after(200ms) >> [] {});
  EXPECT_EQ(choices, (std::vector<int32_t>{0, 2}));
}

// Its worker lost: a request that showed the client nothing may start again
// (the relay exits without a word); one that streamed a token may not.
TEST_F(relay, stands_down_for_a_restart_only_while_the_client_saw_nothing) {
  done_event lost;
  lost.finish_reason = finish_reason::error;
  lost.error_code = errc::worker_lost;
  auto ask = [&](relay_actor r) {
    std::optional<bool> restart;
    front->request(r, 1s, lost_atom::value, lost)
      .receive([&](bool b) { restart = b; }, [&](const caf::error&) {});
    return restart;
  };

  auto held = spawn(6);
  caf::anon_send(held, token(2, 0)); // held: not admitted, so not shown
  EXPECT_EQ(ask(held), std::optional<bool>{true});
  EXPECT_EQ(next_at_client(6), -2);

  auto admitted = spawn(7);
  caf::anon_send(admitted, admitted_atom::value);
  EXPECT_EQ(ask(admitted), std::optional<bool>{true});
  EXPECT_EQ(next_at_client(7), -2);

  auto streamed = spawn(8, 2);
  caf::anon_send(streamed, admitted_atom::value);
  caf::anon_send(streamed, token(3, 0));
  EXPECT_EQ(next_at_client(8), 0);
  EXPECT_EQ(ask(streamed), std::optional<bool>{false});
  std::vector<std::string> codes;
  for (int i = 0; i < 2; ++i)
    client->receive([&](const done_event& d) { codes.push_back(to_string(d.error_code)); },
                    caf::after(200ms) >> [] {});
  EXPECT_EQ(codes, (std::vector<std::string>{"worker_lost", "worker_lost"}));
}

TEST_F(relay, tells_the_front_when_the_client_goes_down) {
  sink_actor gone_client = sys.spawn([]() -> sink_actor::behavior_type {
    return {[](const token_event&) {}, [](const done_event&) {}};
  });
  auto r = spawn_relay(sys, 7, gone_client, caf::actor_cast<relay_owner>(front));
  caf::anon_send_exit(gone_client, caf::exit_reason::user_shutdown);
  request_id gone = 0;
  front->receive([&](gone_atom, request_id id) { gone = id; }, caf::after(2s) >> [] {});
  EXPECT_EQ(gone, 7u);
  caf::anon_send_exit(r, caf::exit_reason::user_shutdown);
}

} // namespace
} // namespace kvactor::cluster
