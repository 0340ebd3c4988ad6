/* The bundle's JSON read a byte at a time: see bundle_reader.h. The top level and the leaves
 * array are walked here; every other value is only delimited (strings, escapes and nesting
 * tracked, no recursion) and its bytes handed to jcs_parse, which does the strict parsing. */
#include "core/ledger/bundle_reader.h"

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/validate.h"
#include "core/jcs.h"
#include "core/problems.h"

enum state {
    S_TOP,          /* before the top-level '{' */
    S_FIRST_KEY,    /* after '{': a name or '}' */
    S_KEY,          /* after ',': a name */
    S_NAME,         /* inside a member name */
    S_COLON,        /* after a name */
    S_VALUE,        /* after ':' */
    S_MEMBER,       /* inside another member's value */
    S_AFTER_MEMBER, /* ',' or '}' */
    S_LEAVES_FIRST, /* after "leaves": [ */
    S_LEAVES_NEXT,  /* after a ',' in the leaves */
    S_LEAF,         /* inside a leaf string */
    S_LEAF_OTHER,   /* inside a leaf that is not a string */
    S_AFTER_LEAF,   /* ',' or ']' */
    S_DONE,         /* after the top-level '}' */
    S_FAILED,
};

/* A JSON string being decoded. */
enum str_state { STR_CHAR, STR_ESC, STR_HEX, STR_LOW_ESC, STR_LOW_U, STR_LOW_HEX };

/* A value being delimited (S_MEMBER, S_LEAF_OTHER). */
struct scan {
    size_t depth;
    bool in_string, escaped, scalar, started;
};

struct bundle_reader {
    bundle_leaf_fn leaf;
    void *ctx;
    bool collect, has_leaves, stopped;
    size_t max_leaf, max_member;
    enum state state;
    json_t *members, *names;
    size_t leaves;
    /* the string being decoded (a name or a leaf) */
    char *str;
    size_t str_len, str_cap, str_max;
    enum str_state ss;
    unsigned hex_digits;
    uint32_t hex, high;
    /* the value being delimited, and its bytes */
    struct scan scan;
    char *val;
    size_t val_len, val_cap;
    char name[256]; /* the current member's name, for messages (cut) */
    bool name_is_leaves;
    long line, column;
    char error[256];
};

static int failf(struct bundle_reader *r, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
static int failf(struct bundle_reader *r, const char *fmt, ...)
{
    if (r->state != S_FAILED) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(r->error, sizeof r->error, fmt, ap);
        va_end(ap);
        r->state = S_FAILED;
    }
    return -1;
}

struct bundle_reader *bundle_reader_new(bundle_leaf_fn leaf, void *ctx, bool collect,
                                        size_t max_leaf, size_t max_member)
{
    struct bundle_reader *r = calloc(1, sizeof *r);
    if (!r)
        return NULL;
    r->leaf = leaf;
    r->ctx = ctx;
    r->collect = collect;
    r->max_leaf = max_leaf;
    r->max_member = max_member;
    r->members = json_object();
    r->names = json_object();
    r->line = 1;
    if (!r->members || !r->names) {
        bundle_reader_free(r);
        return NULL;
    }
    return r;
}

void bundle_reader_free(struct bundle_reader *r)
{
    if (!r)
        return;
    json_decref(r->members);
    json_decref(r->names);
    free(r->str);
    free(r->val);
    free(r);
}

static bool is_ws(char c)
{
    return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

static int grow(char **buf, size_t *cap, size_t need, size_t max)
{
    if (need <= *cap)
        return 0;
    if (need > max)
        return -1;
    size_t n = *cap ? *cap : 256;
    while (n < need)
        n = n > max / 2 ? max : n * 2;
    char *b = realloc(*buf, n);
    if (!b)
        return -1;
    *buf = b;
    *cap = n;
    return 0;
}

static int str_put(struct bundle_reader *r, const char *bytes, size_t n)
{
    if (grow(&r->str, &r->str_cap, r->str_len + n, r->str_max) != 0)
        return failf(r,
                     r->str_len + n > r->str_max ? "a string longer than %zu bytes"
                                                 : "out of memory (a string of %zu bytes)",
                     r->str_max);
    memcpy(r->str + r->str_len, bytes, n);
    r->str_len += n;
    return 0;
}

static int put_code_point(struct bundle_reader *r, uint32_t cp)
{
    char u[4];
    size_t n;
    if (cp < 0x80) {
        u[0] = (char)cp;
        n = 1;
    } else if (cp < 0x800) {
        u[0] = (char)(0xc0 | (cp >> 6));
        u[1] = (char)(0x80 | (cp & 0x3f));
        n = 2;
    } else if (cp < 0x10000) {
        u[0] = (char)(0xe0 | (cp >> 12));
        u[1] = (char)(0x80 | ((cp >> 6) & 0x3f));
        u[2] = (char)(0x80 | (cp & 0x3f));
        n = 3;
    } else {
        u[0] = (char)(0xf0 | (cp >> 18));
        u[1] = (char)(0x80 | ((cp >> 12) & 0x3f));
        u[2] = (char)(0x80 | ((cp >> 6) & 0x3f));
        u[3] = (char)(0x80 | (cp & 0x3f));
        n = 4;
    }
    return str_put(r, u, n);
}

/* One byte of a string after its opening quote: 1 when c closed it, 0 to go on, -1 failed. */
static int string_byte(struct bundle_reader *r, char c)
{
    switch (r->ss) {
    case STR_CHAR:
        if (c == '"')
            return jcs_utf8_valid(r->str, r->str_len) ? 1 : failf(r, "invalid UTF-8 in a string");
        if (c == '\\') {
            r->ss = STR_ESC;
            return 0;
        }
        if ((unsigned char)c < 0x20)
            return failf(r, "a control character in a string");
        return str_put(r, &c, 1);
    case STR_ESC: {
        static const char from[] = "\"\\/bfnrt", to[] = "\"\\/\b\f\n\r\t";
        const char *at = c ? strchr(from, c) : NULL;
        r->ss = STR_CHAR;
        if (at)
            return str_put(r, &to[at - from], 1);
        if (c != 'u')
            return failf(r, "invalid escape \\%c", c);
        r->ss = STR_HEX;
        r->hex = 0;
        r->hex_digits = 0;
        return 0;
    }
    case STR_HEX:
    case STR_LOW_HEX: {
        int v = hex_digit_value(c);
        if (v < 0)
            return failf(r, "invalid \\u escape");
        r->hex = r->hex * 16 + (uint32_t)v;
        if (++r->hex_digits < 4)
            return 0;
        if (r->ss == STR_LOW_HEX) {
            if (r->hex < 0xdc00 || r->hex > 0xdfff)
                return failf(r, "a lone surrogate escape");
            r->ss = STR_CHAR;
            return put_code_point(r, 0x10000 + ((r->high - 0xd800) << 10) + (r->hex - 0xdc00));
        }
        if (r->hex >= 0xdc00 && r->hex <= 0xdfff)
            return failf(r, "a lone surrogate escape");
        if (r->hex >= 0xd800 && r->hex <= 0xdbff) {
            r->high = r->hex;
            r->ss = STR_LOW_ESC;
            return 0;
        }
        r->ss = STR_CHAR;
        return put_code_point(r, r->hex);
    }
    case STR_LOW_ESC:
        if (c != '\\')
            return failf(r, "a lone surrogate escape");
        r->ss = STR_LOW_U;
        return 0;
    case STR_LOW_U:
        if (c != 'u')
            return failf(r, "a lone surrogate escape");
        r->ss = STR_LOW_HEX;
        r->hex = 0;
        r->hex_digits = 0;
        return 0;
    }
    return failf(r, "bad string state");
}

static void string_begin(struct bundle_reader *r, size_t max)
{
    r->str_len = 0;
    r->str_max = max;
    r->ss = STR_CHAR;
}

/* Starts delimiting a value whose first byte is c. */
static void scan_begin(struct bundle_reader *r)
{
    memset(&r->scan, 0, sizeof r->scan);
    r->val_len = 0;
}

/* One byte of a value being delimited: 1 when the value ended with this byte (included), 2
 * when it ended just before it (a scalar's delimiter, not included), 0 to go on, -1 failed. */
static int scan_byte(struct bundle_reader *r, char c, bool keep)
{
    struct scan *s = &r->scan;
    if (!s->started) {
        s->started = true;
        if (c == '"')
            s->in_string = true;
        else if (c == '[' || c == '{')
            s->depth = 1;
        else
            s->scalar = true;
    } else if (s->scalar) {
        if (is_ws(c) || c == ',' || c == '}' || c == ']')
            return 2;
    } else if (s->in_string) {
        if (s->escaped)
            s->escaped = false;
        else if (c == '\\')
            s->escaped = true;
        else if (c == '"')
            s->in_string = false;
    } else if (c == '"') {
        s->in_string = true;
    } else if (c == '[' || c == '{') {
        s->depth++;
    } else if (c == ']' || c == '}') {
        s->depth--;
    }
    if (keep) {
        if (grow(&r->val, &r->val_cap, r->val_len + 1, r->max_member) != 0)
            return failf(r, "member \"%s\": a value longer than %zu bytes", r->name, r->max_member);
        r->val[r->val_len++] = c;
    }
    if (!s->scalar && !s->in_string && s->depth == 0)
        return 1;
    return 0;
}

/* The delimited value, strictly parsed: a new reference, or NULL after failing. */
static json_t *scan_parse(struct bundle_reader *r)
{
    struct problems errs;
    problems_init(&errs);
    json_t *v = jcs_parse(r->val, r->val_len, &errs);
    if (!v)
        failf(r, "member \"%s\": %s", r->name,
              errs.count ? errs.items[0].message : "out of memory");
    problems_free(&errs);
    return v;
}

/* The end of another member's value. */
static int member_end(struct bundle_reader *r)
{
    r->state = S_AFTER_MEMBER;
    if (!r->collect)
        return 0;
    json_t *v = scan_parse(r);
    if (!v)
        return -1;
    if (json_object_setn_new(r->members, r->str, r->str_len, v) != 0)
        return failf(r, "out of memory");
    return 0;
}

/* A leaf ended: text NULL for an element that is not a string. */
static int leaf_end(struct bundle_reader *r, const char *text, size_t len)
{
    size_t index = r->leaves++;
    r->state = S_AFTER_LEAF;
    if (r->leaf && r->leaf(r->ctx, index, text, len) != 0) {
        r->stopped = true;
        return failf(r, "stopped at leaf %zu", index);
    }
    return 0;
}

/* The member name just read (in r->str): refuses a second member of that name. */
static int name_end(struct bundle_reader *r)
{
    snprintf(r->name, sizeof r->name, "%.*s", (int)(r->str_len < 200 ? r->str_len : 200), r->str);
    if (json_object_getn(r->names, r->str, r->str_len))
        return failf(r, "duplicate object key \"%s\"", r->name);
    if (json_object_setn_new(r->names, r->str, r->str_len, json_true()) != 0)
        return failf(r, "out of memory");
    r->name_is_leaves = r->str_len == 6 && memcmp(r->str, "leaves", 6) == 0;
    r->state = S_COLON;
    return 0;
}

static int byte(struct bundle_reader *r, char c)
{
    int rc;
    switch (r->state) {
    case S_TOP:
        if (is_ws(c))
            return 0;
        if (c != '{')
            return failf(r, "a bundle is a JSON object");
        r->state = S_FIRST_KEY;
        return 0;
    case S_FIRST_KEY:
    case S_KEY:
        if (is_ws(c))
            return 0;
        if (c == '}' && r->state == S_FIRST_KEY) {
            r->state = S_DONE;
            return 0;
        }
        if (c != '"')
            return failf(r, "expected a member name");
        string_begin(r, r->max_member);
        r->state = S_NAME;
        return 0;
    case S_NAME:
        rc = string_byte(r, c);
        return rc == 1 ? name_end(r) : rc;
    case S_COLON:
        if (is_ws(c))
            return 0;
        if (c != ':')
            return failf(r, "expected ':' after member \"%s\"", r->name);
        r->state = S_VALUE;
        return 0;
    case S_VALUE:
        if (is_ws(c))
            return 0;
        if (r->name_is_leaves && c == '[') {
            r->has_leaves = true;
            r->state = S_LEAVES_FIRST;
            return 0;
        }
        scan_begin(r);
        r->state = S_MEMBER;
        __attribute__((fallthrough)); /* c is the value's first byte */
    case S_MEMBER:
        rc = scan_byte(r, c, r->collect);
        if (rc == 1)
            return member_end(r);
        if (rc == 2)
            return member_end(r) != 0 ? -1 : byte(r, c);
        return rc;
    case S_AFTER_MEMBER:
        if (is_ws(c))
            return 0;
        if (c == ',') {
            r->state = S_KEY;
            return 0;
        }
        if (c == '}') {
            r->state = S_DONE;
            return 0;
        }
        return failf(r, "expected ',' or '}' after member \"%s\"", r->name);
    case S_LEAVES_FIRST:
    case S_LEAVES_NEXT:
        if (is_ws(c))
            return 0;
        if (c == ']' && r->state == S_LEAVES_FIRST) {
            r->state = S_AFTER_MEMBER;
            return 0;
        }
        if (c == ']')
            return failf(r, "a ',' before ']' in leaves");
        if (c == '"') {
            string_begin(r, r->max_leaf);
            r->state = S_LEAF;
            return 0;
        }
        scan_begin(r);
        r->state = S_LEAF_OTHER;
        __attribute__((fallthrough));
    case S_LEAF_OTHER:
        rc = scan_byte(r, c, true);
        if (rc == 1 || rc == 2) {
            json_t *v = scan_parse(r); /* malformed JSON fails here, as in a whole parse */
            if (!v)
                return -1;
            json_decref(v);
            if (leaf_end(r, NULL, 0) != 0)
                return -1;
            return rc == 2 ? byte(r, c) : 0;
        }
        return rc;
    case S_LEAF:
        rc = string_byte(r, c);
        return rc == 1 ? leaf_end(r, r->str, r->str_len) : rc;
    case S_AFTER_LEAF:
        if (is_ws(c))
            return 0;
        if (c == ',') {
            r->state = S_LEAVES_NEXT;
            return 0;
        }
        if (c == ']') {
            r->state = S_AFTER_MEMBER;
            return 0;
        }
        return failf(r, "expected ',' or ']' after leaf %zu", r->leaves - 1);
    case S_DONE:
        if (is_ws(c))
            return 0;
        return failf(r, "bytes after the bundle's object");
    case S_FAILED:
        return -1;
    }
    return failf(r, "bad state");
}

int bundle_reader_feed(struct bundle_reader *r, const char *bytes, size_t len)
{
    for (size_t i = 0; i < len; i++) {
        if (r->state == S_FAILED || byte(r, bytes[i]) != 0)
            return -1;
        if (bytes[i] == '\n') {
            r->line++;
            r->column = 0;
        } else {
            r->column++;
        }
    }
    return r->state == S_FAILED ? -1 : 0;
}

int bundle_reader_end(struct bundle_reader *r)
{
    if (r->state == S_FAILED)
        return -1;
    if (r->state != S_DONE)
        return failf(r, "the bundle ends before its object does");
    return 0;
}

const json_t *bundle_reader_members(const struct bundle_reader *r)
{
    return r->members;
}

bool bundle_reader_has_leaves(const struct bundle_reader *r)
{
    return r->has_leaves;
}

size_t bundle_reader_leaves(const struct bundle_reader *r)
{
    return r->leaves;
}

const char *bundle_reader_error(const struct bundle_reader *r, long *line, long *column)
{
    if (line)
        *line = r->line;
    if (column)
        *column = r->column + 1;
    return r->error;
}

bool bundle_reader_stopped(const struct bundle_reader *r)
{
    return r->stopped;
}
