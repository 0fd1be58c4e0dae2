#include "model/tokenizer/byte_level.hpp"

#include <array>

#include "model/tokenizer/unicode.hpp"

namespace kvactor::model {
namespace {

struct tables {
  std::array<uint32_t, 256> to_symbol{};
  std::array<int16_t, 324> to_byte{}; // symbols are below U+0144

  tables() {
    to_byte.fill(-1);
    uint32_t next = 256;
    for (uint32_t b = 0; b < 256; ++b) {
      const bool printable =
        (b >= '!' && b <= '~') || (b >= 0xa1 && b <= 0xac) || (b >= 0xae && b <= 0xff);
      to_symbol[b] = printable ? b : next++;
      to_byte[to_symbol[b]] = static_cast<int16_t>(b);
    }
  }
};

const tables& the_tables() {
  static const tables t;
  return t;
}

} // namespace

uint32_t byte_to_symbol(uint8_t b) { return the_tables().to_symbol[b]; }

std::optional<uint8_t> symbol_to_byte(uint32_t cp) {
  const auto& t = the_tables();
  if (cp >= t.to_byte.size() || t.to_byte[cp] < 0) return std::nullopt;
  return static_cast<uint8_t>(t.to_byte[cp]);
}

std::string bytes_to_symbols(std::string_view bytes) {
  std::string out;
  out.reserve(bytes.size() * 2);
  for (char c : bytes) append_utf8(out, byte_to_symbol(static_cast<uint8_t>(c)));
  return out;
}

std::optional<std::string> symbols_to_bytes(std::string_view symbols) {
  std::string out;
  out.reserve(symbols.size());
  for (std::size_t i = 0; i < symbols.size();) {
    const auto ch = decode_utf8(symbols, i);
    if (!ch.valid) return std::nullopt;
    const auto b = symbol_to_byte(ch.code_point);
    if (!b) return std::nullopt;
    out += static_cast<char>(*b);
    i += ch.length;
  }
  return out;
}

} // namespace kvactor::model
