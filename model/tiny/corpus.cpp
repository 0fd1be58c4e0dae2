#include "model/tiny/corpus.hpp"

#include <algorithm>
#include <vector>

#include "model/rng.hpp"

namespace kvactor::model::tiny {
namespace {

// NOTE: written for this project; any English would do. It only has to be
// varied enough that training yields a few thousand plausible merges.
constexpr const char* prose =
  R"(The harbour town woke slowly on the first cold morning of the year. Fishing boats
rocked against the stone wall, and the gulls argued over the scraps that the night had left behind.
Anna opened the bakery at six, as she had done every day for twenty years. She lit the ovens, weighed
the flour, and set the first loaves to rise while the kettle began to sing. "It's going to be a long
day," she said to the cat, who did not answer. The cat never answered, which Anna considered one of
its better qualities.

By seven the street was busy. Children walked to school with their scarves pulled up to their noses,
and the old men who met every morning outside the post office were already disagreeing about the
weather. One of them insisted that snow was coming; another said that it hadn't snowed in the town for
eleven winters and wouldn't start now. They had been having the same argument, with small variations,
for as long as anyone could remember.

Computers are machines that follow instructions. A program is a list of those instructions, written
in a language that both people and machines can read. When you run a program, the processor fetches
each instruction from memory, decodes it, and executes it, billions of times every second. Memory is
organised in pages and blocks; a cache keeps recently used data close to the processor so that it
doesn't have to wait for the slower main memory. Good programs are careful about how they use memory,
because waiting for data is often slower than computing with it.

A language model reads text as a sequence of tokens. Each token is a small piece of text: a whole
word, part of a word, a number, or a single character. The model predicts the next token from the
tokens that came before it, one step at a time. To make this fast, a server keeps the keys and values
of the attention layers in a cache, so that earlier tokens are not computed again for every new one.
When many requests arrive together, the server groups them into batches and schedules them so that the
hardware stays busy. If the cache runs out of space, some requests have to wait, or their blocks are
moved to the host memory and brought back later.

In the kitchen, the recipe was simple: two cups of flour, one cup of warm water, a spoon of salt, and a
little yeast. Mix the dough, knead it for ten minutes until it feels smooth and elastic, then cover it
and leave it somewhere warm for an hour. When it has doubled in size, shape it into a loaf, let it rise
again, and bake it in a hot oven for about forty minutes. The bread is ready when it sounds hollow as
you knock on the bottom.

The library was quiet except for the ticking of the clock above the door. Students were reading,
writing, and thinking; some of them were sleeping. The librarian walked between the shelves, putting
books back in their places and making notes about the ones that needed repair. She believed that every
book deserved to be read at least once, and she often recommended forgotten titles to visitors who
looked as though they needed something new.

What is the difference between weather and climate? Weather is what happens today: the rain, the wind,
the temperature this afternoon. Climate is the pattern of weather over many years. A single cold winter
does not change the climate, and a single warm summer does not prove that it is changing. Scientists
measure temperatures, rainfall, and ice across the whole planet, and they compare those measurements
with records that go back more than a hundred years.

The train left the station at exactly twelve minutes past nine. Through the window, the fields turned
from green to gold, and the rivers flashed silver in the sunlight. A woman across the aisle was
knitting a long red scarf; a man near the door was talking quietly on his phone about a meeting that
had been moved to Thursday. Nobody was in a hurry. The journey would take three hours, and there was
nothing to do but watch the country go by.

Questions worth asking: Why does the sky look blue? How do birds know where to fly in winter? What makes
a good friend? Where does the light go when you turn it off? Some of these questions have answers in
physics and biology; others are answered only by living. Both kinds are worth asking again and again.

"Don't forget the keys," he called from the stairs. "I won't," she replied, and then she did. They
stood outside the locked door for a moment, looking at each other, and then they both started to
laugh. There are worse places to be locked out than a sunny street on a Saturday afternoon, with a
café on the corner and nowhere in particular to go.
)";

// Words of the prose (letters only, lower case), in first-seen order.
std::vector<std::string> prose_words() {
  std::vector<std::string> words;
  std::string w;
  for (const char* p = prose;; ++p) {
    const char c = *p;
    if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z')) {
      w += static_cast<char>(c | 0x20);
    } else {
      if (!w.empty()) words.push_back(w);
      w.clear();
    }
    if (c == '\0') break;
  }
  return words;
}

// Invented words from a small syllable inventory: they give the trainer
// many recurring sub-word pieces, as a large real corpus would.
std::string invented_word(rng& r) {
  static constexpr const char* onsets[] = {"b",  "d",  "f",  "g",  "k",  "l",  "m", "n",
                                           "p",  "r",  "s",  "t",  "v",  "w",  "z", "st",
                                           "tr", "ch", "sh", "th", "br", "pl", "gr"};
  static constexpr const char* vowels[] = {"a", "e", "i", "o", "u", "ai", "ou", "ea", "io"};
  static constexpr const char* codas[] = {"", "", "", "n", "r", "s", "l", "t", "nd", "st", "ng"};
  std::string w;
  const int syllables = 1 + static_cast<int>(r.next() % 3);
  for (int i = 0; i < syllables; ++i) {
    w += onsets[r.next() % std::size(onsets)];
    w += vowels[r.next() % std::size(vowels)];
    w += codas[r.next() % std::size(codas)];
  }
  return w;
}

} // namespace

std::string training_corpus() {
  std::string text = prose;
  text += "\nNumbers:";
  for (int i = 0; i < 1000; ++i) {
    text += ' ';
    text += std::to_string(i);
  }
  text += "\nYears: 1999, 2000, 2001, 2010, 2020, 2023, 2024, 2025.\n";

  // Sentences over a lexicon of the prose's words and invented ones, drawn
  // with Zipf-like frequencies (rank r has weight 1/r).
  rng r(20250101);
  std::vector<std::string> lexicon = prose_words();
  for (int i = 0; i < 3000; ++i) lexicon.push_back(invented_word(r));
  std::vector<double> cumulative;
  double total = 0;
  for (std::size_t i = 0; i < lexicon.size(); ++i)
    cumulative.push_back(total += 1.0 / static_cast<double>(i + 1));
  bool sentence_start = true;
  for (int i = 0; i < 40000; ++i) {
    const double u = r.uniform() * total;
    const auto k = std::min<std::size_t>(
      static_cast<std::size_t>(std::lower_bound(cumulative.begin(), cumulative.end(), u) -
                               cumulative.begin()),
      lexicon.size() - 1);
    std::string w = lexicon[k];
    if (sentence_start) w[0] = static_cast<char>(w[0] - 32);
    text += sentence_start ? "" : " ";
    text += w;
    sentence_start = false;
    const auto punct = r.next() % 16;
    if (punct == 0) {
      text += ".";
      text += (r.next() % 4 == 0) ? "\n" : " ";
      sentence_start = true;
    } else if (punct == 1) {
      text += ",";
    }
  }
  return text;
}

} // namespace kvactor::model::tiny
