/* palette.c — frame colours.  See palette.h. */
#include "palette.h"

#include <ctype.h>
#include <stdio.h>
#include <string.h>

static const struct {
  const char *name;
  palette_id id;
} NAMES[] = {
  {"hot", PAL_HOT},       {"mem", PAL_MEM},       {"io", PAL_IO},
  {"wakeup", PAL_WAKEUP}, {"chain", PAL_CHAIN},   {"java", PAL_JAVA},
  {"js", PAL_JS},         {"perl", PAL_PERL},     {"red", PAL_RED},
  {"green", PAL_GREEN},   {"blue", PAL_BLUE},     {"aqua", PAL_AQUA},
  {"yellow", PAL_YELLOW}, {"purple", PAL_PURPLE}, {"orange", PAL_ORANGE},
  {"lua", PAL_LUA},
};

int palette_parse(const char *name, palette_id *out)
{
  for (size_t i = 0; i < sizeof NAMES / sizeof NAMES[0]; i++)
    if (strcmp(name, NAMES[i].name) == 0) {
      *out = NAMES[i].id;
      return 0;
    }
  return -1;
}

const char *palette_names(void)
{
  return "lua, hot, mem, io, wakeup, chain, java, js, perl, red, green, "
         "blue, aqua, yellow, purple, orange";
}

/* flamegraph.pl's namehash: weights the first characters, so names with a
 * common start get similar colours; a module prefix up to '`' is cut. */
static double fg_namehash(const unsigned char *s, size_t n, int reverse)
{
  unsigned char buf[3];
  size_t k = 0;
  /* Perl: $name =~ s/.(.*?)`//  (first char through the first backquote) */
  if (!reverse) {
    const unsigned char *bq = n > 1 ? memchr(s + 1, '`', n - 1) : NULL;
    if (bq) {
      n -= (size_t)(bq + 1 - s);
      s = bq + 1;
    }
    for (; k < 3 && k < n; k++)
      buf[k] = s[k];
  } else {
    /* The reversed name, then the same cut (on the reversed string). */
    size_t start = 0;
    if (n > 1)
      for (size_t i = 1; i < n; i++)
        if (s[n - 1 - i] == '`') {
          start = i + 1;
          break;
        }
    for (; k < 3 && start + k < n; k++)
      buf[k] = s[n - 1 - start - k];
  }
  double vector = 0, weight = 1, max = 1;
  int mod = 10;
  for (size_t i = 0; i < k; i++) {
    int v = buf[i] % mod;
    vector += ((double)v / (mod++ - 1)) * weight;
    max += weight;
    weight *= 0.70;
  }
  return 1 - vector / max;
}

static uint64_t fnv1a(const unsigned char *s, size_t n)
{
  uint64_t h = 0xcbf29ce484222325ull;
  for (size_t i = 0; i < n; i++) {
    h ^= s[i];
    h *= 0x100000001b3ull;
  }
  h ^= h >> 33;
  h *= 0xff51afd7ed558ccdull;
  h ^= h >> 33;
  return h;
}

static void name_values(const palette *p, const char *name, size_t len,
                        double v[3])
{
  const unsigned char *s = (const unsigned char *)name;
  if (p->name_hash) {
    v[0] = fg_namehash(s, len, 0);
    v[1] = v[2] = fg_namehash(s, len, 1);
    return;
  }
  uint64_t h = fnv1a(s, len);
  v[0] = (double)(h & 0xFFFF) / 65536.0;
  v[1] = (double)((h >> 16) & 0xFFFF) / 65536.0;
  v[2] = (double)((h >> 32) & 0xFFFF) / 65536.0;
}

static rgb mk(int r, int g, int b)
{
  rgb c = {(uint8_t)r, (uint8_t)g, (uint8_t)b};
  return c;
}

static rgb classic(palette_id id, const double v[3])
{
  double v1 = v[0], v2 = v[1], v3 = v[2];
  switch (id) {
  case PAL_HOT:
    return mk(205 + (int)(50 * v3), (int)(230 * v1), (int)(55 * v2));
  case PAL_MEM:
    return mk(0, 190 + (int)(50 * v2), (int)(210 * v1));
  case PAL_IO:
  case PAL_WAKEUP:
  case PAL_CHAIN: {
    int r = 80 + (int)(60 * v1);
    return mk(r, r, 190 + (int)(55 * v2));
  }
  case PAL_RED: {
    int x = 50 + (int)(80 * v1);
    return mk(200 + (int)(55 * v1), x, x);
  }
  case PAL_GREEN: {
    int x = 50 + (int)(60 * v1);
    return mk(x, 200 + (int)(55 * v1), x);
  }
  case PAL_BLUE: {
    int x = 80 + (int)(60 * v1);
    return mk(x, x, 205 + (int)(50 * v1));
  }
  case PAL_YELLOW: {
    int x = 175 + (int)(55 * v1);
    return mk(x, x, 50 + (int)(20 * v1));
  }
  case PAL_PURPLE: {
    int x = 190 + (int)(65 * v1);
    return mk(x, 80 + (int)(60 * v1), x);
  }
  case PAL_AQUA:
    return mk(50 + (int)(60 * v1), 165 + (int)(55 * v1), 165 + (int)(55 * v1));
  case PAL_ORANGE:
    return mk(190 + (int)(65 * v1), 90 + (int)(65 * v1), 0);
  default:
    return mk(0, 0, 0);
  }
}

static int has(const char *s, size_t n, const char *needle)
{
  size_t k = strlen(needle);
  for (size_t i = 0; i + k <= n; i++)
    if (memcmp(s + i, needle, k) == 0)
      return 1;
  return 0;
}

static int starts(const char *s, size_t n, const char *prefix)
{
  size_t k = strlen(prefix);
  return n >= k && memcmp(s, prefix, k) == 0;
}

ljp_class palette_guess_class(const char *s, size_t n)
{
  if (starts(s, n, "VMST_") || starts(s, n, "VM:") || starts(s, n, "INTERNAL"))
    return LJP_CLASS_VM;
  if (starts(s, n, "TRACE [") || starts(s, n, "TRACE#"))
    return LJP_CLASS_TRACE;
  if (starts(s, n, "@") || starts(s, n, "=") || starts(s, n, "function_alias_"))
    return LJP_CLASS_LUA;
  /* A function named from its source: "risk_score @service.lua:196". */
  if (has(s, n, " @") || has(s, n, " ="))
    return LJP_CLASS_LUA;
  if (starts(s, n, "builtin#") || starts(s, n, "ffunc#"))
    return LJP_CLASS_FFUNC;
  if (starts(s, n, "CFUNC "))
    return LJP_CLASS_CFUNC;
  return LJP_CLASS_OTHER;
}

/* Families for the LuaJIT palette: a base colour and how far each channel
 * may move with the name's hash (light background variant). */
typedef struct family {
  int r, g, b, dr, dg, db;
} family;

static const family LUA_FAMILIES[7] = {
  [LJP_CLASS_OTHER] = {205, 100, 20, 50, 110, 40},  /* hot-like */
  [LJP_CLASS_LUA] = {70, 185, 60, 60, 55, 60},      /* greens */
  [LJP_CLASS_FFUNC] = {60, 170, 190, 50, 50, 55},   /* aquas */
  [LJP_CLASS_CFUNC] = {200, 180, 40, 45, 50, 30},   /* yellows */
  [LJP_CLASS_HOST] = {215, 90, 60, 40, 70, 40},     /* reds */
  [LJP_CLASS_TRACE] = {160, 100, 210, 50, 50, 45},  /* purples */
  [LJP_CLASS_VM] = {150, 150, 150, 40, 40, 40},     /* greys */
};

/* Okabe-Ito: distinguishable with any common colour-vision deficiency. */
static const family CB_FAMILIES[7] = {
  [LJP_CLASS_OTHER] = {213, 94, 0, 30, 30, 20},     /* vermillion */
  [LJP_CLASS_LUA] = {0, 158, 115, 25, 30, 30},      /* bluish green */
  [LJP_CLASS_FFUNC] = {86, 180, 233, 30, 25, 20},   /* sky blue */
  [LJP_CLASS_CFUNC] = {240, 228, 66, 15, 25, 40},   /* yellow */
  [LJP_CLASS_HOST] = {230, 159, 0, 25, 30, 20},     /* orange */
  [LJP_CLASS_TRACE] = {204, 121, 167, 30, 30, 30},  /* reddish purple */
  [LJP_CLASS_VM] = {160, 160, 160, 40, 40, 40},     /* grey */
};

static int clamp255(int v)
{
  return v < 0 ? 0 : v > 255 ? 255 : v;
}

static rgb family_color(const family *f, const double v[3], int colorblind)
{
  if (colorblind || (f->r == f->g && f->g == f->b)) {
    /* Keep the hue (and greys grey), vary only the lightness: hue is what
     * tells classes apart, so it must not drift towards a neighbour. */
    double t = v[0] - 0.5;
    return mk(clamp255(f->r + (int)(t * 2 * f->dr)),
              clamp255(f->g + (int)(t * 2 * f->dg)),
              clamp255(f->b + (int)(t * 2 * f->db)));
  }
  return mk(clamp255(f->r + (int)(v[0] * f->dr)),
            clamp255(f->g + (int)(v[1] * f->dg)),
            clamp255(f->b + (int)(v[2] * f->db)));
}

rgb palette_color(const palette *p, const char *name, size_t len,
                  ljp_class cls)
{
  if (len == 1 && name[0] == '-')   /* flamegraph.pl: stack separators */
    return mk(160, 160, 160);
  double v[3];
  name_values(p, name, len, v);
  palette_id id = p->id;
  switch (id) {
  case PAL_LUA:
    if (cls == LJP_CLASS_OTHER)
      cls = palette_guess_class(name, len);
    if ((unsigned)cls > LJP_CLASS_VM)
      cls = LJP_CLASS_OTHER;
    return family_color(p->colorblind ? &CB_FAMILIES[cls] : &LUA_FAMILIES[cls],
                        v, p->colorblind);
  case PAL_JAVA:
  case PAL_JS:
  case PAL_PERL:
    /* flamegraph.pl's multi palettes, by name shape. */
    if (len >= 4 && memcmp(name + len - 4, "_[k]", 4) == 0)
      id = PAL_ORANGE;
    else if (len >= 4 && memcmp(name + len - 4, "_[j]", 4) == 0)
      id = PAL_GREEN;
    else if (len >= 4 && memcmp(name + len - 4, "_[i]", 4) == 0)
      id = PAL_AQUA;
    else if (has(name, len, "::"))
      id = PAL_YELLOW;
    else if (memchr(name, '/', len) || (p->id == PAL_PERL && has(name, len, ".pl")))
      id = PAL_GREEN;
    else if (p->id == PAL_JS && memchr(name, ':', len))
      id = PAL_AQUA;
    else
      id = PAL_RED;
    break;
  default:
    break;
  }
  return classic(id, v);
}

rgb palette_class_color(const palette *p, ljp_class cls)
{
  double v[3] = {0.5, 0.5, 0.5};
  if ((unsigned)cls > LJP_CLASS_VM)
    cls = LJP_CLASS_OTHER;
  return family_color(p->colorblind ? &CB_FAMILIES[cls] : &LUA_FAMILIES[cls],
                      v, p->colorblind);
}

const char *palette_class_label(ljp_class cls)
{
  switch (cls) {
  case LJP_CLASS_LUA: return "Lua function";
  case LJP_CLASS_FFUNC: return "fast function";
  case LJP_CLASS_CFUNC: return "Lua-C function";
  case LJP_CLASS_HOST: return "host C";
  case LJP_CLASS_TRACE: return "JIT trace";
  case LJP_CLASS_VM: return "VM state";
  default: return "other";
  }
}

rgb palette_diff(double delta, double max, int negate)
{
  int r = 255, g = 255, b = 255;
  if (negate)
    delta = -delta;
  if (max <= 0)
    max = 1;
  if (delta > max)
    delta = max;
  if (delta < -max)
    delta = -max;
  if (delta > 0)
    g = b = (int)(210 * (max - delta) / max);
  else if (delta < 0)
    r = g = (int)(210 * (max + delta) / max);
  return mk(r, g, b);
}

static int is_hex_color(const char *s)
{
  if (s[0] != '#' || strlen(s) != 7)
    return 0;
  for (int i = 1; i < 7; i++)
    if (!isxdigit((unsigned char)s[i]))
      return 0;
  return 1;
}

int palette_background(palette_id id, const char *bg, char top[8],
                       char bottom[8], int *dark)
{
  *dark = 0;
  if (!bg) {
    switch (id) {
    case PAL_MEM: bg = "blue"; break;
    case PAL_IO: case PAL_WAKEUP: case PAL_CHAIN: case PAL_LUA: bg = "grey"; break;
    default: bg = "yellow"; break;
    }
  }
  const char *a, *b;
  if (strcmp(bg, "yellow") == 0)
    a = "#eeeeee", b = "#eeeeb0";
  else if (strcmp(bg, "blue") == 0)
    a = "#eeeeee", b = "#e0e0ff";
  else if (strcmp(bg, "green") == 0)
    a = "#eef2ee", b = "#e0ffe0";
  else if (strcmp(bg, "grey") == 0 || strcmp(bg, "gray") == 0)
    a = "#f8f8f8", b = "#e8e8e8";
  else if (strcmp(bg, "dark") == 0) {
    a = "#2a2a2e", b = "#18181b";
    *dark = 1;
  } else if (is_hex_color(bg))
    a = b = bg;
  else
    return -1;
  snprintf(top, 8, "%s", a);
  snprintf(bottom, 8, "%s", b);
  return 0;
}
