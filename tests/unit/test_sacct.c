/* sacct reader and the run record: every real sample, the -p and header variants of them,
 * time zones, AllocTRES, validation, COPY rendering, the JSON run validator, and a corpus of
 * malformed input that must give problems with a line, never a crash.
 *
 * Expected figures were worked out independently of this code with awk and Python over the
 * sample files; each is given with its command. In the Python, rows are
 * dict(zip(FIELDS, line.rstrip('\n').split('|', 31))), jobs are rows whose JobIDRaw has no '.',
 * finished are jobs whose State's first word is not PENDING/RUNNING/REQUEUED/SUSPENDED, and
 * gpus() takes gres/gpu=N when present, else the sum of gres/gpu:type=N. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "core/formats/sacct.h"
#include "oracle/run_text.h"
#include "sample_text.h"
#include "oracle/linebuf_stream.h"

/* SACCT_FIELDS of NordicHPC/sonar src/slurmjobs.rs: the -o list of both sonar samples */
#define SONAR_FIELDS                                                                               \
    "JobID,JobIDRaw,User,Account,State,Start,End,AveCPU,AveDiskRead,AveDiskWrite,AveRSS,"          \
    "AveVMSize,ElapsedRaw,ExitCode,Layout,MaxRSS,MaxVMSize,MinCPU,ReqCPUS,ReqMem,ReqNodes,"        \
    "Reservation,Submit,Suspended,SystemCPU,TimelimitRaw,UserCPU,NodeList,Partition,AllocTRES,"    \
    "Priority,JobName"
#define GPU_SAMPLE "samples/sacct/sonar_fox_sacct_aP_noheader_gpu.txt"
#define CPU_SAMPLE "samples/sacct/sonar_fox_sacct_aP_noheader_2024.txt"

/* What a whole upload produced. */
struct tally {
    struct sacct_reader reader;
    long by_state[RUN_STATE_DEADLINE + 1];
    long never_started;
    double gpus;
    double gpu_hours; /* gpus x (ended - started) over runs that started */
    struct run first;
    long runs;
    int fatal_at;
    struct pgcopy_buf copy;
};

static int tally_line(const struct linebuf_line *l, void *ctx, struct problems *errs)
{
    struct tally *t = ctx;
    struct run run;
    switch (sacct_feed_line(&t->reader, l->text, l->len, l->lineno, &run, errs)) {
    case SACCT_RUN:
        if (t->runs++ == 0)
            t->first = run;
        t->by_state[run.state]++;
        t->gpus += run.gpus;
        if (run.has_started)
            t->gpu_hours += run.gpus * (double)(run.ended_at_s - run.started_at_s) / 3600.0;
        else
            t->never_started++;
        run_copy_line(&run, &t->copy);
        break;
    case SACCT_FATAL:
        t->fatal_at = (int)l->lineno;
        return 1;
    default:
        break;
    }
    return 0;
}

static void tally_text(struct tally *t, const char *text, size_t len,
                       const struct sacct_options *opt, size_t chunk, struct problems *errs)
{
    memset(t, 0, sizeof *t);
    pgcopy_init(&t->copy);
    if (sacct_reader_init(&t->reader, opt, errs) != 0) {
        t->fatal_at = -1;
        return;
    }
    assert_true(linebuf_stream(text, len, chunk, 0, tally_line, t, errs) >= 0);
    assert_true(pgcopy_ok(&t->copy));
}

static void tally_sample(struct tally *t, const char *rel, const struct sacct_options *opt,
                         struct problems *errs)
{
    size_t len;
    char *text = sample_load(rel, &len);
    tally_text(t, text, len, opt, 4093, errs);
    free(text);
}

static void tally_free(struct tally *t)
{
    pgcopy_free(&t->copy);
}

/* Fox GPU sample (--noheader, 301 lines):
 *   jobs:      awk -F'|' '$2 !~ /\./' f | wc -l = 122;   steps: awk -F'|' '$2 ~ /\./' | wc -l = 179
 *   finished:  Counter(first word of State) over finished jobs = COMPLETED 49, CANCELLED 5,
 *              TIMEOUT 3, FAILED 2 → 59 runs; unfinished 122 - 59 = 63
 *   gpus:      sum(gpus(AllocTRES)) over finished = 47;  never started (Start None) = 4
 *   gpu hours: sum(gpus * (End - Start)) over finished that started = 30.65638888888889
 *   first finished job, line 83: 1955319 TIMEOUT, Submit 2025-09-25T09:05:07,
 *              Start 09:05:15, End 2025-09-26T08:05:26, gres/gpu:a100_80=1,gres/gpu=1 */
static void test_fox_gpu_sample(void **state)
{
    (void)state;
    struct problems errs;
    problems_init(&errs);
    struct tally t;
    const struct sacct_options opt = {.fields = SONAR_FIELDS};
    tally_sample(&t, GPU_SAMPLE, &opt, &errs);
    assert_int_equal(errs.total, 0);
    assert_int_equal(t.reader.counts.runs, 59);
    assert_int_equal(t.reader.counts.unfinished, 63);
    assert_int_equal(t.reader.counts.steps, 179);
    assert_int_equal(t.reader.counts.rejected, 0);
    assert_int_equal(t.by_state[RUN_STATE_COMPLETED], 49);
    assert_int_equal(t.by_state[RUN_STATE_CANCELLED], 5); /* all five read "CANCELLED by N" */
    assert_int_equal(t.by_state[RUN_STATE_TIMEOUT], 3);
    assert_int_equal(t.by_state[RUN_STATE_FAILED], 2);
    assert_int_equal(t.never_started, 4);
    assert_true(t.gpus == 47);
    assert_true(fabs(t.gpu_hours - 30.65638888888889) < 1e-9);

    assert_string_equal(t.first.external_id, "1955319");
    assert_string_equal(t.first.team, "ac10004");
    assert_string_equal(t.first.user, "uc-10009");
    assert_string_equal(t.first.partition, "accel");
    assert_string_equal(t.first.gpu_model, "a100_80");
    assert_string_equal(t.first.workload_class, ""); /* classed at upload, not by the reader */
    assert_string_equal(t.first.exit_code, "0:0");
    assert_int_equal(t.first.state, RUN_STATE_TIMEOUT);
    assert_true(t.first.gpus == 1); /* typed and plain keys: counted once */
    assert_true(isnan(t.first.gpu_utilization));
    /* the first COPY row, exactly */
    const char *row = "1955319\tac10004\tuc-10009\t\\N\taccel\ta100_80\t2025-09-25T09:05:07Z\t"
                      "2025-09-25T09:05:15Z\t2025-09-26T08:05:26Z\t1\tTIMEOUT\t0:0\t\\N\n";
    assert_true(t.copy.len > strlen(row));
    assert_memory_equal(t.copy.data, row, strlen(row));
    tally_free(&t);
    problems_free(&errs);
}

/* With steps: Counter(first word of State) over all 301 rows not unfinished = COMPLETED 153,
 * CANCELLED 9, FAILED 4, TIMEOUT 3, OUT_OF_MEMORY 1 (170); unfinished rows 131. */
static void test_fox_gpu_sample_with_steps(void **state)
{
    (void)state;
    struct problems errs;
    problems_init(&errs);
    struct tally t;
    const struct sacct_options opt = {.fields = SONAR_FIELDS, .include_steps = true};
    tally_sample(&t, GPU_SAMPLE, &opt, &errs);
    assert_int_equal(errs.total, 0);
    assert_int_equal(t.reader.counts.runs, 170);
    assert_int_equal(t.reader.counts.unfinished, 131);
    assert_int_equal(t.reader.counts.steps, 0);
    assert_int_equal(t.by_state[RUN_STATE_COMPLETED], 153);
    assert_int_equal(t.by_state[RUN_STATE_CANCELLED], 9);
    assert_int_equal(t.by_state[RUN_STATE_FAILED], 4);
    assert_int_equal(t.by_state[RUN_STATE_TIMEOUT], 3);
    assert_int_equal(t.by_state[RUN_STATE_OUT_OF_MEMORY], 1);
    tally_free(&t);
    problems_free(&errs);
}

/* Fox 2024 sample (96 lines): jobs 29 (all finished), steps 67; COMPLETED 20, FAILED 4,
 * CANCELLED 3, TIMEOUT 2; sum(gpus) = 16 (grep -c gres/gpu f = 51: PROVENANCE.md's "no
 * gres/gpu" is wrong, the mig partition's jobs have gres/gpu:rtx30=1 or gres/gpu=1);
 * gpu hours 0.8352777777777777. With steps: COMPLETED 74, CANCELLED 11, FAILED 7,
 * OUT_OF_MEMORY 2, TIMEOUT 2 = 96. */
static void test_fox_2024_sample(void **state)
{
    (void)state;
    struct problems errs;
    problems_init(&errs);
    struct tally t;
    struct sacct_options opt = {.fields = SONAR_FIELDS};
    tally_sample(&t, CPU_SAMPLE, &opt, &errs);
    assert_int_equal(errs.total, 0);
    assert_int_equal(t.reader.counts.runs, 29);
    assert_int_equal(t.reader.counts.steps, 67);
    assert_int_equal(t.reader.counts.unfinished, 0);
    assert_int_equal(t.by_state[RUN_STATE_COMPLETED], 20);
    assert_int_equal(t.by_state[RUN_STATE_FAILED], 4);
    assert_int_equal(t.by_state[RUN_STATE_CANCELLED], 3);
    assert_int_equal(t.by_state[RUN_STATE_TIMEOUT], 2);
    assert_true(t.gpus == 16);
    assert_true(fabs(t.gpu_hours - 0.8352777777777777) < 1e-9);
    tally_free(&t);

    opt.include_steps = true;
    tally_sample(&t, CPU_SAMPLE, &opt, &errs);
    assert_int_equal(errs.total, 0);
    assert_int_equal(t.reader.counts.runs, 96);
    assert_int_equal(t.by_state[RUN_STATE_COMPLETED], 74);
    assert_int_equal(t.by_state[RUN_STATE_CANCELLED], 11);
    assert_int_equal(t.by_state[RUN_STATE_FAILED], 7);
    assert_int_equal(t.by_state[RUN_STATE_OUT_OF_MEMORY], 2);
    assert_int_equal(t.by_state[RUN_STATE_TIMEOUT], 2);
    tally_free(&t);
    problems_free(&errs);
}

/* The same GPU sample as `sacct -p` (a '|' after every line) and with a header line made of
 * the field list — in both spellings — gives the same 59 runs and the same COPY bytes. */
static void test_fox_gpu_sample_as_p_and_with_header(void **state)
{
    (void)state;
    size_t len;
    char *text = sample_load(GPU_SAMPLE, &len);
    struct problems errs;
    problems_init(&errs);
    struct tally plain;
    const struct sacct_options noheader = {.fields = SONAR_FIELDS};
    tally_text(&plain, text, len, &noheader, 65536, &errs);

    size_t cap = len * 2 + 1024, n = 0;
    char *with_pipes = malloc(cap), *with_header = malloc(cap);
    assert_non_null(with_pipes);
    assert_non_null(with_header);
    for (size_t i = 0; i < len; i++) {
        if (text[i] == '\n')
            with_pipes[n++] = '|';
        with_pipes[n++] = text[i];
    }
    size_t h = (size_t)snprintf(with_header, cap, "%s\n", SONAR_FIELDS);
    for (size_t i = 0; i < h; i++)
        if (with_header[i] == ',')
            with_header[i] = '|';
    memcpy(with_header + h, text, len);

    struct tally p, hdr, hdr_p;
    tally_text(&p, with_pipes, n, &noheader, 7, &errs);
    const struct sacct_options header = {0};
    tally_text(&hdr, with_header, h + len, &header, 4096, &errs);
    /* header -p: "JobID|...|JobName|" then every line with its trailing '|' */
    char *hp = malloc(cap + h);
    assert_non_null(hp);
    memcpy(hp, with_header, h - 1);
    hp[h - 1] = '|';
    hp[h] = '\n';
    memcpy(hp + h + 1, with_pipes, n);
    tally_text(&hdr_p, hp, h + 1 + n, &header, 333, &errs);
    assert_int_equal(errs.total, 0);
    struct tally *variants[] = {&p, &hdr, &hdr_p};
    for (size_t i = 0; i < 3; i++) {
        assert_int_equal(variants[i]->reader.counts.runs, 59);
        assert_int_equal(variants[i]->reader.counts.steps, 179);
        assert_int_equal(variants[i]->reader.counts.unfinished, 63);
        assert_int_equal(variants[i]->copy.len, plain.copy.len);
        assert_memory_equal(variants[i]->copy.data, plain.copy.data, plain.copy.len);
        tally_free(variants[i]);
    }
    assert_true(hdr_p.reader.trailing_pipe);
    tally_free(&plain);
    free(hp);
    free(with_pipes);
    free(with_header);
    free(text);
    problems_free(&errs);
}

/* cluster_utils issue #87: a real header line, but only JobID|NodeList|State|ExitCode, so the
 * upload is refused naming each missing required column, at line 1. */
static void test_cluster_utils_sample_lacks_required_columns(void **state)
{
    (void)state;
    struct problems errs;
    problems_init(&errs);
    struct tally t;
    const struct sacct_options opt = {0};
    tally_sample(&t, "samples/sacct/cluster_utils_issue87_sacct_parsable2.txt", &opt, &errs);
    assert_int_equal(t.fatal_at, 1);
    assert_int_equal(t.reader.counts.runs, 0);
    assert_int_equal(errs.count, 3);
    const char *expected[][2] = {{"/submitted_at", "missing column Submit"},
                                 {"/started_at", "missing column Start"},
                                 {"/ended_at", "missing column End"}};
    for (size_t i = 0; i < 3; i++) {
        assert_int_equal(errs.items[i].line, 1);
        assert_string_equal(errs.items[i].pointer, expected[i][0]);
        assert_string_equal(errs.items[i].message, expected[i][1]);
    }
    tally_free(&t);
    problems_free(&errs);
}

/* The same file with the columns it lacks appended reads as 4 jobs (awk -F'|' '$1 !~ /\./'
 * → 239023..239026, all COMPLETED) and 12 steps; with steps, the four .0 steps are CANCELLED
 * with ExitCode 0:10. */
static void test_cluster_utils_sample_completed(void **state)
{
    (void)state;
    size_t len;
    char *text = sample_load("samples/sacct/cluster_utils_issue87_sacct_parsable2.txt", &len);
    char *extended = malloc(len * 2 + 64 * 20);
    assert_non_null(extended);
    size_t n = 0;
    long lineno = 0;
    for (size_t i = 0; i < len; i++) {
        if (text[i] == '\n') {
            const char *extra = lineno++ == 0 ? "|Submit|Start|End"
                                              : "|2024-04-25T10:00:00|2024-04-25T10:00:05|"
                                                "2024-04-25T11:00:05";
            n += (size_t)sprintf(extended + n, "%s", extra);
        }
        extended[n++] = text[i];
    }
    struct problems errs;
    problems_init(&errs);
    struct tally t;
    const struct sacct_options opt = {.include_steps = false};
    tally_text(&t, extended, n, &opt, 100, &errs);
    assert_int_equal(errs.total, 0);
    assert_int_equal(t.reader.counts.runs, 4);
    assert_int_equal(t.reader.counts.steps, 12);
    assert_int_equal(t.by_state[RUN_STATE_COMPLETED], 4);
    assert_string_equal(t.first.external_id, "239023");
    assert_string_equal(t.first.team, ""); /* no Account column, no ?team= */
    assert_true(t.first.gpus == 0);        /* no AllocTRES column */
    tally_free(&t);

    const struct sacct_options steps = {.include_steps = true, .team = "robotics"};
    tally_text(&t, extended, n, &steps, 100, &errs);
    assert_int_equal(errs.total, 0);
    assert_int_equal(t.reader.counts.runs, 16);
    assert_int_equal(t.by_state[RUN_STATE_CANCELLED], 4);
    assert_string_equal(t.first.team, "robotics");
    tally_free(&t);
    free(extended);
    free(text);
    problems_free(&errs);
}

/* A stand-in for the HTTP layer's TZ/mktime: Europe/Oslo in September is UTC+2. */
static int oslo_summer(const struct tm *local, void *ctx, int64_t *epoch_s)
{
    (void)ctx;
    int64_t days =
        timefmt_days_from_civil(local->tm_year + 1900, local->tm_mon + 1, local->tm_mday);
    *epoch_s = days * 86400 + local->tm_hour * 3600 + local->tm_min * 60 + local->tm_sec - 7200;
    return 0;
}

static int no_such_time(const struct tm *local, void *ctx, int64_t *epoch_s)
{
    (void)local;
    (void)ctx;
    (void)epoch_s;
    return -1;
}

static enum sacct_result feed(struct sacct_reader *r, const char *line, long lineno,
                              struct run *out, struct problems *errs)
{
    return sacct_feed_line(r, line, strlen(line), lineno, out, errs);
}

static void test_time_zones_and_offsets(void **state)
{
    (void)state;
    struct problems errs;
    problems_init(&errs);
    struct sacct_reader r;
    struct run run;
    const struct sacct_options oslo = {.fields = "JobID,State,Submit,Start,End",
                                       .local_to_utc = oslo_summer};
    assert_int_equal(sacct_reader_init(&r, &oslo, &errs), 0);
    assert_int_equal(feed(&r,
                          "7|COMPLETED|2025-09-25T09:05:07|2025-09-25T09:05:15|2025-09-26T08:05:26",
                          1, &run, &errs),
                     SACCT_RUN);
    struct pgcopy_buf b;
    pgcopy_init(&b);
    run_copy_line(&run, &b);
    assert_true(pgcopy_ok(&b));
    const char *row = "7\t\\N\t\\N\t\\N\t\\N\t\\N\t2025-09-25T07:05:07Z\t2025-09-25T07:05:15Z\t"
                      "2025-09-26T06:05:26Z\t0\tCOMPLETED\t\\N\t\\N\n";
    assert_int_equal(b.len, strlen(row));
    assert_memory_equal(b.data, row, b.len);
    /* an explicit offset wins over the zone */
    assert_int_equal(feed(&r,
                          "8|FAILED|2025-09-25T09:05:07Z|2025-09-25T11:05:15+02:00|"
                          "2025-09-25T09:06:00-0000",
                          2, &run, &errs),
                     SACCT_RUN);
    assert_int_equal(run.submitted_at_s, 1758791107); /* date -u -d 2025-09-25T09:05:07 +%s */
    assert_int_equal(run.started_at_s, 1758791115);
    assert_int_equal(run.ended_at_s, 1758791160);
    assert_int_equal(errs.total, 0);

    const struct sacct_options gap = {.fields = "JobID,State,Submit,Start,End",
                                      .local_to_utc = no_such_time};
    assert_int_equal(sacct_reader_init(&r, &gap, &errs), 0);
    assert_int_equal(
        feed(&r, "9|FAILED|2025-03-30T02:30:00|None|2025-03-30T02:40:00Z", 5, &run, &errs),
        SACCT_REJECTED);
    assert_int_equal(errs.count, 1);
    assert_int_equal(errs.items[0].line, 5);
    assert_int_equal(errs.items[0].column, 3);
    assert_string_equal(errs.items[0].pointer, "/submitted_at");
    pgcopy_free(&b);
    problems_free(&errs);
}

static void test_alloctres_and_allocgres(void **state)
{
    (void)state;
    static const struct {
        const char *tres;
        double gpus;
    } cases[] = {
        {"billing=32,cpu=32,gres/gpu:a100=1,gres/gpu=1,mem=128G,node=1", 1},
        {"gres/gpu:a100_80=4,gres/gpu=4", 4},
        {"gres/gpu=8", 8},
        {"gres/gpu:h100=8", 8},
        {"gres/gpu:a100=2,gres/gpu:v100=1", 3}, /* typed only: they add up */
        {"gres/gpu:a100=2,gres/gpu:v100=1,gres/gpu=3", 3},
        {"cpu=4,mem=8G,gres/gpumem=40G,gres/shard=2", 0}, /* not GPU counts */
        {"", 0},
        {"billing=6,cpu=6,mem=10000M,node=1", 0},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        double gpus = -1;
        assert_true(sacct_tres_gpus(cases[i].tres, strlen(cases[i].tres), &gpus));
        assert_true(gpus == cases[i].gpus);
    }
    double gpus;
    assert_false(sacct_tres_gpus("gres/gpu=eight", 14, &gpus));
    assert_false(sacct_tres_gpus("gres/gpu=-1", 11, &gpus));

    struct problems errs;
    problems_init(&errs);
    struct sacct_reader r;
    struct run run;
    const struct sacct_options opt = {.fields = "JobID,State,Submit,Start,End,AllocGRES"};
    assert_int_equal(sacct_reader_init(&r, &opt, &errs), 0);
    assert_int_equal(feed(&r,
                          "5|COMPLETED|2016-01-01T00:00:00|2016-01-01T00:00:00|"
                          "2016-01-01T01:00:00|gpu:k80:2(IDX:0-1),gpu:1",
                          1, &run, &errs),
                     SACCT_RUN);
    assert_true(run.gpus == 3);
    assert_int_equal(errs.total, 0);
    problems_free(&errs);
}

/* A column named twice: which one is the run's is anybody's guess (State|State with COMPLETED
 * and FAILED stored COMPLETED): the header is refused, naming both columns. */
static void test_repeated_column_is_fatal(void **state)
{
    (void)state;
    struct problems errs;
    problems_init(&errs);
    struct sacct_reader r;
    struct run run;
    const struct sacct_options opt = {0};
    assert_int_equal(sacct_reader_init(&r, &opt, &errs), 0);
    assert_int_equal(feed(&r, "JobID|State|State|Submit|Start|End", 1, &run, &errs), SACCT_FATAL);
    assert_int_equal(errs.total, 1);
    assert_non_null(strstr(errs.items[0].message, "column State appears twice (columns 2 and 3)"));
    problems_free(&errs);
}

/* Problems name the line, the column (1-based field) and the run field. */
static void test_bad_lines_are_rejected_with_their_place(void **state)
{
    (void)state;
    struct problems errs;
    problems_init(&errs);
    struct sacct_reader r;
    struct run run;
    const struct sacct_options opt = {0};
    assert_int_equal(sacct_reader_init(&r, &opt, &errs), 0);
    assert_int_equal(feed(&r, "JobIDRaw|State|Submit|Start|End|AllocTRES|ExitCode|Partition|QOS", 1,
                          &run, &errs),
                     SACCT_NOTHING);
    static const struct {
        const char *line;
        long column;
        const char *pointer;
        const char *message;
    } cases[] = {
        {"1|EXPLODED|2025-01-01T00:00:00|2025-01-01T00:00:01|2025-01-01T00:00:02||0:0||", 2,
         "/state", "unknown state 'EXPLODED'"},
        {"2|COMPLETED|2025-01-01T00:00:10|2025-01-01T00:00:01|2025-01-01T00:00:20||0:0||", 0,
         "/started_at", "started before it was submitted"},
        {"3|COMPLETED|2025-01-01T00:00:00|2025-01-01T00:00:10|2025-01-01T00:00:05||0:0||", 0,
         "/ended_at", "ended before it started"},
        {"4|COMPLETED|yesterday|2025-01-01T00:00:10|2025-01-01T00:00:05||0:0||", 3, "/submitted_at",
         "'yesterday' is not a time"},
        {"5|COMPLETED|2025-02-30T00:00:00|None|2025-03-01T00:00:00||0:0||", 3, "/submitted_at",
         "'2025-02-30T00:00:00' is not a time"},
        {"6|COMPLETED|2025-01-01T00:00:00|None|Unknown||0:0||", 0, "/ended_at",
         "a finished run needs its end time"},
        {"7|COMPLETED|2025-01-01T00:00:00|None|2025-01-01T00:00:00|gres/gpu=x|0:0||", 6, "/gpus",
         "bad gres/gpu count in 'gres/gpu=x'"},
        {"8|COMPLETED|2025-01-01T00:00:00|None|2025-01-01T00:00:00||zero||", 0, "/exit_code",
         "exit_code must read N:M (exit status:signal)"},
        {"9|COMPLETED|2025-01-01T00:00:00", 3, "", "3 fields where the header has 9"},
        {"10|COMPLETED|2025-01-01T00:00:00|None|2025-01-01T00:00:00||0:0|||extra", 10, "",
         "10 fields where the header has 9"},
        {"|COMPLETED|2025-01-01T00:00:00|None|2025-01-01T00:00:00||0:0||", 0, "/external_id",
         "a run needs a job id"},
        /* text from a file meets the rule of every text field: an escape sequence in a job id
         * or a C1 control in a partition retitled the terminal of whoever listed the runs */
        {"j\033]0;pwned\007|COMPLETED|2025-01-01T00:00:00|None|2025-01-01T00:00:00||0:0||", 0,
         "/external_id", "must not contain control characters (U+001B at byte 2)"},
        {"15|COMPLETED|2025-01-01T00:00:00|None|2025-01-01T00:00:00||0:0|gp\302\233u|", 0,
         "/partition", "must not contain control characters (U+009B at byte 3)"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        problems_free(&errs);
        problems_init(&errs);
        assert_int_equal(feed(&r, cases[i].line, (long)i + 2, &run, &errs), SACCT_REJECTED);
        assert_int_equal(errs.count, 1);
        assert_int_equal(errs.items[0].line, (long)i + 2);
        assert_int_equal(errs.items[0].column, cases[i].column);
        assert_string_equal(errs.items[0].pointer, cases[i].pointer);
        assert_string_equal(errs.items[0].message, cases[i].message);
    }
    assert_int_equal(r.counts.rejected, (long)(sizeof cases / sizeof cases[0]));
    problems_free(&errs);
    problems_init(&errs);
    /* a state with a suffix, QOS as the partition when Partition is empty, an unfinished job */
    assert_int_equal(
        feed(&r, "11|CANCELLED by 0|2025-01-01T00:00:00|None|2025-01-01T00:01:00||0:0||high", 40,
             &run, &errs),
        SACCT_RUN);
    assert_int_equal(run.state, RUN_STATE_CANCELLED);
    assert_string_equal(run.partition, "high");
    assert_int_equal(
        feed(&r, "12|REQUEUED|2025-01-01T00:00:00|None|Unknown||0:0||", 41, &run, &errs),
        SACCT_UNFINISHED);
    assert_int_equal(
        feed(&r,
             "13|NODE_FAIL+|2025-01-01T00:00:00|2025-01-01T00:00:00|2025-01-01T00:00:00||1:0|gpu|",
             42, &run, &errs),
        SACCT_RUN);
    assert_int_equal(run.state, RUN_STATE_NODE_FAIL);
    assert_string_equal(run.partition, "gpu");
    assert_int_equal(errs.count, 0);
    problems_free(&errs);
}

static const char *map_team(const char *account, void *ctx)
{
    (void)ctx;
    return strcmp(account, "ac10004") == 0 ? "vision" : NULL;
}

static const char *map_class(const char *partition, const char *qos, void *ctx)
{
    (void)qos;
    (void)ctx;
    return strncmp(partition, "accel", 5) == 0 ? "production" : "exploratory";
}

/* Mapping callbacks: the first finished job (account ac10004, partition accel) is mapped. */
static void test_team_and_class_mapping(void **state)
{
    (void)state;
    struct problems errs;
    problems_init(&errs);
    struct tally t;
    const struct sacct_options opt = {
        .fields = SONAR_FIELDS, .map_team = map_team, .map_class = map_class};
    tally_sample(&t, GPU_SAMPLE, &opt, &errs);
    assert_int_equal(errs.total, 0);
    assert_string_equal(t.first.team, "vision");
    assert_string_equal(t.first.workload_class, "production");
    tally_free(&t);
    problems_free(&errs);
}

/* COPY escaping of backslash, tab, newline and CR, and fractional GPUs. */
static void test_copy_escaping(void **state)
{
    (void)state;
    struct run run;
    run_clear(&run);
    strcpy(run.external_id, "a\\b\tc");
    strcpy(run.team, "line\nbreak\r");
    run.has_submitted = run.has_ended = true;
    run.submitted_at_s = -1; /* 1969-12-31T23:59:59Z */
    run.ended_at_s = 0;
    run.gpus = 0.25;
    run.state = RUN_STATE_DEADLINE;
    run.gpu_utilization = 0.63;
    struct pgcopy_buf b;
    pgcopy_init(&b);
    run_copy_line(&run, &b);
    assert_true(pgcopy_ok(&b));
    const char *row = "a\\\\b\\tc\tline\\nbreak\\r\t\\N\t\\N\t\\N\t\\N\t1969-12-31T23:59:59Z\t\\N\t"
                      "1970-01-01T00:00:00Z\t0.25\tDEADLINE\t\\N\t0.63\n";
    assert_int_equal(b.len, strlen(row));
    assert_memory_equal(b.data, row, b.len);
    pgcopy_free(&b);
}

static json_t *parse(const char *text)
{
    json_error_t err;
    json_t *v = json_loads(text, JSON_REJECT_DUPLICATES, &err);
    assert_non_null(v);
    return v;
}

static void test_run_from_json(void **state)
{
    (void)state;
    struct problems errs;
    problems_init(&errs);
    struct run run;
    json_t *ok = parse("{\"external_id\": \"12345\", \"cluster\": \"a\", \"team\": \"vision\", "
                       "\"user\": \"ana\", \"workload_class\": \"production\", "
                       "\"submitted_at\": \"2025-01-01T10:00:00+01:00\", \"started_at\": null, "
                       "\"ended_at\": \"2025-01-01T09:30:00.750Z\", \"gpus\": 0.5, "
                       "\"state\": \"CANCELLED\", \"exit_code\": \"0:15\", "
                       "\"gpu_utilization\": 0.63}");
    assert_int_equal(run_from_json(ok, "/0", &run, &errs), 0);
    assert_int_equal(errs.total, 0);
    json_t *ctl = parse("{\"external_id\": \"1\", \"job_name\": \"a\\u001b[2Jb\", "
                        "\"submitted_at\": \"2025-01-01T10:00:00Z\", "
                        "\"ended_at\": \"2025-01-01T11:00:00Z\", \"state\": \"COMPLETED\"}");
    struct run run_ctl;
    assert_int_not_equal(run_from_json(ctl, "/3", &run_ctl, &errs), 0);
    assert_int_equal(errs.count, 1);
    assert_string_equal(errs.items[0].pointer, "/3/job_name");
    assert_string_equal(errs.items[0].message,
                        "must not contain control characters (U+001B at byte 2)");
    json_decref(ctl);
    problems_free(&errs);
    problems_init(&errs);
    assert_string_equal(run.cluster, "a");
    assert_int_equal(run.submitted_at_s, 1735722000); /* date -u -d 2025-01-01T09:00:00 +%s */
    assert_int_equal(run.ended_at_s, 1735723800);
    assert_false(run.has_started);
    assert_true(run.gpus == 0.5);
    assert_true(run.gpu_utilization == 0.63);
    json_decref(ok);

    json_t *bad = parse("{\"external_id\": 12345, \"submitted_at\": \"2025-01-01T10:00:00\", "
                        "\"state\": \"RUNNING\", \"gpus\": -1, \"gpu_utilization\": 63, "
                        "\"colour\": \"red\", \"team\": null, \"ended_at\": null}");
    assert_int_equal(run_from_json(bad, "/7", &run, &errs), -1);
    const char *expected[][2] = {
        {"/7/external_id", "external_id must be a string"},
        {"/7/submitted_at", "submitted_at must be an RFC 3339 time with an offset"},
        {"/7/state", "state must be one of COMPLETED, FAILED, CANCELLED, TIMEOUT, PREEMPTED, "
                     "NODE_FAIL, OUT_OF_MEMORY, BOOT_FAIL, DEADLINE"},
        {"/7/colour", "unknown field"},
        {"/7/ended_at", "ended_at may not be null"},
    };
    assert_int_equal(errs.count, 5);
    for (size_t i = 0; i < 5; i++) {
        int found = 0;
        for (size_t k = 0; k < errs.count; k++)
            found += strcmp(errs.items[k].pointer, expected[i][0]) == 0 &&
                     strcmp(errs.items[k].message, expected[i][1]) == 0;
        assert_int_equal(found, 1);
    }
    json_decref(bad);

    /* the range checks run once the types are right */
    problems_free(&errs);
    problems_init(&errs);
    json_t *ranges = parse("{\"external_id\": \"1\", \"submitted_at\": \"2025-01-01T10:00:00Z\", "
                           "\"ended_at\": \"2025-01-01T11:00:00Z\", \"state\": \"FAILED\", "
                           "\"gpus\": -1, \"gpu_utilization\": 63}");
    assert_int_equal(run_from_json(ranges, "", &run, &errs), -1);
    assert_int_equal(errs.count, 2);
    assert_string_equal(errs.items[0].pointer, "/gpus");
    assert_string_equal(errs.items[1].pointer, "/gpu_utilization");
    json_decref(ranges);

    problems_free(&errs);
    problems_init(&errs);
    json_t *missing = parse("{}");
    assert_int_equal(run_from_json(missing, "/2", &run, &errs), -1);
    assert_int_equal(errs.count, 4); /* external_id, submitted_at, ended_at, state */
    assert_string_equal(errs.items[0].message, "external_id is required");
    json_decref(missing);
    json_t *array = parse("[]");
    assert_int_equal(run_from_json(array, "/3", &run, &errs), -1);
    assert_string_equal(errs.items[errs.count - 1].pointer, "/3");
    json_decref(array);
    problems_free(&errs);
}

/* Malformed input: each gives problems with a line (and column where one exists), and the
 * reader survives to read the next good line. */
static void test_malformed_corpus(void **state)
{
    (void)state;
    struct problems errs;
    struct tally t;
    const struct sacct_options header = {0};
    const struct sacct_options fields = {.fields = SONAR_FIELDS};

    /* wrong delimiter: a comma-separated header is one unknown column */
    problems_init(&errs);
    const char *csv = "JobID,State,Submit,Start,End\n1,COMPLETED,2025-01-01T00:00:00,,\n";
    tally_text(&t, csv, strlen(csv), &header, 5, &errs);
    assert_int_equal(t.fatal_at, 1);
    assert_int_equal(errs.count, 5);
    assert_string_equal(errs.items[0].message,
                        "missing column JobIDRaw or JobID (the header has no '|': sacct "
                        "--parsable2 separates fields with '|')");
    tally_free(&t);
    problems_free(&errs);

    /* a --noheader file uploaded without ?fields=: its first line is no header */
    problems_init(&errs);
    size_t len;
    char *text = sample_load(GPU_SAMPLE, &len);
    tally_text(&t, text, len, &header, 4096, &errs);
    assert_int_equal(t.fatal_at, 1);
    assert_int_equal(errs.count, 5);
    assert_string_equal(errs.items[1].message,
                        "missing column State (line 1 looks like data: a file without a header "
                        "line needs its -o list: ?fields=A,B,… in the API, the \"Columns\" field "
                        "of the upload form, --param fields=A,B,… of capledger import)");
    tally_free(&t);
    problems_free(&errs);

    /* truncated 40 bytes into line 120: the 119 lines before read as usual, line 120 is short
     * (sed -n 120p f | cut -c1-40 | awk -F'|' '{print NF}' = 5) */
    problems_init(&errs);
    size_t cut = 0;
    for (int lines = 0; lines < 119; cut++)
        lines += text[cut] == '\n';
    cut += 40;
    tally_text(&t, text, cut, &fields, 512, &errs);
    assert_int_equal(errs.count, 1);
    assert_int_equal(errs.items[0].line, 120);
    assert_string_equal(errs.items[0].message, "5 fields where the field list has 32");
    tally_free(&t);
    problems_free(&errs);

    /* invalid UTF-8 and a NUL byte in the middle of the sample: two problems, the rest read */
    problems_init(&errs);
    char *damaged = malloc(len);
    assert_non_null(damaged);
    memcpy(damaged, text, len);
    size_t at = 0;
    for (int lines = 0; lines < 82; at++) /* line 83 is the first finished job */
        lines += damaged[at] == '\n';
    damaged[at + 3] = (char)0xC3;
    damaged[at + 4] = '(';
    size_t at2 = at;
    while (damaged[at2] != '\n')
        at2++;
    damaged[at2 + 2] = '\0'; /* line 84, second byte */
    tally_text(&t, damaged, len, &fields, 1000, &errs);
    assert_int_equal(errs.count, 2);
    assert_int_equal(errs.items[0].line, 83);
    assert_int_equal(errs.items[0].column, 4);
    assert_string_equal(errs.items[0].message, "line 83 is not valid UTF-8 at byte 4");
    assert_int_equal(errs.items[1].line, 84);
    assert_int_equal(errs.items[1].column, 2);
    assert_string_equal(errs.items[1].message, "line 84 has a NUL byte at byte 2");
    assert_int_equal(t.reader.counts.runs + t.reader.counts.steps + t.reader.counts.unfinished,
                     301 - 2);
    tally_free(&t);
    problems_free(&errs);
    free(damaged);

    /* binary garbage: every byte value, repeated; never a crash, problems with lines */
    problems_init(&errs);
    unsigned char garbage[4096];
    uint32_t x = 2463534242u;
    for (size_t i = 0; i < sizeof garbage; i++) {
        x ^= x << 13, x ^= x >> 17, x ^= x << 5;
        garbage[i] = (unsigned char)x;
    }
    tally_text(&t, (const char *)garbage, sizeof garbage, &fields, 97, &errs);
    assert_true(errs.total > 0);
    assert_int_equal(t.reader.counts.runs, 0);
    for (size_t i = 0; i < errs.count; i++)
        assert_true(errs.items[i].line > 0);
    tally_free(&t);
    problems_free(&errs);

    /* a 10 MB single line between two good ones */
    problems_init(&errs);
    const size_t big = 10u << 20;
    char *huge = malloc(big + 400);
    assert_non_null(huge);
    const char *head = "JobID|State|Submit|Start|End\n";
    const char *good = "1|COMPLETED|2025-01-01T00:00:00|None|2025-01-01T00:00:01\n";
    size_t hn = strlen(head), gn = strlen(good);
    memcpy(huge, head, hn);
    memset(huge + hn, 'x', big);
    huge[hn + big] = '\n';
    memcpy(huge + hn + big + 1, good, gn);
    tally_text(&t, huge, hn + big + 1 + gn, &header, 65536, &errs);
    assert_int_equal(errs.count, 1);
    assert_int_equal(errs.items[0].line, 2);
    assert_string_equal(errs.items[0].message, "line 2 is longer than 1048576 bytes");
    assert_int_equal(t.reader.counts.runs, 1);
    tally_free(&t);
    problems_free(&errs);
    free(huge);
    free(text);

    /* -o list with a required column missing: refused before any line */
    problems_init(&errs);
    struct sacct_reader r;
    const struct sacct_options partial = {.fields = "JobID,State,Start,End"};
    assert_int_equal(sacct_reader_init(&r, &partial, &errs), -1);
    assert_int_equal(errs.count, 1);
    assert_string_equal(errs.items[0].message, "missing column Submit");
    struct run run;
    assert_int_equal(feed(&r, "1|COMPLETED|None|None", 1, &run, &errs), SACCT_FATAL);
    problems_free(&errs);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_fox_gpu_sample),
        cmocka_unit_test(test_fox_gpu_sample_with_steps),
        cmocka_unit_test(test_fox_2024_sample),
        cmocka_unit_test(test_fox_gpu_sample_as_p_and_with_header),
        cmocka_unit_test(test_cluster_utils_sample_lacks_required_columns),
        cmocka_unit_test(test_cluster_utils_sample_completed),
        cmocka_unit_test(test_time_zones_and_offsets),
        cmocka_unit_test(test_alloctres_and_allocgres),
        cmocka_unit_test(test_bad_lines_are_rejected_with_their_place),
        cmocka_unit_test(test_team_and_class_mapping),
        cmocka_unit_test(test_copy_escaping),
        cmocka_unit_test(test_run_from_json),
        cmocka_unit_test(test_malformed_corpus),
        cmocka_unit_test(test_repeated_column_is_fatal),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
