/* util.c — seeded randomness, UTC calendar arithmetic, string interning and
 * array growth (util.h).  Calendar code is our own so results never depend on
 * the host's time zone or C library. */
#include "lucid/util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---------- randomness ---------- */

static uint64_t splitmix64(uint64_t *x)
{
    uint64_t z = (*x += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

void lucid_rng_seed(lucid_rng *rng, uint64_t seed)
{
    uint64_t x = seed;
    for (int i = 0; i < 4; i++)
        rng->s[i] = splitmix64(&x);
}

static uint64_t rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }

uint64_t lucid_rng_next(lucid_rng *rng)
{
    uint64_t *s = rng->s;
    uint64_t result = rotl(s[1] * 5, 7) * 9;
    uint64_t t = s[1] << 17;
    s[2] ^= s[0];
    s[3] ^= s[1];
    s[1] ^= s[2];
    s[0] ^= s[3];
    s[2] ^= t;
    s[3] = rotl(s[3], 45);
    return result;
}

uint64_t lucid_rng_below(lucid_rng *rng, uint64_t n)
{
    uint64_t limit = UINT64_MAX - UINT64_MAX % n;
    uint64_t x;
    do
        x = lucid_rng_next(rng);
    while (x >= limit);
    return x % n;
}

double lucid_rng_unit(lucid_rng *rng) { return (double)(lucid_rng_next(rng) >> 11) * 0x1.0p-53; }

/* ---------- calendar ---------- */

/* Days since 1970-01-01 of a civil date (Howard Hinnant's algorithm). */
static int64_t days_from_civil(int64_t y, int m, int d)
{
    y -= m <= 2;
    int64_t era = (y >= 0 ? y : y - 399) / 400;
    int64_t yoe = y - era * 400;
    int64_t doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
    int64_t doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    return era * 146097 + doe - 719468;
}

static void civil_from_days(int64_t z, int *year, int *month, int *day)
{
    z += 719468;
    int64_t era = (z >= 0 ? z : z - 146096) / 146097;
    int64_t doe = z - era * 146097;
    int64_t yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
    int64_t y = yoe + era * 400;
    int64_t doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    int64_t mp = (5 * doy + 2) / 153;
    int d = (int)(doy - (153 * mp + 2) / 5 + 1);
    int m = (int)(mp < 10 ? mp + 3 : mp - 9);
    *year = (int)(y + (m <= 2));
    *month = m;
    *day = d;
}

static int is_leap(int y) { return (y % 4 == 0 && y % 100 != 0) || y % 400 == 0; }

static int days_in_month(int y, int m)
{
    static const int days[12] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
    return m == 2 && is_leap(y) ? 29 : days[m - 1];
}

static int read_digits(const char *s, int n, int *out)
{
    int v = 0;
    for (int i = 0; i < n; i++) {
        if (s[i] < '0' || s[i] > '9')
            return -1;
        v = v * 10 + (s[i] - '0');
    }
    *out = v;
    return 0;
}

int lucid_time_parse(const char *s, int64_t *out)
{
    int y, mo, d, h = 0, mi = 0, se = 0;
    size_t n = strlen(s);
    if (n != 10 && n != 19)
        return -1;
    if (read_digits(s, 4, &y) || s[4] != '-' || read_digits(s + 5, 2, &mo) || s[7] != '-' ||
        read_digits(s + 8, 2, &d))
        return -1;
    if (n == 19 && ((s[10] != ' ' && s[10] != 'T') || read_digits(s + 11, 2, &h) || s[13] != ':' ||
                    read_digits(s + 14, 2, &mi) || s[16] != ':' || read_digits(s + 17, 2, &se)))
        return -1;
    if (mo < 1 || mo > 12 || d < 1 || d > days_in_month(y, mo) || h > 23 || mi > 59 || se > 59)
        return -1;
    *out = days_from_civil(y, mo, d) * 86400 + h * 3600 + mi * 60 + se;
    return 0;
}

void lucid_time_split(int64_t t, lucid_tm *tm)
{
    int64_t days = t >= 0 ? t / 86400 : -((-t + 86399) / 86400);
    int64_t secs = t - days * 86400;
    civil_from_days(days, &tm->year, &tm->month, &tm->day);
    tm->hour = (int)(secs / 3600);
    tm->minute = (int)(secs / 60 % 60);
    tm->second = (int)(secs % 60);
    /* 1970-01-01 was a Thursday (Monday = 0 -> 3). */
    tm->dayofweek = (int)(((days % 7) + 7 + 3) % 7);
    tm->dayofyear = (int)(days - days_from_civil(tm->year, 1, 1)) + 1;
    /* ISO week: the week with the year's first Thursday is week 1. */
    int64_t thursday = days - tm->dayofweek + 3;
    int ty, tmo, td;
    civil_from_days(thursday, &ty, &tmo, &td);
    tm->isoweek = (int)((thursday - days_from_civil(ty, 1, 1)) / 7) + 1;
}

void lucid_time_format(int64_t t, char *buf, size_t size)
{
    lucid_tm tm;
    lucid_time_split(t, &tm);
    snprintf(buf, size, "%04d-%02d-%02d %02d:%02d:%02d", tm.year, tm.month, tm.day, tm.hour,
             tm.minute, tm.second);
}

/* ---------- string interning (open addressing) ---------- */

/* A slot keeps its string's hash and length beside the id: a probe that
 * meets another string is rejected without reading that string (a cache
 * miss per probe when the strings were compared, 10 % of loading a trace). */
typedef struct strtab_slot {
    int32_t id; /* -1 = empty */
    uint32_t hash;
    size_t len;
} strtab_slot;

struct lucid_strtab {
    char **strings;
    size_t count, cap;
    strtab_slot *slots;
    size_t nslots;
};

/* 8 bytes per multiply (FNV-1a took one multiply per byte, a serial chain
 * of ~4 cycles a byte, for the user, model and dataset of every trace row).
 * The hash only places strings in this table: ids follow first insertion
 * and nothing outside sees it.  The last word overlaps the one before instead of
 * a byte loop (whose exit mispredicted on the short names of a trace), and
 * 4-7 bytes are two overlapping 4-byte loads.  The length seeds the hash,
 * so overlapping words of different lengths do not collide by design. */
static uint64_t hash_bytes(const char *s, size_t n)
{
    uint64_t h = 0x9e3779b97f4a7c15ULL ^ n, tail = 0;
    if (n > 8) {
        for (; n > 8; s += 8, n -= 8) {
            uint64_t w;
            memcpy(&w, s, 8);
            h = (h ^ w) * 0xbf58476d1ce4e5b9ULL;
            h ^= h >> 31;
        }
        memcpy(&tail, s + n - 8, 8); /* within the string: it had more than 8 bytes */
    } else if (n >= 4) {
        uint32_t lo, hi;
        memcpy(&lo, s, 4);
        memcpy(&hi, s + n - 4, 4);
        tail = lo | (uint64_t)hi << 32;
    } else if (n > 0) {
        tail = (uint64_t)(unsigned char)s[0] | (uint64_t)(unsigned char)s[n / 2] << 8 |
               (uint64_t)(unsigned char)s[n - 1] << 16;
    }
    h = (h ^ tail) * 0xbf58476d1ce4e5b9ULL;
    h ^= h >> 29;
    h *= 0x94d049bb133111ebULL;
    return h ^ (h >> 32);
}

static strtab_slot *new_slots(size_t n)
{
    strtab_slot *slots = malloc(n * sizeof *slots);
    if (slots)
        for (size_t i = 0; i < n; i++)
            slots[i].id = -1;
    return slots;
}

lucid_strtab *lucid_strtab_new(void)
{
    lucid_strtab *tab = calloc(1, sizeof *tab);
    if (!tab)
        return NULL;
    tab->nslots = 64;
    tab->slots = new_slots(tab->nslots);
    if (!tab->slots) {
        free(tab);
        return NULL;
    }
    return tab;
}

void lucid_strtab_free(lucid_strtab *tab)
{
    if (!tab)
        return;
    for (size_t i = 0; i < tab->count; i++)
        free(tab->strings[i]);
    free(tab->strings);
    free(tab->slots);
    free(tab);
}

static size_t find_slot(const lucid_strtab *tab, const char *s, size_t n, uint32_t hash)
{
    size_t mask = tab->nslots - 1, i = hash & mask;
    for (;; i = (i + 1) & mask) {
        const strtab_slot *slot = &tab->slots[i];
        if (slot->id < 0 ||
            (slot->hash == hash && slot->len == n && lucid_bytes_equal(tab->strings[slot->id], s, n)))
            return i;
    }
}

int32_t lucid_strtab_find_n(const lucid_strtab *tab, const char *s, size_t n)
{
    return tab->slots[find_slot(tab, s, n, (uint32_t)hash_bytes(s, n))].id;
}

int32_t lucid_strtab_find(const lucid_strtab *tab, const char *s)
{
    return lucid_strtab_find_n(tab, s, strlen(s));
}

static int rehash(lucid_strtab *tab)
{
    size_t nslots = tab->nslots * 2;
    strtab_slot *slots = new_slots(nslots);
    if (!slots)
        return -1;
    for (size_t i = 0; i < tab->nslots; i++)
        if (tab->slots[i].id >= 0) {
            size_t j = tab->slots[i].hash & (nslots - 1);
            while (slots[j].id >= 0)
                j = (j + 1) & (nslots - 1);
            slots[j] = tab->slots[i];
        }
    free(tab->slots);
    tab->slots = slots;
    tab->nslots = nslots;
    return 0;
}

int32_t lucid_strtab_intern_n(lucid_strtab *tab, const char *s, size_t n)
{
    uint32_t hash = (uint32_t)hash_bytes(s, n);
    size_t slot = find_slot(tab, s, n, hash);
    if (tab->slots[slot].id >= 0)
        return tab->slots[slot].id;
    if (LUCID_GROW(tab->strings, tab->cap, tab->count + 1) < 0)
        return -1;
    char *copy = malloc(n + 1);
    if (!copy)
        return -1;
    memcpy(copy, s, n);
    copy[n] = '\0';
    int32_t id = (int32_t)tab->count;
    tab->strings[tab->count++] = copy;
    tab->slots[slot] = (strtab_slot){id, hash, n};
    if (tab->count * 2 > tab->nslots && rehash(tab) < 0)
        return -1;
    return id;
}

int32_t lucid_strtab_intern(lucid_strtab *tab, const char *s)
{
    return lucid_strtab_intern_n(tab, s, strlen(s));
}

const char *lucid_strtab_get(const lucid_strtab *tab, int32_t id)
{
    return id >= 0 && (size_t)id < tab->count ? tab->strings[id] : "";
}

int32_t lucid_strtab_count(const lucid_strtab *tab) { return (int32_t)tab->count; }

char *lucid_strdup(const char *s)
{
    size_t n = strlen(s) + 1;
    char *d = malloc(n);
    if (d)
        memcpy(d, s, n);
    return d;
}

char *lucid_trim(char *s)
{
    while (*s == ' ' || *s == '\t')
        s++;
    size_t n = strlen(s);
    while (n && (s[n - 1] == ' ' || s[n - 1] == '\t' || s[n - 1] == '\n' || s[n - 1] == '\r'))
        s[--n] = '\0';
    return s;
}

int lucid_grow(void **items, size_t *cap, size_t need, size_t size)
{
    if (need <= *cap)
        return 0;
    size_t n = *cap ? *cap : 16;
    while (n < need)
        n *= 2;
    void *grown = realloc(*items, n * size);
    if (!grown)
        return -1;
    *items = grown;
    *cap = n;
    return 0;
}

/* Length of the well-formed UTF-8 sequence at p (1-4), or 0 if malformed. */
static size_t utf8_sequence(const unsigned char *p)
{
    unsigned char c = p[0];
    if (c < 0x80)
        return 1;
    size_t len;
    unsigned char lo = 0x80, hi = 0xBF; /* allowed range of the second byte */
    if (c >= 0xC2 && c <= 0xDF)
        len = 2;
    else if (c >= 0xE0 && c <= 0xEF) {
        len = 3;
        if (c == 0xE0)
            lo = 0xA0; /* no overlongs */
        else if (c == 0xED)
            hi = 0x9F; /* no surrogates */
    } else if (c >= 0xF0 && c <= 0xF4) {
        len = 4;
        if (c == 0xF0)
            lo = 0x90;
        else if (c == 0xF4)
            hi = 0x8F; /* nothing above U+10FFFF */
    } else
        return 0;
    if (p[1] < lo || p[1] > hi)
        return 0;
    for (size_t k = 2; k < len; k++)
        if (p[k] < 0x80 || p[k] > 0xBF)
            return 0;
    return len;
}

size_t lucid_utf8_copy(char *dst, size_t size, const char *src)
{
    if (size == 0)
        return 0;
    const unsigned char *p = (const unsigned char *)(src ? src : "");
    size_t used = 0;
    while (*p) {
        size_t len = utf8_sequence(p);
        const char *piece = (const char *)p;
        size_t take = len;
        if (len == 0) {
            piece = "?";
            take = 1;
            len = 1;
        }
        if (used + take >= size)
            break;
        memcpy(dst + used, piece, take);
        used += take;
        p += len;
    }
    dst[used] = '\0';
    return used;
}
