/* A list of validation problems, each naming the bad place in the input: a JSON Pointer
 * (RFC 6901) for JSON documents, or a line (and column) for text uploads. Every validator in
 * core appends here instead of stopping at the first fault, so one 422 can name them all.
 * The list owns its strings. */
#ifndef CAPLEDGER_CORE_PROBLEMS_H
#define CAPLEDGER_CORE_PROBLEMS_H

#include <stddef.h>

#define PROBLEMS_MAX_KEPT 1000 /* beyond this only the total is counted */

/* What an RFC 9457 problem's "type" starts with; a slug ("not-found") follows. */
#define PROBLEM_TYPE_BASE "https://capledger.dev/problems/"

/* How a caller names the columns of a tool's output printed without a header line, in each of
 * the three ways an upload can be sent: one text, so the API, the UI and the CLI agree. */
#define PROBLEMS_FIELDS_HINT                                                                        \
    "?fields=A,B,… in the API, the \"Columns\" field of the upload form, --param fields=A,B,… " \
    "of capledger import"

struct problem {
    char *pointer; /* JSON Pointer, e.g. "/options/2/offer/price_per_hour"; "" for the whole */
    long line;     /* 1-based line of a text upload, 0 when not applicable */
    long column;   /* 1-based column (field index for CSV), 0 when not applicable */
    char *message;
};

struct problems {
    struct problem *items;
    size_t count; /* kept items */
    size_t total; /* all problems seen, kept or not */
    size_t cap;
};

void problems_init(struct problems *p);
void problems_free(struct problems *p);
/* Appends a problem with a printf-style message. pointer may be NULL (treated as ""). */
void problems_add(struct problems *p, const char *pointer, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
void problems_add_line(struct problems *p, long line, long column, const char *pointer,
                       const char *fmt, ...) __attribute__((format(printf, 5, 6)));
/* Prepends prefix to the pointer of every problem kept from index `from` on (a validator of a
 * part of the document named its pointers from that part). */
void problems_prefix(struct problems *p, size_t from, const char *prefix);
/* Gives `line` to every problem kept from index `from` on that has none. */
void problems_default_line(struct problems *p, size_t from, long line);
/* Gives `line` to every problem of the whole input (neither a line nor a pointer). */
void problems_place_whole_input(struct problems *p, long line);

/* Builds "prefix/escaped-token" with RFC 6901 escaping (~ → ~0, / → ~1) into buf. */
/* 1 when a kept problem names exactly this pointer: that member already has a fault. */
int problems_has(const struct problems *p, const char *pointer);
const char *problems_pointer(char *buf, size_t size, const char *prefix, const char *token);
const char *problems_pointer_index(char *buf, size_t size, const char *prefix, size_t index);

#endif
