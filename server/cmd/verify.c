/* capledger verify BUNDLE.json --key FILE [--approvers FILE] [--previous-checkpoint FILE]
 * [--recompute] — the auditor's offline check of an audit bundle (core/ledger/bundle.c does
 * the checking; this reads the files). The trust anchor is the verifier key the auditor holds
 * (--key, or CAPLEDGER_VERIFIER_KEY): without one, nothing can be called verified.
 *
 * The bundle is streamed, never held (core/ledger/bundle_reader.h): a first pass over the file
 * collects its members other than the leaves and counts the leaves, a second feeds each leaf
 * to the checks as it is read. Standard input ("-") is copied to a temporary file first. */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cmd/cmd.h"
#include "cmd/config.h"
#include "cmd/files.h"
#include "cmd/termtext.h"
#include "core/ledger/bundle.h"
#include "core/ledger/bundle_reader.h"
#include "core/jcs.h"
#include "core/ledger/note.h"
#include "core/ledger/witness.h"

#define MEMBER_MAX_BYTES (1u << 30) /* one member other than the leaves (the comparisons) */
#define LEAF_MAX_BYTES (64u << 20)  /* one leaf's base64 text */
#define READ_CHUNK (1u << 16)
#define CHECKPOINT_MAX_BYTES (1u << 16)
#define KEY_FILE_MAX_BYTES (1u << 12)
#define APPROVERS_MAX_BYTES (1u << 20)
#define APPROVERS_MAX 10000
#define RECOMPUTE_REL_TOL 1e-9 /* docs/ledger-format.md */
#define WITNESSES_MAX 32

static int usage(void)
{
    fprintf(stderr, "usage: capledger verify BUNDLE.json --key FILE [--approvers FILE] "
                    "[--witness VKEY]… [--quorum N] [--previous-checkpoint FILE] [--recompute]\n");
    return 2;
}

/* A quorum counts distinct witnesses: the same witness key given twice (under any name) would
 * let one cosignature count twice. Returns 0, or prints why and returns 2. */
static int witnesses_distinct(const char *const *witnesses, size_t n, long quorum)
{
    for (size_t i = 0; i < n; i++) {
        struct witness_key a;
        if (witness_key_parse(witnesses[i], &a) != 0)
            continue; /* named by the verification itself */
        for (size_t j = 0; j < i; j++) {
            struct witness_key b;
            if (witness_key_parse(witnesses[j], &b) == 0 &&
                memcmp(a.public_key, b.public_key, sizeof a.public_key) == 0) {
                fprintf(stderr,
                        "capledger verify: NOT verified: --witness %zu and --witness %zu are the "
                        "same witness key (%s): a quorum counts distinct witnesses, so give each "
                        "witness once\n",
                        j + 1, i + 1, a.name);
                return 2;
            }
        }
    }
    if (quorum > (long)n) {
        fprintf(stderr,
                "capledger verify: NOT verified: --quorum %ld asks for more cosignatures than the "
                "%zu --witness key%s given: give at least %ld witness keys\n",
                quorum, n, n == 1 ? "" : "s", quorum);
        return 2;
    }
    return 0;
}

static int no_key(void)
{
    fprintf(stderr,
            "capledger verify: NOT verified: no verifier key. Give --key FILE (the text GET "
            "/api/v1/log/key answers, compared once with the copy your organisation published) "
            "or set CAPLEDGER_VERIFIER_KEY. The bundle's own verifier_key proves nothing: whoever "
            "made the bundle chose it.\n");
    return 2;
}

/* --quorum N: a count from 0 up. */
static int quorum_arg(const char *text, long *out)
{
    char *end = NULL;
    long n = strtol(text, &end, 10);
    if (!*text || *end || n < 0)
        return 0;
    *out = n;
    return 1;
}

static void print_witnesses(const json_t *witnesses)
{
    const char *name;
    json_t *t;
    json_object_foreach((json_t *)witnesses, name, t)
    {
        if (json_is_integer(t))
            printf("witness %s: cosigned the checkpoint at %" JSON_INTEGER_FORMAT " (POSIX time)\n",
                   name, json_integer_value(t));
        else
            printf("witness %s: no cosignature\n", name);
    }
}

static void print_notice(void *ctx, const char *message)
{
    (void)ctx;
    fprintf(stderr, "capledger verify: note: %s\n", message);
}

/* Strips leading and trailing white space in place. */
static char *trim(char *s)
{
    while (isspace((unsigned char)*s))
        s++;
    size_t n = strlen(s);
    while (n && isspace((unsigned char)s[n - 1]))
        s[--n] = '\0';
    return s;
}

/* The approvers file: one base64 public key per line (as `capledger keygen` writes FILE.pub);
 * blank lines and lines starting with '#' are skipped, and anything after the key on its line
 * (a name, say) is ignored. Fills keys[] with pointers into text; returns the count or -1. */
static long read_approvers(char *text, const char **keys, size_t max)
{
    size_t n = 0;
    for (char *line = strtok(text, "\n"); line; line = strtok(NULL, "\n")) {
        line = trim(line);
        if (!*line || *line == '#')
            continue;
        line[strcspn(line, " \t")] = '\0';
        if (n == max)
            return -1;
        keys[n++] = line;
    }
    return (long)n;
}

/* "0, 2-4, 7" for a sorted array of indexes. */
static void print_ranges(const json_t *leaves)
{
    size_t n = json_array_size(leaves);
    if (n == 0) {
        printf("no leaves");
        return;
    }
    printf("%s ", n == 1 ? "leaf" : "leaves");
    for (size_t i = 0; i < n;) {
        json_int_t first = json_integer_value(json_array_get(leaves, i)), last = first;
        size_t j = i + 1;
        while (j < n && json_integer_value(json_array_get(leaves, j)) == last + 1)
            last = json_integer_value(json_array_get(leaves, j++));
        printf("%s%" JSON_INTEGER_FORMAT, i ? ", " : "", first);
        if (last != first)
            printf("-%" JSON_INTEGER_FORMAT, last);
        i = j;
    }
}

static void print_approvers(const json_t *approvers)
{
    const char *key_id;
    json_t *a;
    json_object_foreach((json_t *)approvers, key_id, a)
    {
        const char *owner = json_string_value(json_object_get(a, "owner"));
        const json_t *enrolled = json_object_get(a, "enrolled");
        char owner_safe[256];
        printf("approver %s, key %s",
               owner ? term_text(owner_safe, sizeof owner_safe, owner) : "(not in the log)",
               key_id);
        if (json_is_integer(enrolled))
            printf(" (enrolled by leaf %" JSON_INTEGER_FORMAT ")", json_integer_value(enrolled));
        printf("%s: signed ", json_is_true(json_object_get(a, "pinned")) ? " (one you hold)" : "");
        print_ranges(json_object_get(a, "leaves"));
        printf("\n");
    }
}

/* The bundle file, rewound for another pass. What cannot be read twice — standard input ("-"),
 * a pipe or FIFO (`<(curl …)`), a character device — is spooled to a temporary file first.
 * NULL after printing why. */
static FILE *bundle_open(const char *path)
{
    int is_stdin = strcmp(path, "-") == 0;
    FILE *in = is_stdin ? stdin : fopen(path, "rb");
    if (!in) {
        fprintf(stderr, "capledger: %s: %s\n", path, strerror(errno ? errno : EIO));
        return NULL;
    }
    struct stat st;
    if (fstat(fileno(in), &st) == 0 && S_ISREG(st.st_mode) && !is_stdin)
        return in;
    FILE *f = tmpfile();
    if (f) {
        char buf[READ_CHUNK];
        size_t n;
        while ((n = fread(buf, 1, sizeof buf, in)) > 0)
            if (fwrite(buf, 1, n, f) != n)
                break;
        if (ferror(in) || ferror(f)) {
            fclose(f);
            f = NULL;
        }
    }
    if (!is_stdin)
        fclose(in);
    if (!f)
        fprintf(stderr, "capledger: %s: %s\n", path, strerror(errno ? errno : EIO));
    return f;
}

/* One pass of the reader over the whole file. Returns 0, or 1 after printing a parse error
 * (or nothing, when the leaf callback stopped it: the caller names that fault). */
static int bundle_pass(FILE *f, const char *path, struct bundle_reader *r)
{
    char buf[READ_CHUNK];
    size_t n;
    int rc = 0;
    rewind(f);
    while (rc == 0 && (n = fread(buf, 1, sizeof buf, f)) > 0)
        rc = bundle_reader_feed(r, buf, n);
    if (rc == 0 && ferror(f)) {
        fprintf(stderr, "capledger: %s: %s\n", path, strerror(errno ? errno : EIO));
        return 1;
    }
    if (rc == 0)
        rc = bundle_reader_end(r);
    if (rc == 0 || bundle_reader_stopped(r))
        return rc ? 1 : 0;
    long line, column;
    const char *message = bundle_reader_error(r, &line, &column);
    fprintf(stderr, "capledger verify: %s:%ld:%ld: %s\n", path, line, column, message);
    return 1;
}

struct leaf_feed {
    struct bundle_check *check;
    char why[1024];
};

static int feed_leaf(void *ctx, size_t index, const char *text, size_t len)
{
    (void)index;
    struct leaf_feed *lf = ctx;
    return bundle_check_leaf(lf->check, text, len, lf->why, sizeof lf->why);
}

int cmd_verify(int argc, char **argv)
{
    const char *bundle_path = NULL, *previous_path = NULL, *key_path = NULL;
    const char *approvers_path = NULL;
    const char *witnesses[WITNESSES_MAX];
    size_t nwitnesses = 0;
    long quorum = -1;
    int recompute = 0;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--previous-checkpoint") == 0 && i + 1 < argc)
            previous_path = argv[++i];
        else if (strcmp(argv[i], "--key") == 0 && i + 1 < argc)
            key_path = argv[++i];
        else if (strcmp(argv[i], "--approvers") == 0 && i + 1 < argc)
            approvers_path = argv[++i];
        else if (strcmp(argv[i], "--witness") == 0 && i + 1 < argc && nwitnesses < WITNESSES_MAX)
            witnesses[nwitnesses++] = argv[++i];
        else if (strcmp(argv[i], "--quorum") == 0 && i + 1 < argc && quorum_arg(argv[++i], &quorum))
            ;
        else if (strcmp(argv[i], "--recompute") == 0)
            recompute = 1;
        else if ((argv[i][0] != '-' || strcmp(argv[i], "-") == 0) && !bundle_path)
            bundle_path = argv[i];
        else
            return usage();
    }
    if (!bundle_path)
        return usage();
    if (witnesses_distinct(witnesses, nwitnesses, quorum) != 0)
        return 2;
    const char *env_key = config_env("CAPLEDGER_VERIFIER_KEY");
    if (!key_path && !env_key)
        return no_key();
    if (sodium_init() < 0) {
        fprintf(stderr, "capledger: libsodium failed to initialise\n");
        return 1;
    }
    int status = 1;
    char *previous = NULL, *key_text = NULL, *approvers_text = NULL;
    const char **approver_keys = NULL;
    json_t *report = json_object();
    FILE *file = NULL;
    struct bundle_reader *members_reader = NULL, *leaves_reader = NULL;
    struct bundle_trust trust = {.witnesses = witnesses,
                                 .witness_count = nwitnesses,
                                 .quorum = quorum < 0 ? nwitnesses : (size_t)quorum};
    if (key_path) {
        if (!(key_text = files_read_all(key_path, KEY_FILE_MAX_BYTES, NULL)))
            goto done;
    } else if (!(key_text = strdup(env_key))) {
        goto done;
    }
    trust.verifier_key = trim(key_text);
    if (approvers_path) {
        approvers_text = files_read_all(approvers_path, APPROVERS_MAX_BYTES, NULL);
        approver_keys = calloc(APPROVERS_MAX, sizeof *approver_keys);
        if (!approvers_text || !approver_keys)
            goto done;
        long n = read_approvers(approvers_text, approver_keys, APPROVERS_MAX);
        if (n <= 0) {
            fprintf(stderr, "capledger verify: %s: %s\n", approvers_path,
                    n ? "more than 10000 keys" : "no approver key (one base64 key per line)");
            goto done;
        }
        trust.approvers = approver_keys;
        trust.approver_count = (size_t)n;
    }
    if (previous_path && !(previous = files_read_all(previous_path, CHECKPOINT_MAX_BYTES, NULL)))
        goto done;
    trust.previous_checkpoint = previous;
    if (!(file = bundle_open(bundle_path)))
        goto done;
    /* Pass 1: the members other than the leaves, and how many leaves there are. */
    members_reader = bundle_reader_new(NULL, NULL, true, LEAF_MAX_BYTES, MEMBER_MAX_BYTES);
    if (!members_reader || bundle_pass(file, bundle_path, members_reader) != 0)
        goto done;
    const json_t *members = bundle_reader_members(members_reader);
    size_t leaf_count = bundle_reader_leaves(members_reader);
    char why[1024];
    struct leaf_feed feed = {
        .check = bundle_check_begin(
            members, bundle_reader_has_leaves(members_reader) ? (long long)leaf_count : -1, &trust,
            why, sizeof why)};
    if (!feed.check) {
        fprintf(stderr, "capledger verify: FAILED: %s\n", why);
        goto done;
    }
    /* Pass 2: each leaf through the checks as it is read. */
    leaves_reader = bundle_reader_new(feed_leaf, &feed, false, LEAF_MAX_BYTES, MEMBER_MAX_BYTES);
    int failed = !leaves_reader || bundle_pass(file, bundle_path, leaves_reader) != 0;
    if (failed && leaves_reader && bundle_reader_stopped(leaves_reader))
        fprintf(stderr, "capledger verify: FAILED: %s\n", feed.why);
    if (!failed && bundle_check_end(feed.check, report, why, sizeof why) != 0) {
        fprintf(stderr, "capledger verify: FAILED: %s\n", why);
        failed = 1;
    }
    bundle_check_free(feed.check);
    if (failed)
        goto done;
    if (recompute &&
        bundle_recompute(members, RECOMPUTE_REL_TOL, print_notice, NULL, why, sizeof why) != 0) {
        fprintf(stderr, "capledger verify: FAILED: %s\n", why);
        goto done;
    }
    char quorum_text[96] = "";
    if (trust.witness_count)
        snprintf(quorum_text, sizeof quorum_text, "; cosigned by at least %zu of the %zu witnesses",
                 trust.quorum, trust.witness_count);
    char origin_safe[512];
    printf("verified: checkpoint signed by %s with the key you hold%s; %zu leaves, every approver "
           "signature and comparison hash checked%s%s%s\n",
           term_text(origin_safe, sizeof origin_safe,
                     json_string_value(json_object_get(members, "origin"))),
           quorum_text, leaf_count,
           trust.approver_count ? "; every signer is an approver key you hold" : "",
           previous ? "; the previous checkpoint is a prefix" : "",
           recompute ? "; every comparison recomputed within 1e-9" : "");
    print_witnesses(json_object_get(report, "witnesses"));
    print_approvers(json_object_get(report, "approvers"));
    json_int_t legacy = json_integer_value(json_object_get(report, "legacy_decisions"));
    if (legacy)
        fprintf(stderr,
                "capledger verify: note: %" JSON_INTEGER_FORMAT " decision leaves come before the "
                "log's first key event (a log begun before key events were logged): their keys "
                "were checked against the bundle's signer_keys only\n",
                legacy);
    status = 0;
done:
    bundle_reader_free(leaves_reader);
    bundle_reader_free(members_reader);
    if (file)
        fclose(file);
    json_decref(report);
    free(approver_keys);
    free(approvers_text);
    free(key_text);
    free(previous);
    return status;
}
