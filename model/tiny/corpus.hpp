#pragma once
// The English text the tiny tokenizer's merges are learned from.

#include <string>

namespace kvactor::model::tiny {

// Prose written for kvactor plus the numbers 0..999, so that the learned
// merges look like a real tokenizer's (common words, suffixes, 3-digit numbers).
std::string training_corpus();

} // namespace kvactor::model::tiny
