#include "core/problems.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void problems_init(struct problems *p)
{
    memset(p, 0, sizeof *p);
}

void problems_free(struct problems *p)
{
    for (size_t i = 0; i < p->count; i++) {
        free(p->items[i].pointer);
        free(p->items[i].message);
    }
    free(p->items);
    memset(p, 0, sizeof *p);
}

static void problems_vadd(struct problems *p, long line, long column, const char *pointer,
                          const char *fmt, va_list ap) __attribute__((format(printf, 5, 0)));

static void problems_vadd(struct problems *p, long line, long column, const char *pointer,
                          const char *fmt, va_list ap)
{
    p->total++;
    if (p->count >= PROBLEMS_MAX_KEPT)
        return;
    if (p->count == p->cap) {
        size_t cap = p->cap ? p->cap * 2 : 8;
        struct problem *grown = realloc(p->items, cap * sizeof *grown);
        if (!grown)
            return; /* out of memory: the total still counts it */
        p->items = grown;
        p->cap = cap;
    }
    char *message = NULL;
    if (vasprintf(&message, fmt, ap) < 0)
        return;
    char *ptr = strdup(pointer ? pointer : "");
    if (!ptr) {
        free(message);
        return;
    }
    p->items[p->count++] =
        (struct problem){.pointer = ptr, .line = line, .column = column, .message = message};
}

void problems_add(struct problems *p, const char *pointer, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    problems_vadd(p, 0, 0, pointer, fmt, ap);
    va_end(ap);
}

void problems_add_line(struct problems *p, long line, long column, const char *pointer,
                       const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    problems_vadd(p, line, column, pointer, fmt, ap);
    va_end(ap);
}

void problems_prefix(struct problems *p, size_t from, const char *prefix)
{
    for (size_t i = from; i < p->count; i++) {
        char *prefixed = NULL;
        if (asprintf(&prefixed, "%s%s", prefix, p->items[i].pointer) >= 0) {
            free(p->items[i].pointer);
            p->items[i].pointer = prefixed;
        }
    }
}

void problems_default_line(struct problems *p, size_t from, long line)
{
    for (size_t i = from; i < p->count; i++)
        if (!p->items[i].line)
            p->items[i].line = line;
}

void problems_place_whole_input(struct problems *p, long line)
{
    for (size_t i = 0; i < p->count; i++)
        if (!p->items[i].line && !p->items[i].pointer[0])
            p->items[i].line = line;
}

const char *problems_pointer(char *buf, size_t size, const char *prefix, const char *token)
{
    size_t n = (size_t)snprintf(buf, size, "%s/", prefix ? prefix : "");
    for (const char *c = token; *c && n + 3 < size; c++) {
        if (*c == '~') {
            buf[n++] = '~';
            buf[n++] = '0';
        } else if (*c == '/') {
            buf[n++] = '~';
            buf[n++] = '1';
        } else {
            buf[n++] = *c;
        }
    }
    if (n < size)
        buf[n] = '\0';
    return buf;
}

const char *problems_pointer_index(char *buf, size_t size, const char *prefix, size_t index)
{
    snprintf(buf, size, "%s/%zu", prefix ? prefix : "", index);
    return buf;
}

int problems_has(const struct problems *p, const char *pointer)
{
    for (size_t i = 0; i < p->count; i++)
        if (strcmp(p->items[i].pointer, pointer) == 0)
            return 1;
    return 0;
}
