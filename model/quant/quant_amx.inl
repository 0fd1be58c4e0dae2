// The integer block products (quant_kernels.hpp) on AMX tiles: 16 rows of
// x by one unit of columns (a block of 32, or a K-format sub-block of 32 or
// 16) in one A tile, a group's 16 rows of W by the same columns in one B
// tile, and one tdpbsud (s8 x u8) gives the 16 x 16 exact integer sums of
// that unit in a C tile. The unit's sums then go through the chain of
// quant_kernels.hpp, each lane's operations in the chain's order, so the
// bits are the vector kernels' bits.
//
// Included by quant_amx.cpp (the tile instructions) and by the tests' tile
// emulator (tests/model/quant/), inside the namespace whose products it
// defines, after quant_isa.hpp and tile_config.hpp and with these from its
// includer:
//   KVACTOR_TILE_CONFIG(config), KVACTOR_TILE_RELEASE(), KVACTOR_TILE_ZERO(t),
//   KVACTOR_TILE_LOAD(t, base, stride), KVACTOR_TILE_STORE(t, base, stride),
//   KVACTOR_TILE_DPBSUD(c, a, b)         (the intrinsics' meanings; t literal)
//   float half_to_float(uint16_t bits)
// NOTE: no std:: or other inline library code (see linear_avx512.cpp);
// everything here but the table `products` has internal linkage.

namespace {

constexpr int64_t lanes = 16;

using fmt = quant_format;

template <fmt F>
constexpr bool k_format = is_k_format(F);
// Bits of a stored integer (quant_isa.hpp), and whether the format has
// mins (Q4_1, Q5_1 one a block; Q2_K, Q4_K, Q5_K one a sub-block).
template <fmt F>
constexpr int bits = quant_bits(F);
template <fmt F>
constexpr bool has_mins = has_block_min(F) || has_sub_min(F);
// Columns of one tile product (a unit: a block or a sub-block), of a block
// of x, and units per block.
template <fmt F>
constexpr int64_t unit_cols = k_format<F> ? quant_sub_values(F) : 32;
template <fmt F>
constexpr int64_t block_cols = k_format<F> ? 256 : 32;
template <fmt F>
constexpr int64_t units_per_block = block_cols<F> / unit_cols<F>;
// A B tile: unit_cols / 4 rows of 64 bytes (lane l's 4 columns at 4 l).
template <fmt F>
constexpr int64_t tile_bytes = unit_cols<F> * lanes;

template <fmt F>
int64_t group_bytes(int64_t blocks) {
  if constexpr (k_format<F>) return k_group_bytes(F, blocks);
  else return quant_group_bytes(bits<F>, has_mins<F>, blocks);
}

// tmm0-3: C, [16, 16] int32 (row tile r against group g in tmm 2 r + g);
// tmm4, 5: A, the two row tiles [16, unit] s8; tmm6, 7: B, the two groups
// [unit / 4, 64] u8.
constexpr tile_config tiles(int64_t unit) {
  tile_config c;
  for (int t = 0; t < 8; ++t) {
    c.rows[t] = static_cast<uint8_t>(t < 6 ? 16 : unit / 4);
    c.colsb[t] = static_cast<uint16_t>(t == 4 || t == 5 ? unit : 64);
  }
  return c;
}

// The SDM's shapes for tdpbsud C += A B: rows(A) = rows(C), colsb(B) =
// colsb(C), colsb(A) = 4 rows(B), at most 16 rows of 64 bytes.
constexpr bool fits_tdpbsud(const tile_config& t, int c, int a, int b) {
  return t.rows[a] == t.rows[c] && t.colsb[b] == t.colsb[c] && t.colsb[a] == 4 * t.rows[b] &&
         t.rows[c] <= 16 && t.rows[b] <= 16 && t.colsb[c] <= 64 && t.colsb[a] <= 64;
}
constexpr bool fits_every_product(const tile_config& t) {
  return fits_tdpbsud(t, 0, 4, 6) && fits_tdpbsud(t, 1, 4, 7) && fits_tdpbsud(t, 2, 5, 6) &&
         fits_tdpbsud(t, 3, 5, 7);
}
static_assert(fits_every_product(tiles(32)) && fits_every_product(tiles(16)));

// A group of W as the tiles read it: unit u's B tile at tiles + u *
// tile_bytes; per block (super-block) b its 16 lanes' d (and Q4_1's and
// Q5_1's m, Q4_K's and Q5_K's dmin, in dmin) as fp32 at 16 b; per unit u
// the K formats' integer scales (and Q4_K's and Q5_K's mins) at 16 u.
struct group_tiles {
  const uint8_t* tiles;
  float* d;
  float* dmin;
  int32_t* scale;
  int32_t* min;
};

// Scratch bytes a group's group_tiles take.
template <fmt F>
int64_t scratch_bytes(int64_t blocks) {
  const int64_t units = blocks * units_per_block<F>;
  int64_t bytes = F == fmt::q8_0 ? 0 : units * tile_bytes<F>; // Q8_0's blocks are B tiles
  bytes += blocks * lanes * 4 * (has_mins<F> ? 2 : 1);
  if constexpr (k_format<F>) bytes += units * lanes * 4 * (has_mins<F> ? 2 : 1);
  return (bytes + 63) / 64 * 64;
}

void halves(const uint8_t* p, float* out) {
  for (int64_t l = 0; l < lanes; ++l) {
    uint16_t bits;
    __builtin_memcpy(&bits, p + 2 * l, sizeof bits);
    out[l] = half_to_float(bits);
  }
}

// A block of 32 of format F (Q4_0, Q4_1, Q5_0, Q5_1, IQ4_NL; a K format's
// sub-block as its k_sub_layout) of 4 vectors to a B tile of 8 rows of u
// (quant_unsigned): vector v's low nibbles are columns 8 v .. 8 v + 3, row
// 2 v; its high ones row 2 v + 1. A 5-bit block adds to row r bit r of the
// fifth-bit vector's byte, times 16.
template <fmt F>
void unpack_nibbles(const uint8_t* q, uint8_t* tile) {
  constexpr bool fifth = quant_bits(F) == 5;
  for (int64_t v = 0; v < 4; ++v)
    for (int64_t t = 0; t < 64; ++t) {
      const int f = fifth ? q[256 + t] >> (2 * v) : 0;
      tile[128 * v + t] =
        static_cast<uint8_t>(quant_unsigned(F, (q[64 * v + t] & 15) | (f & 1) << 4));
      tile[128 * v + 64 + t] =
        static_cast<uint8_t>(quant_unsigned(F, (q[64 * v + t] >> 4) | (f >> 1 & 1) << 4));
    }
}

// Sub-block k of 16 columns of a Q2_K, Q3_K or Q6_K super-block (its
// integers at `ints`) to a B tile of 4 rows: row r holds columns 4 r ..
// 4 r + 3, lane l's at 4 l.
template <fmt F>
void unpack_16(const uint8_t* ints, int64_t k, uint8_t* tile) {
  for (int64_t r = 0; r < 4; ++r)
    for (int64_t t = 0; t < 64; ++t)
      tile[64 * r + t] =
        static_cast<uint8_t>(k_stored(F, ints, t / 4, 16 * k + 4 * r + t % 4));
}

template <fmt F>
group_tiles prepare(const uint8_t* wg, int64_t blocks, uint8_t* scratch) {
  const int64_t units = blocks * units_per_block<F>;
  group_tiles g{};
  uint8_t* tiles_out = scratch; // unused for Q8_0
  uint8_t* at = F == fmt::q8_0 ? scratch : scratch + units * tile_bytes<F>;
  g.tiles = F == fmt::q8_0 ? wg : tiles_out;
  g.d = reinterpret_cast<float*>(at);
  at += blocks * lanes * 4;
  if constexpr (has_mins<F>) {
    g.dmin = reinterpret_cast<float*>(at);
    at += blocks * lanes * 4;
  }
  if constexpr (k_format<F>) {
    g.scale = reinterpret_cast<int32_t*>(at);
    at += units * lanes * 4;
    if constexpr (has_mins<F>) g.min = reinterpret_cast<int32_t*>(at);
  }
  if constexpr (!k_format<F>) {
    for (int64_t b = 0; b < blocks; ++b) {
      if constexpr (F != fmt::q8_0)
        unpack_nibbles<F>(wg + b * quant_ints_bytes(bits<F>), tiles_out + b * 512);
      const uint8_t* meta =
        wg + blocks * quant_ints_bytes(bits<F>) + b * quant_scales_bytes(has_mins<F>);
      halves(meta, g.d + lanes * b);
      if constexpr (has_mins<F>) halves(meta + 32, g.dmin + lanes * b);
    }
  } else {
    constexpr bool sub16 = unit_cols<F> == 16;
    for (int64_t b = 0; b < blocks; ++b) {
      const uint8_t* ints = wg + b * k_ints_bytes(F);
      const uint8_t* meta = wg + blocks * k_ints_bytes(F) + b * k_meta_bytes(F);
      halves(meta, g.d + lanes * b);
      for (int64_t s = 0; s < units_per_block<F>; ++s) {
        const int64_t u = b * units_per_block<F> + s;
        if constexpr (sub16)
          unpack_16<F>(ints, s, tiles_out + u * tile_bytes<F>);
        else
          unpack_nibbles<k_sub_layout(F)>(ints + k_sub_bytes(F) * s, tiles_out + u * tile_bytes<F>);
        for (int64_t l = 0; l < lanes; ++l) {
          g.scale[lanes * u + l] = k_sub_scale(F, meta, s, l);
          if constexpr (has_mins<F>) g.min[lanes * u + l] = k_sub_min(F, meta, s, l);
        }
      }
      if constexpr (has_mins<F>) halves(meta + 32, g.dmin + lanes * b);
    }
  }
  return g;
}

// One pass: nr <= 2 row tiles of x (A tiles read from a[r], `stride` bytes
// a row) against nb <= 2 groups, every unit in order; `rows` of the pass's
// 16 nr are x's (from row i0), `live` of its 16 nb outputs W's.
struct pass_args {
  const quant_rows_view* x;
  const int8_t* a[2];
  int64_t stride;
  int64_t i0, rows;
  int nr, nb;
  const group_tiles* g;
  int64_t live;
  float* y;
  int64_t ldy;
  bool accumulate;
};

// C tiles of one unit: c[2 r + g][i][l].
using unit_sums = int32_t[4][16][16];

template <fmt F>
void tile_products(const pass_args& p, int64_t u, int64_t column, unit_sums& c) {
  const int64_t tb = tile_bytes<F>;
  KVACTOR_TILE_ZERO(0);
  KVACTOR_TILE_ZERO(1);
  KVACTOR_TILE_ZERO(2);
  KVACTOR_TILE_ZERO(3);
  KVACTOR_TILE_LOAD(4, p.a[0] + column, p.stride);
  KVACTOR_TILE_LOAD(6, p.g[0].tiles + u * tb, 64);
  KVACTOR_TILE_DPBSUD(0, 4, 6);
  if (p.nr > 1) {
    KVACTOR_TILE_LOAD(5, p.a[1] + column, p.stride);
    KVACTOR_TILE_DPBSUD(2, 5, 6);
  }
  if (p.nb > 1) {
    KVACTOR_TILE_LOAD(7, p.g[1].tiles + u * tb, 64);
    KVACTOR_TILE_DPBSUD(1, 4, 7);
    if (p.nr > 1) KVACTOR_TILE_DPBSUD(3, 5, 7);
  }
  KVACTOR_TILE_STORE(0, c[0], 64);
  if (p.nb > 1) KVACTOR_TILE_STORE(1, c[1], 64);
  if (p.nr > 1) KVACTOR_TILE_STORE(2, c[2], 64);
  if (p.nr > 1 && p.nb > 1) KVACTOR_TILE_STORE(3, c[3], 64);
}

// A group's 16 lanes as one vector (GCC's vector extensions: one AVX-512
// register in quant_amx.cpp, whatever the emulator's build makes of them;
// each lane's operations, and their roundings, the chain's).
using f32x16 = float __attribute__((vector_size(64)));
using i32x16 = int32_t __attribute__((vector_size(64)));

template <class V, class T>
void load(V& v, const T* p) {
  __builtin_memcpy(&v, p, sizeof v);
}

// The sum of x's integers over unit s of its super-block xi (K formats).
template <fmt F>
int32_t unit_sum(const quant_rows_view& x, int64_t xi, int64_t s) {
  constexpr int64_t sums_per_unit = unit_cols<F> / 16;
  int32_t xs = 0;
  for (int64_t k = 0; k < sums_per_unit; ++k) xs += x.sum[xi * 16 + sums_per_unit * s + k];
  return xs;
}

template <fmt F>
void run_pass(const pass_args& p) {
  const quant_rows_view& x = *p.x;
  // NOTE: acc is the chain's running s, row by row of the pass, for each
  // group; total the K formats' S of a super-block.
  f32x16 acc[32][2] = {};
  i32x16 total[32][2];
  alignas(64) unit_sums c;
  for (int64_t b = 0; b < x.blocks; ++b) {
    if constexpr (k_format<F>) __builtin_memset(total, 0, sizeof total);
    for (int64_t s = 0; s < units_per_block<F>; ++s) {
      const int64_t u = b * units_per_block<F> + s;
      tile_products<F>(p, u, b * block_cols<F> + s * unit_cols<F>, c);
      for (int gi = 0; gi < p.nb; ++gi) {
        const group_tiles& g = p.g[gi];
        f32x16 dw, mw;
        i32x16 scale;
        if constexpr (k_format<F>) load(scale, g.scale + lanes * u);
        else load(dw, g.d + lanes * b);
        if constexpr (!k_format<F> && has_mins<F>) load(mw, g.dmin + lanes * b);
        for (int r = 0; r < p.nr; ++r)
          for (int64_t i = 0; i < 16 && 16 * r + i < p.rows; ++i) {
            const int64_t row = 16 * r + i, xi = (p.i0 + row) * x.blocks + b;
            i32x16 sums;
            load(sums, c[2 * r + gi][i]);
            if constexpr (k_format<F> && quant_offset(F) != 0)
              total[row][gi] += scale * (sums - quant_offset(F) * unit_sum<F>(x, xi, s));
            else if constexpr (k_format<F>)
              total[row][gi] += scale * sums;
            else if constexpr (has_mins<F>)
              acc[row][gi] =
                acc[row][gi] + ((dw * x.d[xi]) * __builtin_convertvector(sums, f32x16) +
                                (mw * x.d[xi]) * static_cast<float>(x.sum[xi]));
            else
              acc[row][gi] =
                acc[row][gi] +
                (dw * x.d[xi]) *
                  __builtin_convertvector(sums - quant_offset(F) * x.sum[xi], f32x16);
          }
      }
    }
    if constexpr (k_format<F>) {
      for (int gi = 0; gi < p.nb; ++gi) {
        const group_tiles& g = p.g[gi];
        f32x16 d, dmin;
        load(d, g.d + lanes * b);
        if constexpr (has_mins<F>) load(dmin, g.dmin + lanes * b);
        for (int64_t row = 0; row < p.rows; ++row) {
          const int64_t xi = (p.i0 + row) * x.blocks + b;
          const float dx = x.d[xi];
          const f32x16 scaled = (d * dx) * __builtin_convertvector(total[row][gi], f32x16);
          if constexpr (!has_mins<F>) {
            acc[row][gi] = acc[row][gi] + scaled;
          } else {
            i32x16 mins = {}; // M
            for (int64_t s = 0; s < units_per_block<F>; ++s) {
              i32x16 min;
              load(min, g.min + lanes * (b * units_per_block<F> + s));
              mins += min * unit_sum<F>(x, xi, s);
            }
            acc[row][gi] =
              acc[row][gi] + (scaled - (dmin * dx) * __builtin_convertvector(mins, f32x16));
          }
        }
      }
    }
  }
  for (int64_t row = 0; row < p.rows; ++row) {
    float* out = p.y + row * p.ldy;
    for (int64_t l = 0; l < p.live; ++l) {
      const float s = acc[row][l / 16][l % 16];
      out[l] = p.accumulate ? s + out[l] : s;
    }
  }
}

// All m rows against every group, two groups at a time (unpacked once into
// the scratch), their rows two row tiles at a time; x's last rows, short
// of a tile, from a copy padded with zeros to 16.
template <fmt F>
void product(const quant_rows_view& x, int64_t m, const uint8_t* w, int64_t n, float* y,
             int64_t ldy, bool accumulate) {
  const int64_t stride = x.blocks * block_cols<F>;
  const int64_t full = m / 16, tail = m % 16, row_tiles = full + (tail ? 1 : 0);
  const int64_t per_group = scratch_bytes<F>(x.blocks);
  uint8_t* scratch = quant_scratch(2 * per_group + (tail ? 16 * stride : 0));
  const int8_t* padded = nullptr;
  if (tail) {
    int8_t* copy = reinterpret_cast<int8_t*>(scratch + 2 * per_group);
    __builtin_memcpy(copy, x.q + full * 16 * stride, static_cast<unsigned long>(tail * stride));
    __builtin_memset(copy + tail * stride, 0, static_cast<unsigned long>((16 - tail) * stride));
    padded = copy;
  }
  static constexpr tile_config config = tiles(unit_cols<F>);
  KVACTOR_TILE_CONFIG(&config);
  const int64_t gbytes = group_bytes<F>(x.blocks), num_groups = (n + lanes - 1) / lanes;
  for (int64_t g0 = 0; g0 < num_groups; g0 += 2) {
    group_tiles g[2]{};
    pass_args p{};
    p.x = &x;
    p.stride = stride;
    p.nb = num_groups - g0 >= 2 ? 2 : 1;
    for (int j = 0; j < p.nb; ++j)
      g[j] = prepare<F>(w + (g0 + j) * gbytes, x.blocks, scratch + j * per_group);
    p.g = g;
    p.live = n - lanes * g0 < 2 * lanes ? n - lanes * g0 : 2 * lanes;
    p.ldy = ldy;
    p.accumulate = accumulate;
    for (int64_t t = 0; t < row_tiles; t += 2) {
      p.nr = row_tiles - t >= 2 ? 2 : 1;
      for (int r = 0; r < p.nr; ++r)
        p.a[r] = t + r < full ? x.q + (t + r) * 16 * stride : padded;
      p.i0 = 16 * t;
      p.rows = m - p.i0 < 16 * p.nr ? m - p.i0 : 16 * p.nr;
      p.y = y + p.i0 * ldy + lanes * g0;
      run_pass<F>(p);
    }
  }
  KVACTOR_TILE_RELEASE();
}

} // namespace

const quant_products products = KVACTOR_QUANT_PRODUCTS_OF(product);
