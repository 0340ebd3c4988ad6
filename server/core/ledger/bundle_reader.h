/* A push parser of an audit bundle's JSON text (docs/ledger-format.md) for bundles too large to
 * hold: the caller feeds the bytes as it reads them, in pieces of any size. The top-level
 * object's members other than "leaves" are collected, each value parsed strictly by jcs_parse
 * (core/jcs.h); "leaves", when it is an array, is never held: each element is handed to
 * a callback as soon as it ends — a string with its JSON escapes decoded, or NULL for an
 * element that is not a string. Memory: the other members, one leaf, and a few bytes of state.
 *
 * What it refuses is what jcs_parse refuses of the whole document: malformed JSON, a
 * duplicate member name at any depth, invalid UTF-8, lone surrogates, trailing bytes.
 *
 * `capledger verify` reads a bundle twice with it: first collecting the members and counting
 * the leaves (leaf callback NULL), then streaming the leaves through the checks (members not
 * collected), so that its checks run in the order core/ledger/bundle.h documents. Pure. */
#ifndef CAPLEDGER_CORE_LEDGER_BUNDLE_READER_H
#define CAPLEDGER_CORE_LEDGER_BUNDLE_READER_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

/* Called for leaf `index` (text NULL, len 0: not a string). Returns 0 to go on, anything else
 * to stop the reader (bundle_reader_feed then returns -1 and bundle_reader_stopped is true). */
typedef int (*bundle_leaf_fn)(void *ctx, size_t index, const char *text, size_t len);

struct bundle_reader;

/* leaf may be NULL (the leaves are only counted). With collect false the other members are
 * checked for syntax but not kept. max_leaf bounds one leaf's text, max_member one other
 * member's value (bytes); beyond either the reader fails. */
struct bundle_reader *bundle_reader_new(bundle_leaf_fn leaf, void *ctx, bool collect,
                                        size_t max_leaf, size_t max_member)
    __attribute__((warn_unused_result));
void bundle_reader_free(struct bundle_reader *r);

/* Returns 0, or -1 when the text is malformed (bundle_reader_error says where and why), a
 * limit is passed, memory runs out, or the leaf callback stopped it. */
int bundle_reader_feed(struct bundle_reader *r, const char *bytes, size_t len)
    __attribute__((warn_unused_result));
/* At the end of the input: 0 when a whole document was read, else -1 (error set). */
int bundle_reader_end(struct bundle_reader *r) __attribute__((warn_unused_result));

/* The top-level members other than the "leaves" array (borrowed; an empty object until
 * collected). "leaves" is among them only when it was not an array. */
const json_t *bundle_reader_members(const struct bundle_reader *r);
/* Whether the document had a "leaves" array, and how many elements it had (so far). */
bool bundle_reader_has_leaves(const struct bundle_reader *r);
size_t bundle_reader_leaves(const struct bundle_reader *r);
/* The error message ("" when none) and its 1-based line and column in the text. */
const char *bundle_reader_error(const struct bundle_reader *r, long *line, long *column);
/* Whether the leaf callback stopped the reader. */
bool bundle_reader_stopped(const struct bundle_reader *r);

#endif
