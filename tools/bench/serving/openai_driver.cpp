#include "tools/bench/serving/openai_driver.hpp"

#include "net/client.hpp"
#include "net/json_writer.hpp"
#include "net/openai_request.hpp"
#include "tools/load/arrivals.hpp"

#include <simdjson.h>

#include <fstream>
#include <sstream>
#include <thread>

namespace kvactor::bench {

namespace {

// One request from sending to its end.
void run_one(const openai_target& target, const bench_request& r, size_t i, request_tracker& t) {
  auto connected = net::client::connect(target.host, target.port);
  auto* c = std::get_if<std::unique_ptr<net::client>>(&connected);
  if (!c)
    return t.refused(i, std::get<std::string>(connected));
  const std::string body = openai_body(target, r.request);
  if (!(*c)->send(net::completions_request(target.host, body)))
    return t.refused(i, "the connection closed");
  auto status = (*c)->read_line();
  if (!status || net::http_status(*status) != 200)
    return t.refused(i, status ? "HTTP status " + std::to_string(net::http_status(*status))
                               : "no response");
  t.accepted(i);
  simdjson::dom::parser parser;
  finish_reason finish = finish_reason::none;
  while (auto data = net::next_sse_data(**c)) {
    simdjson::dom::element choice;
    if (parser.parse(*data)["choices"].at(0).get(choice))
      continue; // a usage event
    // NOTE: servers that return token ids (kvactor, vLLM) say how many tokens
    // an event carries; others send one token's text per event, and an
    // event with a finish reason and no text carries none.
    simdjson::dom::array ids;
    std::string_view text;
    if (!choice["token_ids"].get(ids)) {
      for (size_t k = 0; k < ids.size(); ++k)
        t.token(i);
    } else if (!choice["text"].get(text) && (!text.empty() || choice["finish_reason"].is_null())) {
      t.token(i);
    }
    std::string_view reason;
    if (!choice["finish_reason"].get(reason))
      finish = net::finish_reason_of_openai(reason);
  }
  t.done(i, finish, 0);
}

} // namespace

std::string openai_target::label() const {
  // NOTE: appended piece by piece: g++ 12 warns falsely on ":" + string (-Wrestrict)
  std::string s = host;
  s += ':';
  return s += std::to_string(port);
}

std::variant<openai_target, std::string> parse_openai_target(const std::string& arg) {
  openai_target target;
  const size_t bar = arg.find('|');
  const std::string address = arg.substr(0, bar);
  const size_t colon = address.rfind(':');
  char* end = nullptr;
  const long port =
    colon == std::string::npos ? 0 : std::strtol(address.c_str() + colon + 1, &end, 10);
  if (colon == std::string::npos || colon == 0 || *end != '\0' || port < 1 || port > 65535)
    return "'" + address + "' is not HOST:PORT";
  target.host = address.substr(0, colon);
  target.port = static_cast<uint16_t>(port);
  if (bar == std::string::npos)
    return target;
  const std::string file = arg.substr(bar + 1);
  std::ifstream in(file);
  std::stringstream text;
  text << in.rdbuf();
  if (!in)
    return "cannot read " + file;
  simdjson::dom::parser parser;
  simdjson::dom::object object;
  const std::string json = text.str();
  if (parser.parse(json).get(object))
    return file + ": not a JSON object";
  // the members, without the braces
  const size_t open = json.find('{'), close = json.rfind('}');
  target.extra_fields = json.substr(open + 1, close - open - 1);
  if (object.size() == 0)
    target.extra_fields.clear();
  return target;
}

std::string openai_body(const openai_target& target, const generate_request& r) {
  net::json_writer w;
  w.field("prompt", r.prompt_tokens)
    .field("max_tokens", r.max_tokens)
    .field("temperature", double(r.temperature))
    .field("top_p", double(r.top_p))
    .field("seed", static_cast<int64_t>(r.seed & 0x7fffffffffffffffULL))
    .field("ignore_eos", r.ignore_eos)
    .field("stream", true)
    .field("return_token_ids", true);
  std::string body = w.str();
  if (!target.extra_fields.empty()) {
    body.pop_back(); // the closing brace
    body += ',';
    body += target.extra_fields;
    body += '}';
  }
  return body;
}

void send_over_openai(const openai_target& target, const std::vector<bench_request>& requests,
                      int32_t concurrency, request_tracker& t) {
  std::vector<std::thread> threads;
  threads.reserve(requests.size());
  for (size_t i = 0; i < requests.size(); ++i) {
    std::this_thread::sleep_until(t.start() + tools::seconds(requests[i].arrival_s));
    t.wait_for_room(concurrency);
    t.sent(i);
    threads.emplace_back([&, i] { run_one(target, requests[i], i, t); });
  }
  for (auto& th : threads)
    th.join();
}

} // namespace kvactor::bench
