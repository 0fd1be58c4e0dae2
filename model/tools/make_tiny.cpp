// kvactor-make-tiny --out=DIR [options]: writes a tiny model folder in the
// exact format of a Hugging Face checkpoint, and with --gguf the same model
// as GGUF files. See --help.

#include <cstdio>
#include <fstream>
#include <sstream>
#include <string_view>
#include <vector>

#include "model/gguf/gguf_export.hpp"
#include "model/model_folder.hpp"
#include "model/tiny/tiny_args.hpp"

namespace {

using namespace kvactor::model;

// DIR/model-<type>.gguf from the folder just written: its weights in fp32
// (or quantised) and its tokenizer's keys.
kvactor::status write_gguf(const std::filesystem::path& dir, std::string_view type) {
  auto m = load_model_folder(dir, dtype::f32);
  if (!m) return m.error();
  std::ifstream in(dir / "tokenizer.json", std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  auto spec = parse_tokenizer_json(text.str(), (dir / "tokenizer.json").string());
  if (!spec) return spec.error();
  gguf_writer w;
  if (auto ok = add_gguf_tokenizer(*spec, m->config, w); !ok) return ok;
  std::string name = "model-";
  name += type;
  name += ".gguf";
  return export_gguf(m->config, m->weights, *gguf_matrices::parse(type), std::move(w), dir / name);
}

} // namespace

int main(int argc, char** argv) {
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
  for (const std::string& type : parsed->gguf)
    if (auto ok = write_gguf(parsed->out, type); !ok) {
      std::fprintf(stderr, "kvactor-make-tiny: %s\n", ok.error().message.c_str());
      return 1;
    }
  std::printf("kvactor-make-tiny: wrote %s\n", parsed->out.c_str());
  return 0;
}
