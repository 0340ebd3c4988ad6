/* RFC 8785 canonical JSON. Three rules make it differ from a plain dump, and each is done by
 * hand here: numbers in ECMAScript Number::toString form (RFC 8785 §3.2.2.3), object members
 * sorted by UTF-16 code units rather than UTF-8 bytes (§3.2.3), and strings with only the
 * minimal escapes, control characters as lower-case \u00xx (§3.2.2.2). */
#include "core/jcs.h"

#include <float.h>
#include <inttypes.h>
#include <math.h>
#include <sodium.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/jsonlimit.h"

/* ---- numbers ------------------------------------------------------------------------------ */

/* Integers up to 2^53 are exact doubles, so printing them as integers is their ES form too. */
#define JCS_EXACT_INT_LIMIT 9007199254740992LL

static bool round_trips(uint64_t mantissa, int exp10, double want)
{
    char buf[48];
    /* No decimal point in the text: strtod's reading then does not depend on the locale. */
    snprintf(buf, sizeof buf, "%" PRIu64 "e%d", mantissa, exp10);
    return strtod(buf, NULL) == want;
}

/* Finds the shortest decimal M·10^q (M without trailing zeros) that reads back as x > 0. For
 * each digit count p it tries the correctly rounded p-digit value and, when that misses, its
 * neighbour on the other side of x: at a power of two the rounding interval is lopsided, and
 * the nearest p-digit value can fall outside it while the next one is inside. */
static void shortest_decimal(double x, uint64_t *mantissa_out, int *exp10_out)
{
    /* For a normal double, any decimal of at most DBL_DIG (15) digits that reads back as x is
     * what printing x with 15 digits gives (trailing zeros aside), so the search can start
     * there; subnormals carry fewer digits and need the whole search from 1. */
    int first = x >= DBL_MIN ? DBL_DIG : 1;
    for (int p = first; p <= 17; p++) {
        char buf[48];
        snprintf(buf, sizeof buf, "%.*e", p - 1, x);
        uint64_t m = 0;
        const char *c = buf;
        for (; *c && *c != 'e'; c++)
            if (*c >= '0' && *c <= '9')
                m = m * 10 + (uint64_t)(*c - '0');
        int q = atoi(c + 1) - (p - 1);
        uint64_t found = 0;
        if (round_trips(m, q, x)) {
            found = m;
        } else if (p < 17) {
            char probe[48];
            snprintf(probe, sizeof probe, "%" PRIu64 "e%d", m, q);
            uint64_t other = strtod(probe, NULL) < x ? m + 1 : m - 1;
            if (other > 0 && round_trips(other, q, x))
                found = other;
        }
        if (found) {
            while (found % 10 == 0) {
                found /= 10;
                q++;
            }
            *mantissa_out = found;
            *exp10_out = q;
            return;
        }
    }
    /* 17 significant digits always round-trip (IEEE 754 §5.12.2); unreachable for finite x. */
    *mantissa_out = 0;
    *exp10_out = 0;
}

int jcs_format_double(double d, char out[JCS_NUMBER_MAX])
{
    if (!isfinite(d))
        return -1;
    if (d == 0) { /* both zeros: ES prints -0 as "0" */
        out[0] = '0';
        out[1] = '\0';
        return 1;
    }
    uint64_t m;
    int q;
    shortest_decimal(fabs(d), &m, &q);
    char digits[24];
    int k = snprintf(digits, sizeof digits, "%" PRIu64, m);
    int n = q + k; /* ES: value = 0.d1…dk × 10^n */
    size_t o = 0;
    if (d < 0)
        out[o++] = '-';
    if (k <= n && n <= 21) {
        memcpy(out + o, digits, (size_t)k);
        o += (size_t)k;
        for (int i = 0; i < n - k; i++)
            out[o++] = '0';
    } else if (0 < n && n <= 21) {
        memcpy(out + o, digits, (size_t)n);
        o += (size_t)n;
        out[o++] = '.';
        memcpy(out + o, digits + n, (size_t)(k - n));
        o += (size_t)(k - n);
    } else if (-6 < n && n <= 0) {
        out[o++] = '0';
        out[o++] = '.';
        for (int i = 0; i < -n; i++)
            out[o++] = '0';
        memcpy(out + o, digits, (size_t)k);
        o += (size_t)k;
    } else {
        out[o++] = digits[0];
        if (k > 1) {
            out[o++] = '.';
            memcpy(out + o, digits + 1, (size_t)(k - 1));
            o += (size_t)(k - 1);
        }
        o += (size_t)snprintf(out + o, JCS_NUMBER_MAX - o, "e%c%d", n - 1 > 0 ? '+' : '-',
                              abs(n - 1));
    }
    out[o] = '\0';
    return (int)o;
}

/* ---- output buffer ------------------------------------------------------------------------ */

struct jcs_buf {
    char *data;
    size_t len, cap;
    bool failed;         /* out of memory: every later append is a no-op */
    bool document_order; /* jcs_dump: members as the document holds them, not sorted */
    int depth;           /* arrays and objects open: refused past JSON_NEST_MAX */
};

static void buf_append(struct jcs_buf *b, const char *s, size_t n)
{
    if (b->failed)
        return;
    if (b->len + n + 1 > b->cap) {
        size_t cap = b->cap ? b->cap : 256;
        while (cap < b->len + n + 1)
            cap *= 2;
        char *grown = realloc(b->data, cap);
        if (!grown) {
            b->failed = true;
            return;
        }
        b->data = grown;
        b->cap = cap;
    }
    memcpy(b->data + b->len, s, n);
    b->len += n;
    b->data[b->len] = '\0';
}

/* ---- strings ------------------------------------------------------------------------------ */

/* Decodes one UTF-8 sequence at s[0..n) strictly (no overlong forms, no surrogates, nothing
 * above U+10FFFF). Returns its length and the code point, or 0 when the bytes are invalid. */
static size_t utf8_decode(const unsigned char *s, size_t n, uint32_t *cp)
{
    unsigned char c = s[0];
    size_t len;
    uint32_t v, min;
    if (c < 0x80) {
        *cp = c;
        return 1;
    } else if ((c & 0xE0) == 0xC0) {
        len = 2, v = c & 0x1F, min = 0x80;
    } else if ((c & 0xF0) == 0xE0) {
        len = 3, v = c & 0x0F, min = 0x800;
    } else if ((c & 0xF8) == 0xF0) {
        len = 4, v = c & 0x07, min = 0x10000;
    } else {
        return 0;
    }
    if (len > n)
        return 0;
    for (size_t i = 1; i < len; i++) {
        if ((s[i] & 0xC0) != 0x80)
            return 0;
        v = (v << 6) | (s[i] & 0x3F);
    }
    if (v < min || v > 0x10FFFF || (v >= 0xD800 && v <= 0xDFFF))
        return 0;
    *cp = v;
    return len;
}

bool jcs_utf8_valid(const char *s, size_t n)
{
    const unsigned char *u = (const unsigned char *)s;
    for (size_t i = 0; i < n;) {
        uint32_t cp;
        size_t step = utf8_decode(u + i, n - i, &cp);
        if (!step)
            return false;
        i += step;
    }
    return true;
}

/* Appends s as a JSON string with the escapes ECMAScript's JSON.stringify makes and no more:
 * everything from U+0020 up (DEL and U+2028 included) is copied as UTF-8. */
static bool append_string(struct jcs_buf *b, const char *s, size_t n)
{
    if (!jcs_utf8_valid(s, n))
        return false;
    buf_append(b, "\"", 1);
    size_t run = 0; /* start of the pending stretch of bytes copied as they are */
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        const char *esc = NULL;
        char hex[8];
        switch (c) {
        case '"':
            esc = "\\\"";
            break;
        case '\\':
            esc = "\\\\";
            break;
        case '\b':
            esc = "\\b";
            break;
        case '\f':
            esc = "\\f";
            break;
        case '\n':
            esc = "\\n";
            break;
        case '\r':
            esc = "\\r";
            break;
        case '\t':
            esc = "\\t";
            break;
        default:
            if (c < 0x20) {
                snprintf(hex, sizeof hex, "\\u%04x", c);
                esc = hex;
            }
        }
        if (esc) {
            buf_append(b, s + run, i - run);
            buf_append(b, esc, strlen(esc));
            run = i + 1;
        }
    }
    buf_append(b, s + run, n - run);
    buf_append(b, "\"", 1);
    return true;
}

/* ---- member order ------------------------------------------------------------------------- */

struct jcs_member {
    const char *key;
    size_t key_len;
    const json_t *value;
};

/* First UTF-16 code unit of a code point, then the second (0 when there is none). */
static uint32_t utf16_unit(uint32_t cp, int which)
{
    if (cp < 0x10000)
        return which == 0 ? cp : 0;
    cp -= 0x10000;
    return which == 0 ? 0xD800 + (cp >> 10) : 0xDC00 + (cp & 0x3FF);
}

/* Orders keys as JavaScript compares strings: by UTF-16 code units. UTF-8 byte order equals
 * code point order, which differs exactly when an astral character (a surrogate pair, units
 * D800–DBFF) meets a BMP character in E000–FFFF. Keys were checked as valid UTF-8 before. */
static int member_cmp(const void *pa, const void *pb)
{
    const struct jcs_member *a = pa, *b = pb;
    const unsigned char *x = (const unsigned char *)a->key, *y = (const unsigned char *)b->key;
    size_t i = 0, j = 0;
    while (i < a->key_len && j < b->key_len) {
        uint32_t cx, cy;
        i += utf8_decode(x + i, a->key_len - i, &cx);
        j += utf8_decode(y + j, b->key_len - j, &cy);
        if (cx == cy)
            continue;
        for (int w = 0; w < 2; w++) {
            uint32_t ux = utf16_unit(cx, w), uy = utf16_unit(cy, w);
            if (ux != uy)
                return ux < uy ? -1 : 1;
        }
    }
    if (i < a->key_len)
        return 1;
    if (j < b->key_len)
        return -1;
    return 0;
}

/* ---- values ------------------------------------------------------------------------------- */

static bool append_value(struct jcs_buf *b, const json_t *v);

static bool append_object(struct jcs_buf *b, const json_t *v)
{
    size_t n = json_object_size(v);
    struct jcs_member *members = n ? calloc(n, sizeof *members) : NULL;
    if (n && !members) {
        b->failed = true;
        return false;
    }
    size_t count = 0;
    /* jansson has no const iterator; iterating does not modify the object. */
    json_t *obj = (json_t *)v;
    for (void *it = json_object_iter(obj); it && count < n; it = json_object_iter_next(obj, it)) {
        members[count].key = json_object_iter_key(it);
        members[count].key_len = json_object_iter_key_len(it);
        members[count].value = json_object_iter_value(it);
        if (!jcs_utf8_valid(members[count].key, members[count].key_len)) {
            free(members);
            return false;
        }
        count++;
    }
    if (count > 1 && !b->document_order)
        qsort(members, count, sizeof *members, member_cmp);
    bool ok = true;
    buf_append(b, "{", 1);
    for (size_t i = 0; i < count && ok; i++) {
        if (i)
            buf_append(b, ",", 1);
        ok = append_string(b, members[i].key, members[i].key_len);
        buf_append(b, ":", 1);
        ok = ok && append_value(b, members[i].value);
    }
    buf_append(b, "}", 1);
    free(members);
    return ok;
}

static bool append_value(struct jcs_buf *b, const json_t *v)
{
    char num[JCS_NUMBER_MAX];
    int n;
    switch (json_typeof(v)) {
    case JSON_NULL:
        buf_append(b, "null", 4);
        return true;
    case JSON_TRUE:
        buf_append(b, "true", 4);
        return true;
    case JSON_FALSE:
        buf_append(b, "false", 5);
        return true;
    case JSON_INTEGER: {
        json_int_t i = json_integer_value(v);
        if (i >= -JCS_EXACT_INT_LIMIT && i <= JCS_EXACT_INT_LIMIT)
            n = snprintf(num, sizeof num, "%" JSON_INTEGER_FORMAT, i);
        else
            n = jcs_format_double((double)i, num);
        buf_append(b, num, (size_t)n);
        return true;
    }
    case JSON_REAL:
        n = jcs_format_double(json_real_value(v), num);
        if (n < 0)
            return false;
        buf_append(b, num, (size_t)n);
        return true;
    case JSON_STRING:
        return append_string(b, json_string_value(v), json_string_length(v));
    case JSON_ARRAY: {
        if (b->depth >= JSON_NEST_MAX)
            return false;
        b->depth++;
        buf_append(b, "[", 1);
        for (size_t i = 0; i < json_array_size(v); i++) {
            if (i)
                buf_append(b, ",", 1);
            if (!append_value(b, json_array_get(v, i)))
                return false;
        }
        buf_append(b, "]", 1);
        b->depth--;
        return true;
    }
    case JSON_OBJECT: {
        if (b->depth >= JSON_NEST_MAX)
            return false;
        b->depth++;
        bool ok = append_object(b, v);
        b->depth--;
        return ok;
    }
    }
    return false;
}

static char *serialize(const json_t *v, size_t *len, bool document_order)
{
    if (!v)
        return NULL;
    struct jcs_buf b = {.document_order = document_order};
    bool ok = append_value(&b, v);
    if (ok && !b.failed && !b.data) /* cannot happen: every value writes at least one byte */
        ok = false;
    if (!ok || b.failed) {
        free(b.data);
        return NULL;
    }
    if (len)
        *len = b.len;
    return b.data;
}

char *jcs_serialize(const json_t *v, size_t *len)
{
    return serialize(v, len, false);
}

char *jcs_serialize_sha256(const json_t *v, size_t *len, char hex[JCS_SHA256_HEX])
{
    size_t n = 0;
    char *bytes = jcs_serialize(v, &n);
    if (!bytes)
        return NULL;
    unsigned char digest[crypto_hash_sha256_BYTES];
    crypto_hash_sha256(digest, (const unsigned char *)bytes, n);
    sodium_bin2hex(hex, JCS_SHA256_HEX, digest, sizeof digest);
    if (len)
        *len = n;
    return bytes;
}

int jcs_sha256_hex(const json_t *v, char hex[JCS_SHA256_HEX])
{
    char *bytes = jcs_serialize_sha256(v, NULL, hex);
    free(bytes);
    return bytes ? 0 : -1;
}

char *jcs_dump(const json_t *v, size_t *len)
{
    return serialize(v, len, true);
}

/* ---- parsing ------------------------------------------------------------------------------ */

static json_t *jcs_parse_text(const char *buf, size_t len, struct problems *errs);

/* jansson 2.14's parser refuses U+0000 in a member name ("NUL byte in object key not
 * supported", whatever the flags), though its objects hold such names by length
 * (json_object_setn, json_object_iter_key_len). So when a member name holds the escape \u0000
 * (a raw U+0000 is not JSON), the text is parsed with each such escape — in member names only —
 * replaced by the escape of a private-use character the text does not contain (same length, so
 * error positions hold), and the names are restored afterwards. */

static int hex_digit(char c)
{
    return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
}

/* Copies buf with every \u0000 inside a member name replaced by "\u" marker_hex; returns the
 * number replaced, or 0 when none (out untouched). out has len bytes. */
static size_t names_with_nul(const char *buf, size_t len, const char marker_hex[4], char *out)
{
    size_t replaced = 0;
    size_t i = 0;
    while (i < len) {
        if (buf[i] != '"') {
            i++;
            continue;
        }
        size_t start = ++i, nuls = 0;
        while (i < len && buf[i] != '"') {
            if (buf[i] == '\\' && i + 1 < len) {
                if (buf[i + 1] == 'u' && i + 5 < len && memcmp(buf + i + 2, "0000", 4) == 0)
                    nuls++;
                i += buf[i + 1] == 'u' ? 6 : 2;
            } else {
                i++;
            }
        }
        size_t end = i < len ? i : len; /* the closing quote */
        i = end + 1;
        size_t j = i;
        while (j < len && (buf[j] == ' ' || buf[j] == '\t' || buf[j] == '\n' || buf[j] == '\r'))
            j++;
        if (!nuls || j >= len || buf[j] != ':')
            continue;
        for (size_t k = start; k + 5 < end + 1 && k < end;) {
            if (buf[k] == '\\' && buf[k + 1] == 'u' && memcmp(buf + k + 2, "0000", 4) == 0) {
                if (out)
                    memcpy(out + k + 2, marker_hex, 4);
                replaced++;
                k += 6;
            } else {
                k += buf[k] == '\\' ? (buf[k + 1] == 'u' ? 6 : 2) : 1;
            }
        }
    }
    return replaced;
}

/* Whether the text holds code point cp (E000..EFFF) raw or as an escape, in any case. */
static bool text_holds(const char *buf, size_t len, uint32_t cp)
{
    char raw[3] = {(char)(0xE0 | (cp >> 12)), (char)(0x80 | ((cp >> 6) & 0x3F)),
                   (char)(0x80 | (cp & 0x3F))};
    for (size_t i = 0; i + 2 < len; i++)
        if (memcmp(buf + i, raw, 3) == 0)
            return true;
    for (size_t i = 0; i + 5 < len; i++) {
        if (buf[i] != '\\' || buf[i + 1] != 'u')
            continue;
        if (!hex_digit(buf[i + 2]) || !hex_digit(buf[i + 3]) || !hex_digit(buf[i + 4]) ||
            !hex_digit(buf[i + 5]))
            continue;
        char hex[5] = {buf[i + 2], buf[i + 3], buf[i + 4], buf[i + 5], 0};
        if ((uint32_t)strtoul(hex, NULL, 16) == cp)
            return true;
    }
    return false;
}

/* Puts U+0000 back where the marker (3 UTF-8 bytes) stands in member names, recursively. */
static bool restore_names(json_t *v, const char marker[3])
{
    if (json_is_array(v)) {
        for (size_t i = 0; i < json_array_size(v); i++)
            if (!restore_names(json_array_get(v, i), marker))
                return false;
        return true;
    }
    if (!json_is_object(v))
        return true;
    json_t *renamed = json_object();
    if (!renamed)
        return false;
    bool ok = true;
    for (void *it = json_object_iter(v); it && ok; it = json_object_iter_next(v, it)) {
        ok = restore_names(json_object_iter_value(it), marker);
        const char *key = json_object_iter_key(it);
        size_t key_len = json_object_iter_key_len(it);
        bool has = false;
        for (size_t i = 0; i + 2 < key_len && !has; i++)
            has = memcmp(key + i, marker, 3) == 0;
        if (!ok || !has)
            continue;
        /* Each 3-byte marker becomes one NUL byte. */
        char *name = malloc(key_len + 1);
        size_t n = 0;
        for (size_t i = 0; name && i < key_len;) {
            if (i + 2 < key_len && memcmp(key + i, marker, 3) == 0) {
                name[n++] = '\0';
                i += 3;
            } else {
                name[n++] = key[i++];
            }
        }
        ok = name && json_object_setn(renamed, name, n, json_object_iter_value(it)) == 0 &&
             json_object_set_new(renamed, key, json_null()) == 0; /* marks the old name */
        free(name);
    }
    /* Move: delete the old names (marked in `renamed` with null), add the new ones. */
    for (void *it = json_object_iter(renamed); it && ok; it = json_object_iter_next(renamed, it)) {
        const char *key = json_object_iter_key(it);
        size_t key_len = json_object_iter_key_len(it);
        if (json_is_null(json_object_iter_value(it)) && !memchr(key, '\0', key_len))
            json_object_deln(v, key, key_len);
    }
    for (void *it = json_object_iter(renamed); it && ok; it = json_object_iter_next(renamed, it)) {
        const char *key = json_object_iter_key(it);
        size_t key_len = json_object_iter_key_len(it);
        if (memchr(key, '\0', key_len))
            ok = json_object_setn(v, key, key_len, json_object_iter_value(it)) == 0;
    }
    json_decref(renamed);
    return ok;
}

json_t *jcs_parse(const char *buf, size_t len, struct problems *errs)
{
    char *copy = NULL;
    char marker[3] = {0};
    if (names_with_nul(buf, len, "0000", NULL)) {
        uint32_t cp = 0xE000;
        while (cp <= 0xEFFF && text_holds(buf, len, cp))
            cp++;
        copy = cp <= 0xEFFF ? malloc(len ? len : 1) : NULL;
        if (!copy) {
            if (errs)
                problems_add_line(errs, 1, 1, "", "out of memory");
            return NULL;
        }
        char hex[5];
        snprintf(hex, sizeof hex, "%04x", (unsigned)cp);
        memcpy(copy, buf, len);
        names_with_nul(buf, len, hex, copy);
        marker[0] = (char)(0xE0 | (cp >> 12));
        marker[1] = (char)(0x80 | ((cp >> 6) & 0x3F));
        marker[2] = (char)(0x80 | (cp & 0x3F));
        buf = copy;
    }
    json_t *v = jcs_parse_text(buf, len, errs);
    if (v && copy && !restore_names(v, marker)) {
        json_decref(v);
        v = NULL;
        if (errs)
            problems_add_line(errs, 1, 1, "", "out of memory");
    }
    free(copy);
    return v;
}

static json_t *jcs_parse_text(const char *buf, size_t len, struct problems *errs)
{
    json_error_t error;
    /* U+0000 is an I-JSON character like any other: RFC 8785 canonicalizes it (as \u0000).
     * Strings are handled with their lengths throughout, never as C strings. */
    const size_t flags = JSON_REJECT_DUPLICATES | JSON_DECODE_ANY | JSON_ALLOW_NUL;
    json_t *v = json_load_bounded(buf, len, flags, &error);
    if (!v && json_error_code(&error) == json_error_numeric_overflow) {
        /* An integer literal beyond long long: read every number as a double, which is what
         * RFC 8785 does; a real overflow (1e400) still fails below. */
        json_error_t again;
        v = json_load_bounded(buf, len, flags | JSON_DECODE_INT_AS_REAL, &again);
        if (!v)
            error = again;
    }
    if (!v && errs)
        problems_add_line(errs, error.line, error.column, "", "invalid JSON: %s", error.text);
    return v;
}

const char *jcs_text(const json_t *v)
{
    const char *s = json_string_value(v);
    return s && strlen(s) == json_string_length(v) ? s : NULL;
}
