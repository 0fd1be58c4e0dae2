// kvactor-make-tiny --out=DIR [options]: writes a tiny model folder in the
// exact format of a Hugging Face checkpoint. See --help.

#include <cstdio>
#include <string_view>
#include <vector>

#include "model/tiny/tiny_args.hpp"

int main(int argc, char** argv) {
  using namespace kvactor::model;
  std::vector<std::string_view> args(argv + 1, argv + argc);
  auto parsed = tiny::parse_args(args);
  if (!parsed) {
    std::fprintf(stderr, "kvactor-make-tiny: %s\n%s", parsed.error().message.c_str(),
                 tiny::usage().c_str());
    return 2;
  }
  if (parsed->help) {
    std::fputs(tiny::usage().c_str(), stdout);
    return 0;
  }
  if (auto ok = tiny::write_model(parsed->out, parsed->options); !ok) {
    std::fprintf(stderr, "kvactor-make-tiny: %s\n", ok.error().message.c_str());
    return 1;
  }
  std::printf("kvactor-make-tiny: wrote %s\n", parsed->out.c_str());
  return 0;
}
