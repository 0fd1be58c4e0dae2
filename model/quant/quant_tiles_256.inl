// The integer block products (quant_kernels.hpp) on 256-bit vectors: a
// group's 16 rows are two vectors of 8 lanes; tiles of up to `tile_rows`
// rows of x against one group, each vector of W unpacked once for all of
// them. Included by quant_avx2.cpp and quant_avx_vnni.cpp inside their
// namespace after their signed_weights; each then defines madd_pair and
// dot4, the steps their instructions do differently.
// NOTE: intrinsics only (see linear_avx512.cpp); built with
// -ffp-contract=off, as every kernel.

namespace {

constexpr int64_t lanes = 16, block = 32, super = 256;

inline int64_t at_most(int64_t a, int64_t b) { return a < b ? a : b; }

inline __m256i broadcast4(const int8_t* x) {
  int bits;
  __builtin_memcpy(&bits, x, sizeof bits);
  return _mm256_set1_epi32(bits);
}

// Half h (lanes 8h .. 8h + 7) of vector j of a block's integers.
inline __m256i load_half(const uint8_t* q, int j, int h) {
  return _mm256_loadu_si256(reinterpret_cast<const __m256i*>(q + 64 * j + 32 * h));
}

// Bit 4 of each byte from bit 4 - s of that byte (16-bit shifts: for
// -3 <= s <= 4 no bit that lands on bit 4 crosses a byte).
inline __m256i to_bit4(__m256i v, int s) {
  return s >= 0 ? _mm256_slli_epi16(v, s) : _mm256_srli_epi16(v, -s);
}

// Half h of vector j of a 4- or 5-bit block's nibbles (Bits 4, 5), as the
// integers of its low-nibble columns and of its high-nibble ones; Bits 5
// with their fifth bits, bits 2j and 2j + 1 of the vector after the 4 of
// nibbles, moved to bit 4.
template <int Bits>
inline void nibbles(const uint8_t* q, int j, int h, __m256i& lo, __m256i& hi) {
  const __m256i low = _mm256_set1_epi8(15), packed = load_half(q, j, h);
  lo = _mm256_and_si256(packed, low);
  hi = _mm256_and_si256(_mm256_srli_epi16(packed, 4), low);
  if constexpr (Bits == 5) {
    const __m256i fifth = load_half(q, 4, h), bit = _mm256_set1_epi8(16);
    lo = _mm256_or_si256(lo, _mm256_and_si256(to_bit4(fifth, 4 - 2 * j), bit));
    hi = _mm256_or_si256(hi, _mm256_and_si256(to_bit4(fifth, 3 - 2 * j), bit));
  }
}

// IQ4's levels, each plus Plus (iq4_bytes), as a vpshufb table in both
// 128-bit lanes.
template <int Plus>
inline __m256i iq4_table() {
  static constexpr iq4_table_bytes t = iq4_bytes(Plus);
  return _mm256_broadcastsi128_si256(_mm_load_si128(reinterpret_cast<const __m128i*>(t.b)));
}

// Whether a block of format L (of a K format: a sub-block) goes in as
// signed weights, |w| times x with w's sign: Q8_0's and IQ4's in a kernel
// of signed_weights (AVX2, whose 16-bit pairs their u would overflow);
// every other as its u.
template <quant_format L>
constexpr bool goes_signed() {
  return signed_weights && (has_codebook(L) || quant_bits(L) == 8);
}

// What the products of a block of format F add beyond its values', per
// unit of the activations' sum: the sums start at minus it times that sum.
template <quant_format F>
constexpr int32_t weight_offset() {
  return goes_signed<F>() ? 0 : quant_offset(F);
}

// Columns 8j .. 8j + 3 (a) and 8j + 4 .. 8j + 7 (b) of half h of a block
// of 32 of format L (quantized_matrix layout; a K format's sub-block: of
// its k_sub_layout) at `q`: u, or the signed weights (goes_signed).
template <quant_format L>
inline void pair_of(const uint8_t* q, int j, int h, __m256i& a, __m256i& b) {
  if constexpr (quant_bits(L) == 8) {
    a = load_half(q, 2 * j, h);
    b = load_half(q, 2 * j + 1, h);
    if constexpr (goes_signed<L>()) {
      // NOTE: q + 128 as stored, flipped back to the signed q.
      const __m256i flip = _mm256_set1_epi8(static_cast<char>(0x80));
      a = _mm256_xor_si256(a, flip);
      b = _mm256_xor_si256(b, flip);
    }
  } else {
    nibbles<quant_bits(L)>(q, j, h, a, b);
    if constexpr (has_codebook(L)) {
      const __m256i table = iq4_table<goes_signed<L>() ? 0 : 128>();
      a = _mm256_shuffle_epi8(table, a);
      b = _mm256_shuffle_epi8(table, b);
    }
  }
}

// acc + per lane the products of a with x[0 .. 3] and of b with x[4 .. 7]
// (a, b from pair_of<L>).
template <quant_format L>
inline __m256i madd_pair(__m256i acc, __m256i a, __m256i b, const int8_t* x);

// acc + per 32-bit lane the sum of its 4 products u8 u x s8 x (u < 64).
inline __m256i dot4(__m256i acc, __m256i u, __m256i x);

// Half h of 16 bytes of metadata (one per lane), widened to 32 bits.
inline __m256i half_bytes(const uint8_t* p, int h, bool is_signed) {
  const __m128i b = _mm_loadl_epi64(reinterpret_cast<const __m128i*>(p + 8 * h));
  return is_signed ? _mm256_cvtepi8_epi32(b) : _mm256_cvtepu8_epi32(b);
}

// Half h of 16 fp16 values (one per lane).
inline __m256 half_floats(const uint8_t* p, int h) {
  return _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p + 16 * h)));
}

// A tile's R rows of accumulators (both halves) to y (n <= 16 outputs a
// row; + y when accumulate).
template <int R>
void store(const __m256 (&acc)[R][2], int64_t n, float* y, int64_t ldy, bool accumulate) {
#pragma GCC unroll 8
  for (int i = 0; i < R; ++i) {
    float out[lanes];
    _mm256_storeu_ps(out, acc[i][0]);
    _mm256_storeu_ps(out + 8, acc[i][1]);
    float* dst = y + i * ldy;
    for (int64_t l = 0; l < n; ++l) dst[l] = accumulate ? out[l] + dst[l] : out[l];
  }
}

// NOTE: a lone row (decode) walks one group at a time, too few streams of
// memory for the hardware's prefetchers to keep it busy: each super-block
// asks for the one 4 ahead (a block of 32, the one 32 ahead), measured from
// memory 1.3x (Q4_K) to 3x (Q3_K) the bytes a second without.
constexpr int64_t supers_ahead = 4, blocks_ahead = 32;
inline void prefetch(const uint8_t* p, int64_t bytes) {
  for (int64_t at = 0; at < bytes; at += 64)
    _mm_prefetch(reinterpret_cast<const char*>(p + at), _MM_HINT_T0);
}

// Per lane, s[i] + row i's sum over half h of a block of 32 of format L
// at `q` of the products with its activations at xq[i].
template <quant_format L, int R>
inline void block_sums(const uint8_t* q, int h, const int8_t* const (&xq)[R], __m256i (&s)[R]) {
#pragma GCC unroll 4
  for (int j = 0; j < 4; ++j) {
    __m256i a, b;
    pair_of<L>(q, j, h, a, b);
#pragma GCC unroll 8
    for (int i = 0; i < R; ++i) s[i] = madd_pair<L>(s[i], a, b, xq[i] + 8 * j);
  }
}

// R rows of x against one group (n <= 16 outputs of it) of a format of
// blocks of 32 (Q4_1's and Q5_1's with a min, offset 0).
template <quant_format F, int R>
void block_tile(const quant_rows_view& x, const uint8_t* w, int64_t n, float* y, int64_t ldy,
                bool accumulate) {
  constexpr int bits = quant_bits(F);
  constexpr bool min = has_block_min(F);
  const int64_t scales = x.blocks * quant_ints_bytes(bits);
  __m256 acc[R][2];
#pragma GCC unroll 8
  for (int i = 0; i < R; ++i) acc[i][0] = acc[i][1] = _mm256_setzero_ps();
  for (int64_t b = 0; b < x.blocks; ++b) {
    const uint8_t* ints = w + b * quant_ints_bytes(bits);
    const uint8_t* meta = w + scales + b * quant_scales_bytes(min);
    if constexpr (R == 1)
      prefetch(ints + blocks_ahead * quant_ints_bytes(bits), quant_ints_bytes(bits));
#pragma GCC unroll 2
    for (int h = 0; h < 2; ++h) {
      const int8_t* xq[R];
      __m256i isum[R];
#pragma GCC unroll 8
      for (int i = 0; i < R; ++i) {
        xq[i] = x.q + (i * x.blocks + b) * block;
        isum[i] = _mm256_set1_epi32(-weight_offset<F>() * x.sum[i * x.blocks + b]);
      }
      block_sums<F, R>(ints, h, xq, isum);
      const __m256 dw = half_floats(meta, h);
#pragma GCC unroll 8
      for (int i = 0; i < R; ++i) {
        const int64_t at = i * x.blocks + b;
        const __m256 dx = _mm256_set1_ps(x.d[at]);
        __m256 term = _mm256_mul_ps(_mm256_mul_ps(dw, dx), _mm256_cvtepi32_ps(isum[i]));
        if constexpr (min)
          term = _mm256_add_ps(term, _mm256_mul_ps(_mm256_mul_ps(half_floats(meta + 32, h), dx),
                                                   _mm256_set1_ps(static_cast<float>(x.sum[at]))));
        acc[i][h] = _mm256_add_ps(acc[i][h], term);
      }
    }
  }
  store<R>(acc, n, y, ldy, accumulate);
}

// S (and M; quant_kernels.hpp) of half h of a Q4_K, Q5_K or IQ4_XS
// super-block against R rows' blocks of 256 activations at xq[i] and
// their sums per 16 at xsum[i].
template <quant_format F, int R>
inline void sums_32(const int8_t* const (&xq)[R], const int32_t* const (&xsum)[R],
                    const uint8_t* ints, const uint8_t* meta, int h, __m256i (&total)[R],
                    __m256i (&mins)[R]) {
  constexpr bool with_min = has_sub_min(F);
  for (int s = 0; s < 8; ++s) {
    const int8_t* xs[R];
    int32_t sub_sum[R];
    __m256i t[R];
#pragma GCC unroll 8
    for (int i = 0; i < R; ++i) {
      xs[i] = xq[i] + 32 * s;
      sub_sum[i] = xsum[i][2 * s] + xsum[i][2 * s + 1];
      t[i] = _mm256_set1_epi32(-weight_offset<F>() * sub_sum[i]);
    }
    // NOTE: a sub-block is laid out as a block of k_sub_layout(F).
    block_sums<k_sub_layout(F), R>(ints + k_sub_bytes(F) * s, h, xs, t);
    const __m256i scale = half_bytes(meta + k_scales_at(F) + 16 * s, h, !with_min);
    const __m256i min = with_min ? half_bytes(meta + k_mins_at + 16 * s, h, false) : scale;
#pragma GCC unroll 8
    for (int i = 0; i < R; ++i) {
      total[i] = _mm256_add_epi32(total[i], _mm256_mullo_epi32(t[i], scale));
      if constexpr (with_min)
        mins[i] = _mm256_add_epi32(mins[i], _mm256_mullo_epi32(min, _mm256_set1_epi32(sub_sum[i])));
    }
  }
}

// Half h of the 16 columns of sub-block k of a Q2_K, Q3_K or Q6_K
// super-block as 4 vectors of u8, vector t columns 4t .. 4t + 3 (unpacked
// as in quant_avx512_vnni.cpp).
template <quant_format F, bool Odd>
inline void unpack_16(const uint8_t* ints, int k, int h, __m256i (&u)[4]) {
  const uint8_t* sub = ints + k_sub_at(F, k);
  if constexpr (F == quant_format::q6_k) {
    const __m256i low = _mm256_set1_epi8(15), top = _mm256_set1_epi8(0x30);
    const __m256i p0 = load_half(sub, 0, h), p1 = load_half(sub, 1, h), hb = load_half(sub, 2, h);
    u[0] =
      _mm256_or_si256(_mm256_and_si256(p0, low), _mm256_and_si256(_mm256_slli_epi16(hb, 4), top));
    u[1] = _mm256_or_si256(_mm256_and_si256(_mm256_srli_epi16(p0, 4), low),
                           _mm256_and_si256(_mm256_slli_epi16(hb, 2), top));
    u[2] = _mm256_or_si256(_mm256_and_si256(p1, low), _mm256_and_si256(hb, top));
    u[3] = _mm256_or_si256(_mm256_and_si256(_mm256_srli_epi16(p1, 4), low),
                           _mm256_and_si256(_mm256_srli_epi16(hb, 2), top));
    return;
  }
  const __m256i two = _mm256_set1_epi8(3), p = load_half(sub, 0, h);
  u[0] = _mm256_and_si256(p, two);
  u[1] = _mm256_and_si256(_mm256_srli_epi16(p, 2), two);
  u[2] = _mm256_and_si256(_mm256_srli_epi16(p, 4), two);
  u[3] = _mm256_and_si256(_mm256_srli_epi16(p, 6), two);
  if constexpr (F == quant_format::q3_k) {
    __m256i third = load_half(ints + k_third_at(k), 0, h);
    if constexpr (Odd) third = _mm256_srli_epi16(third, 4);
    const __m256i bit = _mm256_set1_epi8(4);
    u[0] = _mm256_or_si256(u[0], _mm256_and_si256(_mm256_slli_epi16(third, 2), bit));
    u[1] = _mm256_or_si256(u[1], _mm256_and_si256(_mm256_slli_epi16(third, 1), bit));
    u[2] = _mm256_or_si256(u[2], _mm256_and_si256(third, bit));
    u[3] = _mm256_or_si256(u[3], _mm256_and_si256(_mm256_srli_epi16(third, 1), bit));
  }
}

// S (and Q2_K's M) of half h of a Q2_K, Q3_K or Q6_K super-block, as
// sums_32.
template <quant_format F, int R>
inline void sums_16(const int8_t* const (&xq)[R], const int32_t* const (&xsum)[R],
                    const uint8_t* ints, const uint8_t* meta, int h, __m256i (&total)[R],
                    __m256i (&mins)[R]) {
  constexpr bool q2 = F == quant_format::q2_k;
  for (int k = 0; k < 16; ++k) {
    __m256i u[4];
    if (k % 2) unpack_16<F, true>(ints, k, h, u);
    else unpack_16<F, false>(ints, k, h, u);
    const __m256i packed = half_bytes(meta + k_scales_at(F) + 16 * k, h, !q2);
    const __m256i scale = q2 ? _mm256_and_si256(packed, _mm256_set1_epi32(15)) : packed;
#pragma GCC unroll 8
    for (int i = 0; i < R; ++i) {
      const int8_t* xk = xq[i] + 16 * k;
      __m256i t = _mm256_set1_epi32(-weight_offset<F>() * xsum[i][k]);
#pragma GCC unroll 4
      for (int c = 0; c < 4; ++c) t = dot4(t, u[c], broadcast4(xk + 4 * c));
      total[i] = _mm256_add_epi32(total[i], _mm256_mullo_epi32(t, scale));
      if constexpr (q2)
        mins[i] = _mm256_add_epi32(
          mins[i], _mm256_mullo_epi32(_mm256_srli_epi32(packed, 4), _mm256_set1_epi32(xsum[i][k])));
    }
  }
}

// The same for the K formats, super-block by super-block.
template <quant_format F, int R>
void super_tile(const quant_rows_view& x, const uint8_t* w, int64_t n, float* y, int64_t ldy,
                bool accumulate) {
  const int64_t metadata = x.blocks * k_ints_bytes(F);
  __m256 acc[R][2];
#pragma GCC unroll 8
  for (int i = 0; i < R; ++i) acc[i][0] = acc[i][1] = _mm256_setzero_ps();
  for (int64_t b = 0; b < x.blocks; ++b) {
    const uint8_t* ints = w + b * k_ints_bytes(F);
    const uint8_t* meta = w + metadata + b * k_meta_bytes(F);
    if constexpr (R == 1) {
      prefetch(ints + supers_ahead * k_ints_bytes(F), k_ints_bytes(F));
      prefetch(meta + supers_ahead * k_meta_bytes(F), k_meta_bytes(F));
    }
    const int8_t* xq[R];
    const int32_t* xsum[R];
#pragma GCC unroll 8
    for (int i = 0; i < R; ++i) {
      xq[i] = x.q + (i * x.blocks + b) * super;
      xsum[i] = x.sum + (i * x.blocks + b) * 16;
    }
#pragma GCC unroll 2
    for (int h = 0; h < 2; ++h) {
      __m256i total[R], mins[R];
#pragma GCC unroll 8
      for (int i = 0; i < R; ++i) total[i] = mins[i] = _mm256_setzero_si256();
      if constexpr (quant_sub_values(F) == 16) sums_16<F, R>(xq, xsum, ints, meta, h, total, mins);
      else sums_32<F, R>(xq, xsum, ints, meta, h, total, mins);
      const __m256 d = half_floats(meta, h);
#pragma GCC unroll 8
      for (int i = 0; i < R; ++i) {
        const __m256 dx = _mm256_set1_ps(x.d[i * x.blocks + b]);
        const __m256 scaled = _mm256_mul_ps(_mm256_mul_ps(d, dx), _mm256_cvtepi32_ps(total[i]));
        if constexpr (has_sub_min(F)) {
          const __m256 dmin = half_floats(meta + 32, h);
          const __m256 offset = _mm256_mul_ps(_mm256_mul_ps(dmin, dx), _mm256_cvtepi32_ps(mins[i]));
          acc[i][h] = _mm256_add_ps(acc[i][h], _mm256_sub_ps(scaled, offset));
        } else {
          acc[i][h] = _mm256_add_ps(acc[i][h], scaled);
        }
      }
    }
  }
  store<R>(acc, n, y, ldy, accumulate);
}

// What product() needs of a format: a group's bytes, x from row i on, and
// the tile. Q8_0, Q4_0, Q4_1, Q5_0, Q5_1, IQ4_NL: blocks of 32 with one sum
// each.
template <quant_format F>
struct blocks_of_32 {
  static int64_t group_bytes(int64_t blocks) {
    return quant_group_bytes(quant_bits(F), has_block_min(F), blocks);
  }
  static quant_rows_view rows_from(const quant_rows_view& x, int64_t i) {
    return {x.q + i * x.blocks * block, x.d + i * x.blocks, x.sum + i * x.blocks, x.blocks};
  }
  template <int R>
  static void tile(const quant_rows_view& x, const uint8_t* w, int64_t n, float* y, int64_t ldy,
                   bool accumulate) {
    block_tile<F, R>(x, w, n, y, ldy, accumulate);
  }
};

// The K formats: super-blocks of 256 with 16 sums each.
template <quant_format F>
struct super_blocks {
  static int64_t group_bytes(int64_t blocks) { return k_group_bytes(F, blocks); }
  static quant_rows_view rows_from(const quant_rows_view& x, int64_t i) {
    return {x.q + i * x.blocks * super, x.d + i * x.blocks, x.sum + i * x.blocks * 16, x.blocks};
  }
  template <int R>
  static void tile(const quant_rows_view& x, const uint8_t* w, int64_t n, float* y, int64_t ldy,
                   bool accumulate) {
    super_tile<F, R>(x, w, n, y, ldy, accumulate);
  }
};

// A tile of `rows` (1 .. R) rows.
template <class F, int R>
void tile_of(int64_t rows, const quant_rows_view& x, const uint8_t* w, int64_t n, float* y,
             int64_t ldy, bool accumulate) {
  if constexpr (R > 0) {
    if (rows == R) F::template tile<R>(x, w, n, y, ldy, accumulate);
    else tile_of<F, R - 1>(rows, x, w, n, y, ldy, accumulate);
  }
}

// NOTE: the rows' sums, an unpacked pair (a 16-column sub-block's 4
// vectors) and the accumulators in 16 registers: tiles of 4 rows, measured
// 1.3x (Q4_K) to 2x (Q3_K) the old tiles of 2 rows that unpacked W for each
// row (AVX-VNNI at 128 rows), against 3, 5 or 6 rows about even.
constexpr int tile_rows = 4;

// Group by group, the rows in tiles of up to tile_rows (next_tile_rows).
template <class F>
void product(const quant_rows_view& x, int64_t m, const uint8_t* w, int64_t n, float* y,
             int64_t ldy, bool accumulate) {
  const int64_t group_bytes = F::group_bytes(x.blocks);
  for (int64_t g = 0; g * lanes < n; ++g) {
    const uint8_t* wg = w + g * group_bytes;
    const int64_t live = at_most(lanes, n - g * lanes);
    for (int64_t i = 0, rows = 0; i < m; i += rows) {
      rows = next_tile_rows(m - i, tile_rows);
      tile_of<F, tile_rows>(rows, F::rows_from(x, i), wg, live, y + i * ldy + g * lanes, ldy,
                            accumulate);
    }
  }
}

// The entry of format F.
template <quant_format F>
void product_of(const quant_rows_view& x, int64_t m, const uint8_t* w, int64_t n, float* y,
                int64_t ldy, bool accumulate) {
  if constexpr (is_k_format(F))
    product<super_blocks<F>>(x, m, w, n, y, ldy, accumulate);
  else
    product<blocks_of_32<F>>(x, m, w, n, y, ldy, accumulate);
}

} // namespace

const quant_products products = KVACTOR_QUANT_PRODUCTS_OF(product_of);
