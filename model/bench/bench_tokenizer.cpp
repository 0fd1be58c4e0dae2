// kvactor-bench-tokenizer: encode and decode speed of a tokenizer.json on a
// text, one thread, the median of --reps runs: MB of text and tokens per
// second. The text is --text's file, or the tokenizer reference texts
// (tools/tokenizer-reference/texts.json) joined, repeated to about 1 MB.
// When tokenizer_config.json beside it has a chat template: the time to load
// it (the first also starts the embedded Python) and to render
// conversations of 1, 7 and 31 messages of 200 bytes (median of 40 x --reps).
//
//   kvactor-bench-tokenizer --tokenizer=DIR/tokenizer.json [--text=FILE] [--reps=5]

#include <simdjson.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "base/json.hpp"
#include "model/chat_template.hpp"
#include "model/tokenizer/tokenizer.hpp"

using namespace kvactor;

namespace {

struct options {
  std::string tokenizer;
  std::string text = KVACTOR_TOKENIZER_TEXTS;
  int reps = 5;
};

bool parse(int argc, char** argv, options& o) {
  for (int i = 1; i < argc; ++i) {
    const std::string_view a = argv[i];
    if (a.starts_with("--tokenizer="))
      o.tokenizer = a.substr(12);
    else if (a.starts_with("--text="))
      o.text = a.substr(7);
    else if (a.starts_with("--reps=") && std::atoi(argv[i] + 7) > 0)
      o.reps = std::atoi(argv[i] + 7);
    else
      return false;
  }
  return !o.tokenizer.empty();
}

// The file's text; a JSON list of strings (texts.json) is joined by newlines.
result<std::string> read_text(const std::string& file) {
  auto raw = json::read_file(file);
  if (!raw) return raw.error();
  if (!file.ends_with(".json")) return std::string(raw->data(), raw->size());
  simdjson::ondemand::parser p;
  simdjson::ondemand::document doc = p.iterate(*raw);
  std::string out;
  for (auto s : doc.get_array()) {
    out += std::string_view(s.get_string());
    out += '\n';
  }
  return out;
}

template <class F>
double median_seconds(int reps, F&& f) {
  std::vector<double> t;
  for (int r = 0; r < reps; ++r) {
    const auto start = std::chrono::steady_clock::now();
    f();
    t.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
  }
  std::sort(t.begin(), t.end());
  return t[t.size() / 2];
}

// Loads and renders the chat template of `dir`, if it has one.
void bench_chat_template(const std::filesystem::path& dir, const std::string& text, int reps) {
  const auto start = std::chrono::steady_clock::now();
  const auto chat = model::chat_template::load(dir);
  const std::chrono::duration<double> load = std::chrono::steady_clock::now() - start;
  if (!chat) {
    std::printf("chat template: %s\n", chat.error().message.c_str());
    return;
  }
  if (chat->is_plain())
    return;
  std::printf("chat template: loaded in %.1f ms (Python started, template compiled)\n",
              load.count() * 1e3);
  for (size_t turns : {1, 7, 31}) {
    std::vector<model::chat_message> messages;
    for (size_t i = 0; i < turns; ++i)
      messages.push_back({i % 2 ? "assistant" : "user", text.substr((i * 200) % text.size(), 200)});
    size_t bytes = 0;
    const double r = median_seconds(reps * 40, [&] { bytes = chat->render(messages)->size(); });
    std::printf("chat template: %2zu messages -> %5zu bytes: %.0f us per render\n", turns, bytes,
                r * 1e6);
  }
}

} // namespace

int main(int argc, char** argv) {
  options o;
  if (!parse(argc, argv, o)) {
    std::fprintf(stderr, "usage: kvactor-bench-tokenizer --tokenizer=FILE [--text=FILE] "
                         "[--reps=N]\n");
    return 2;
  }
  auto tok = model::tokenizer::load(o.tokenizer);
  auto text = read_text(o.text);
  if (!tok || !text) {
    std::fprintf(stderr, "kvactor-bench-tokenizer: %s\n",
                 (tok ? text.error() : tok.error()).message.c_str());
    return 1;
  }
  std::string big;
  while (big.size() < (1u << 20)) big += *text;
  std::vector<model::token_id> ids;
  const double enc = median_seconds(o.reps, [&] { ids = tok->encode(big, true); });
  std::string back;
  const double dec = median_seconds(o.reps, [&] { back = tok->decode(ids); });
  const double mb = double(big.size()) / 1e6;
  std::printf("%s: %.2f MB, %zu tokens\n", o.tokenizer.c_str(), mb, ids.size());
  std::printf("encode: %.1f MB/s, %.2f M tokens/s\n", mb / enc, double(ids.size()) / enc / 1e6);
  std::printf("decode: %.1f MB/s, %.2f M tokens/s\n", double(back.size()) / 1e6 / dec,
              double(ids.size()) / dec / 1e6);
  bench_chat_template(std::filesystem::path(o.tokenizer).parent_path(), *text, o.reps);
  return ids.empty() ? 1 : 0;
}
