/* Alibaba GPU trace v2023 (openb) pod list → runs, over the real 8,152-pod file.
 *
 * Expected figures from Python's csv module over the file, independently of this code
 * (gpus(r) = num_gpu * gpu_milli / 1000, 0 when num_gpu is 0):
 *   Counter(pod_phase) = Running 5193, Failed 1870, Pending 897, Succeeded 192
 *   sum(gpus) = 6086.8; fractional (0 < gpus < 1) = 3078
 *   sum(gpus * (deletion - scheduled)) / 3600 over scheduled pods = 51470.67415833334
 *   Counter(qos) = LS 4647, BE 3398, Burstable 100, Guaranteed 7 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "core/formats/openb.h"
#include "oracle/run_text.h"
#include "sample_text.h"
#include "oracle/linebuf_stream.h"

#define POD_LIST "traces/alibaba-gpu-v2023/openb_pod_list_default.csv"
#define TRACE_START 1672531200 /* 2023-01-01T00:00:00Z, a stand-in: the trace hides its date */

struct tally {
    struct openb_reader reader;
    long by_state[RUN_STATE_DEADLINE + 1];
    long never_started, fractional, ls;
    double gpus, gpu_hours;
    struct pgcopy_buf copy;
};

static int tally_line(const struct linebuf_line *l, void *ctx, struct problems *errs)
{
    struct tally *t = ctx;
    struct run run;
    enum openb_result res = openb_feed_line(&t->reader, l->text, l->len, l->lineno, &run, errs);
    if (res == OPENB_FATAL)
        return 1;
    if (res != OPENB_RUN)
        return 0;
    t->by_state[run.state]++;
    t->gpus += run.gpus;
    t->fractional += run.gpus > 0 && run.gpus < 1;
    t->ls += strcmp(run.partition, "LS") == 0;
    if (run.has_started)
        t->gpu_hours += run.gpus * (double)(run.ended_at_s - run.started_at_s) / 3600;
    else
        t->never_started++;
    if (t->reader.runs <= 2)
        run_copy_line(&run, &t->copy);
    return 0;
}

static void test_pod_list(void **state)
{
    (void)state;
    size_t len;
    char *text = sample_load(POD_LIST, &len);
    struct problems errs;
    problems_init(&errs);
    struct tally t;
    memset(&t, 0, sizeof t);
    pgcopy_init(&t.copy);
    const struct openb_options opt = {.trace_start_s = TRACE_START, .team = "ml"};
    openb_reader_init(&t.reader, &opt);
    assert_int_equal(linebuf_stream(text, len, 8192, 0, tally_line, &t, &errs), 0);
    assert_int_equal(errs.total, 0);
    assert_int_equal(t.reader.runs, 8152);
    assert_int_equal(t.by_state[RUN_STATE_COMPLETED], 192);
    assert_int_equal(t.by_state[RUN_STATE_FAILED], 1870);
    assert_int_equal(t.by_state[RUN_STATE_CANCELLED], 5193 + 897);
    assert_int_equal(t.never_started, 897);
    assert_int_equal(t.fractional, 3078);
    assert_int_equal(t.ls, 4647);
    assert_true(fabs(t.gpus - 6086.8) < 1e-6);
    assert_true(fabs(t.gpu_hours - 51470.67415833334) < 1e-6);
    /* lines 2-3: openb-pod-0000,12000,16384,1,1000,,LS,Running,0,12537496,0 and
     * openb-pod-0001,6000,12288,1,460,,LS,Running,427061,12902960,427061;
     * date -u -d @$((1672531200+12537496)) = 2023-05-26T02:38:16Z,
     * @$((1672531200+427061)) = 2023-01-05T22:37:41Z, @$((1672531200+12902960)) =
     * 2023-05-30T08:09:20Z */
    const char *rows =
        "openb-pod-0000\tml\t\\N\t\\N\tLS\t\\N\t2023-01-01T00:00:00Z\t2023-01-01T00:00:00Z\t"
        "2023-05-26T02:38:16Z\t1\tCANCELLED\t\\N\t\\N\n"
        "openb-pod-0001\tml\t\\N\t\\N\tLS\t\\N\t2023-01-05T22:37:41Z\t2023-01-05T22:37:41Z\t"
        "2023-05-30T08:09:20Z\t0.46\tCANCELLED\t\\N\t\\N\n";
    assert_true(pgcopy_ok(&t.copy));
    assert_int_equal(t.copy.len, strlen(rows));
    assert_memory_equal(t.copy.data, rows, t.copy.len);
    pgcopy_free(&t.copy);
    free(text);
    problems_free(&errs);
}

static void test_bad_lines(void **state)
{
    (void)state;
    struct problems errs;
    problems_init(&errs);
    struct openb_reader r;
    const struct openb_options opt = {0};
    struct run run;
    openb_reader_init(&r, &opt);
    const char *header = "name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec,qos,pod_phase,"
                         "creation_time,deletion_time,scheduled_time";
    assert_int_equal(openb_feed_line(&r, header, strlen(header), 1, &run, &errs), OPENB_NOTHING);
    static const struct {
        const char *line;
        long column;
        const char *message;
    } cases[] = {
        {"p1,1,1,1,1500,,LS,Running,0,10,0", 5, "gpu_milli: '1500' is not in 0..1000"},
        {"p2,1,1,x,0,,LS,Running,0,10,0", 4, "num_gpu: 'x' is not a GPU count"},
        {"p3,1,1,1,100,,LS,Evicted,0,10,0", 8, "unknown pod_phase 'Evicted'"},
        {"p4,1,1,1,100,,LS,Running,0,10,-5", 11, "scheduled_time: '-5' is not a number of seconds"},
        {"p5,1,1,1,100,,LS,Pending,0,10,3", 11, "a Pending pod was never scheduled"},
        {"p6,1,1,1,100,,LS,Failed,0,10,", 11, "a Failed pod needs its scheduled_time"},
        {"p7,1,1,1,100,,LS,Failed,5,10,3", 0, "started before it was submitted"},
        {"p8,1,1,1,100,,LS,Failed,0,10", 10, "10 fields where the header has 11"},
        {"\"p9\",1,1,1,100,,LS,Failed,0,10,3", 0, "quoted fields do not occur in this trace"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        problems_free(&errs);
        problems_init(&errs);
        assert_int_equal(
            openb_feed_line(&r, cases[i].line, strlen(cases[i].line), (long)i + 2, &run, &errs),
            OPENB_REJECTED);
        assert_int_equal(errs.count, 1);
        assert_int_equal(errs.items[0].line, (long)i + 2);
        assert_int_equal(errs.items[0].column, cases[i].column);
        assert_string_equal(errs.items[0].message, cases[i].message);
    }
    problems_free(&errs);
    problems_init(&errs);
    openb_reader_init(&r, &opt);
    assert_int_equal(openb_feed_line(&r, "name;num_gpu", 12, 1, &run, &errs), OPENB_FATAL);
    assert_int_equal(errs.count, 8); /* every required column named */
    assert_string_equal(errs.items[0].message, "missing column name");
    assert_int_equal(openb_feed_line(&r, "x", 1, 2, &run, &errs), OPENB_FATAL);
    problems_free(&errs);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_pod_list),
        cmocka_unit_test(test_bad_lines),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
