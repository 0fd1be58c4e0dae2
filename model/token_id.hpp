#pragma once

#include <cstdint>

namespace kvactor::model {

// A row of the vocabulary (embedding and LM head).
using token_id = int32_t;

} // namespace kvactor::model
