/* The evidence formats each upload kind takes by name (its ?format= values): one declaration
 * per kind, read by the readers (their enums and name lookups), the upload handlers' ?format=
 * check, the fuzzers (a mode byte modulo the count), the CLI (`capledger import`, and
 * `capledger formats`, which prints these tables). Tests tie them to the copies that cannot
 * read C: api/openapi.yaml's `format` enums and the UI's upload form
 * (tests/integration/formats.test.mjs), and the sniffer's names (tests/unit/test_sniff.c).
 *
 * A list is X(ID, "name"), in the order of the reader's enum (which starts at 1 after its
 * UNKNOWN): the enum is built from the list, so the two cannot drift. A new format of an
 * existing kind is one line here plus its reader (docs/ARCHITECTURE.md, "A new input format").
 * The media types a kind takes (JSON runs, a price sheet as CSV) are its upload kind's types
 * (struct upload_kind in its handler), not ?format= values. */
#ifndef CAPLEDGER_CORE_FORMATS_FORMATS_H
#define CAPLEDGER_CORE_FORMATS_FORMATS_H

#include <stddef.h>

/* POST /runs with a text body: the default first. */
#define FORMATS_RUNS(X) X(RUNS_SACCT, "sacct") X(RUNS_OPENB, "openb")
/* POST /benchmarks/{id}/telemetry. */
#define FORMATS_TELEMETRY(X)                                                                       \
    X(TELEMETRY_NVIDIA_SMI, "nvidia-smi") X(TELEMETRY_DMON, "dmon") X(TELEMETRY_DCGM, "dcgm")
/* POST /benchmarks/import. */
#define FORMATS_LOADTEST(X)                                                                        \
    X(LOADTEST_VLLM, "vllm") X(LOADTEST_GENAI_PERF, "genai-perf") X(LOADTEST_MLPERF, "mlperf")
/* POST /offers/import: price catalogs. */
#define FORMATS_OFFERS(X) X(OFFERS_SKYPILOT, "skypilot")

/* The enum members of a list: `enum e { E_UNKNOWN = 0, FORMATS_X(FORMAT_ENUM) E_END };`. */
#define FORMAT_ENUM(id, name) id,

enum runs_format { RUNS_UNKNOWN = 0, FORMATS_RUNS(FORMAT_ENUM) RUNS_FORMAT_END };
enum offers_format { OFFERS_UNKNOWN = 0, FORMATS_OFFERS(FORMAT_ENUM) OFFERS_FORMAT_END };

/* Each list's names, NULL-ended, in enum order (names[id - 1]): what res_query's RQ_ENUM
 * takes. */
extern const char *const RUNS_FORMAT_NAMES[];
extern const char *const TELEMETRY_FORMAT_NAMES[];
extern const char *const LOADTEST_FORMAT_NAMES[];
extern const char *const OFFERS_FORMAT_NAMES[];

/* One upload kind's formats. */
struct format_kind {
    const char *kind;         /* the upload record's kind: runs, telemetry, loadtest, offers */
    const char *const *names; /* its ?format= values */
};
/* Every kind, ended by {NULL, NULL}. */
extern const struct format_kind FORMAT_KINDS[];

/* The position of name in names from 1 (the reader's enum value), or 0 (UNKNOWN). */
int format_find(const char *const *names, const char *name);
/* names joined by ", " into buf (whole names only, as many as fit); returns buf. */
const char *format_join(const char *const *names, char *buf, size_t size);

#endif
