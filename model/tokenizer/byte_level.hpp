#pragma once
// GPT-2's byte-level alphabet: every byte is shown as one printable Unicode
// character, so that a BPE vocabulary of strings covers arbitrary bytes.
// Printable Latin-1 bytes ('!'..'~', '¡'..'¬', '®'..'ÿ') stand for themselves;
// the other 68 bytes map in order to U+0100, U+0101, ... (space -> 'Ġ' U+0120,
// newline -> 'Ċ' U+010A).

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace kvactor::model {

// The character that stands for byte `b`.
uint32_t byte_to_symbol(uint8_t b);

// The byte a symbol stands for; nullopt for characters outside the alphabet.
std::optional<uint8_t> symbol_to_byte(uint32_t cp);

// Raw bytes -> their symbols, UTF-8 encoded.
std::string bytes_to_symbols(std::string_view bytes);

// UTF-8 symbols -> the raw bytes; nullopt when a character is not a symbol.
std::optional<std::string> symbols_to_bytes(std::string_view symbols);

} // namespace kvactor::model
