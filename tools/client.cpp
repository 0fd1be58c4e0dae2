// kvactor-client: one generation over the line protocol, streamed to stdout
// (with --n above 1, each choice printed when it ends).
//
//   kvactor-client [--host=H] [--port=P] [--max-tokens=N] [--temperature=T]
//                  [--top-k=K] [--top-p=P] [--seed=S] [--stop=TEXT]
//                  [--min-p=P] [--presence-penalty=X] [--frequency-penalty=X]
//                  [--repetition-penalty=X] [--min-tokens=N]
//                  [--logprobs=N] [--n=N] [--json] [--cancel-after=N] "prompt"
//   kvactor-client [--host=H] [--port=P] --stats

#include "net/client.hpp"

#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <string>

namespace {

struct options {
  std::string host = "127.0.0.1";
  uint16_t port = 7878;
  bool json = false;
  bool stats = false;
  int64_t cancel_after = -1;
  kvactor::generate_request req;
  // Only the sampling fields given here are sent: the model's
  // generation_config.json defaults the others, as for any client.
  kvactor::net::given_sampling given{false, false, false, false, false};
};

[[noreturn]] void usage(const std::string& problem) {
  std::cerr
    << "kvactor-client: " << problem << "\n"
    << "usage: kvactor-client [--host=H] [--port=P] [--max-tokens=N] [--temperature=T]\n"
       "                      [--top-k=K] [--top-p=P] [--seed=S] [--stop=TEXT]\n"
       "                      [--min-p=P] [--presence-penalty=X] [--frequency-penalty=X]\n"
       "                      [--repetition-penalty=X] [--min-tokens=N]\n"
       "                      [--logprobs=N] [--n=N] [--json] [--cancel-after=N] \"prompt\"\n"
       "       kvactor-client [--host=H] [--port=P] --stats\n";
  std::exit(2);
}

options parse(int argc, char** argv) {
  options o;
  bool have_prompt = false;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg.rfind("--", 0) != 0) {
      if (have_prompt)
        usage("one prompt only");
      o.req.prompt = arg;
      have_prompt = true;
      continue;
    }
    const size_t eq = arg.find('=');
    const std::string name = arg.substr(2, eq == std::string::npos ? std::string::npos : eq - 2);
    const std::string v = eq == std::string::npos ? "" : arg.substr(eq + 1);
    auto number = [&] {
      char* end = nullptr;
      const double d = std::strtod(v.c_str(), &end);
      if (v.empty() || *end != '\0')
        usage("not a number: " + arg);
      return d;
    };
    if (name == "host") o.host = v;
    else if (name == "port") o.port = static_cast<uint16_t>(number());
    else if (name == "max-tokens") o.req.max_tokens = static_cast<int32_t>(number());
    else if (name == "temperature") {
      o.req.temperature = static_cast<float>(number());
      o.given.temperature = true;
    } else if (name == "top-k") {
      o.req.top_k = static_cast<int32_t>(number());
      o.given.top_k = true;
    } else if (name == "top-p") {
      o.req.top_p = static_cast<float>(number());
      o.given.top_p = true;
    } else if (name == "min-p") {
      o.req.min_p = static_cast<float>(number());
      o.given.min_p = true;
    }
    else if (name == "presence-penalty") o.req.presence_penalty = static_cast<float>(number());
    else if (name == "frequency-penalty") o.req.frequency_penalty = static_cast<float>(number());
    else if (name == "repetition-penalty") {
      o.req.repetition_penalty = static_cast<float>(number());
      o.given.repetition_penalty = true;
    }
    else if (name == "min-tokens") o.req.min_tokens = static_cast<int32_t>(number());
    else if (name == "seed") o.req.seed = static_cast<uint64_t>(number());
    else if (name == "stop") o.req.stop.push_back(v);
    else if (name == "logprobs") o.req.logprobs = static_cast<int32_t>(number());
    else if (name == "n") o.req.n = static_cast<int32_t>(number());
    else if (name == "cancel-after") o.cancel_after = static_cast<int64_t>(number());
    else if (name == "json") o.json = true;
    else if (name == "stats") o.stats = true;
    else usage("unknown option " + arg);
  }
  if (!o.stats && !have_prompt)
    usage("a prompt is needed");
  return o;
}

} // namespace

int main(int argc, char** argv) {
  const options o = parse(argc, argv);
  auto connected = kvactor::net::client::connect(o.host, o.port);
  if (auto* err = std::get_if<std::string>(&connected)) {
    std::cerr << "kvactor-client: " << *err << "\n";
    return 1;
  }
  auto& c = *std::get<std::unique_ptr<kvactor::net::client>>(connected);
  if (o.stats) {
    c.send("{\"op\":\"stats\"}\n");
    auto line = c.read_line();
    std::cout << line.value_or("") << "\n";
    return line ? 0 : 1;
  }
  c.send(kvactor::net::generate_line("cli", o.req, o.given));
  const bool streams = o.req.n == 1; // several choices interleave: each printed at its end
  std::string streamed;
  int64_t num_tokens = 0;
  int32_t num_done = 0;
  while (auto line = c.read_line()) {
    if (o.json)
      std::cout << *line << "\n" << std::flush;
    auto e = kvactor::net::parse_event(*line);
    if (!e)
      continue;
    if (e->event == "error") {
      std::cerr << "kvactor-client: " << e->code << ": " << e->message << "\n";
      return 1;
    }
    if (e->event == "token") {
      if (streams)
        streamed += e->text;
      if (!o.json && streams)
        std::cout << e->text << std::flush;
      if (++num_tokens == o.cancel_after)
        c.send(kvactor::net::cancel_line("cli"));
    }
    if (e->event == "done") {
      if (!o.json) {
        if (!streams)
          std::printf("choice %lld: ", static_cast<long long>(e->choice));
        if (e->text.size() > streamed.size()) // the held-back tail, or all of it
          std::cout << e->text.substr(streamed.size());
        std::printf("\n[%s: %lld tokens, %lld prompt (%lld cached), ttft %.1f ms, total %.1f ms, "
                    "%lld preemptions]\n",
                    e->finish_reason.c_str(), static_cast<long long>(e->completion_tokens),
                    static_cast<long long>(e->prompt_tokens),
                    static_cast<long long>(e->cached_tokens), e->ttft_ms, e->total_ms,
                    static_cast<long long>(e->preemptions));
      }
      if (++num_done == o.req.n)
        return 0;
    }
  }
  std::cerr << "kvactor-client: the server closed the connection\n";
  return 1;
}
