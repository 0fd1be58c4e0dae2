// libFuzzer target for the line protocol's parser: any bytes must give a
// message or a protocol error (never a crash, a leak or undefined
// behaviour), every error must format as one line, and a parsed generate
// request must survive a round trip through the client's line builder.

#include "net/client.hpp"
#include "net/line_protocol.hpp"

#include <cstdio>
#include <cstdlib>

using namespace kvactor::net;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static line_parser parser;
  static line_parser again;
  std::string_view line(reinterpret_cast<const char*>(data), size);
  auto m = parser.parse(line);
  if (auto* e = std::get_if<protocol_error>(&m)) {
    const std::string out = format_error(*e);
    if (out.empty() || out.back() != '\n' || out.find('\n') != out.size() - 1)
      std::abort();
  } else if (auto* g = std::get_if<generate_op>(&m)) {
    auto back = again.parse(generate_line(g->id, g->request));
    auto* g2 = std::get_if<generate_op>(&back);
    if (!g2 || g2->id != g->id || g2->request.prompt_tokens != g->request.prompt_tokens ||
        g2->request.max_tokens != g->request.max_tokens || g2->request.stop != g->request.stop ||
        g2->request.min_tokens != g->request.min_tokens ||
        g2->request.stop_token_ids != g->request.stop_token_ids ||
        g2->request.logit_bias.size() != g->request.logit_bias.size()) {
      std::fprintf(stderr, "round trip changed the request: %s\n",
                   generate_line(g->id, g->request).c_str());
      std::abort();
    }
  }
  return 0;
}
