/* SkyPilot vms.csv reader: the Python-literal GpuInfo, GCP families whose GPU is implied by the
 * machine type, CPU-only and fractional rows skipped, zones collapsed to the region's lowest
 * price, and faults named by line and column. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/formats/skypilot.h"

static int parse(const char *s, struct skypilot_gpuinfo *gi, size_t *off, const char **why)
{
    return skypilot_gpuinfo_parse(s, strlen(s), gi, off, why);
}

static void test_gpuinfo_literal(void **state)
{
    (void)state;
    struct skypilot_gpuinfo gi;
    size_t off = 0;
    const char *why = NULL;
    assert_int_equal(parse("{'Gpus': [{'Name': 'A100-80GB', 'Manufacturer': 'NVIDIA', 'Count': "
                           "8.0, 'MemoryInfo': {'SizeInMiB': 81920}}], 'TotalGpuMemoryInMiB': "
                           "81920}",
                           &gi, &off, &why),
                     0);
    assert_string_equal(gi.name, "A100-80GB");
    assert_true(gi.count == 8.0);
    assert_true(gi.memory_mib == 81920);
    assert_true(gi.total_mib == 81920);
    assert_int_equal(gi.gpu_kinds, 1);
    /* JSON quoting, escapes, True/None, trailing commas, keys in another order */
    assert_int_equal(parse("{\"TotalGpuMemoryInMiB\": 16384, \"X\": [True, None, {'a': []},], "
                           "\"Gpus\": [{\"MemoryInfo\": {\"SizeInMiB\": 16384,}, \"Name\": "
                           "'T\\'4', \"Count\": 1,},],}",
                           &gi, &off, &why),
                     0);
    assert_string_equal(gi.name, "T'4");
    assert_true(gi.memory_mib == 16384);
    /* the second GPU kind is counted, not read */
    assert_int_equal(
        parse("{'Gpus': [{'Name': 'A', 'Count': 1}, {'Name': 'B', 'Count': 2}]}", &gi, &off, &why),
        0);
    assert_string_equal(gi.name, "A");
    assert_int_equal(gi.gpu_kinds, 2);
    /* a nested MemoryInfo elsewhere is not the GPU's */
    assert_int_equal(parse("{'Other': {'MemoryInfo': {'SizeInMiB': 5}}}", &gi, &off, &why), 0);
    assert_true(gi.memory_mib == 0);
}

static void test_gpuinfo_refusals(void **state)
{
    (void)state;
    struct skypilot_gpuinfo gi;
    size_t off = 0;
    const char *why = NULL;
    const char *bad[] = {
        "",
        "[1]",
        "{'a': 1",
        "{'a' 1}",
        "{'a': 1}}",
        "{'a': 1} x",
        "{'a': __import__('os')}",
        "{'a': 'open}",
        "{1: 2}",
        "{'a': 1 2}",
        "{'a': nan}",
        "{'a': [[[[[[[[[]]]]]]]]]}",
        "{'a': [}",
        "{'a': 0x10}",
        "{,}",
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        why = NULL;
        assert_int_equal(parse(bad[i], &gi, &off, &why), -1);
        assert_non_null(why);
        assert_true(off <= strlen(bad[i]));
    }
    assert_int_equal(parse("{'a': 1, 'b': x}", &gi, &off, &why), -1);
    assert_int_equal(off, 14);
    char big[SKYPILOT_GPUINFO_MAX_BYTES + 10];
    memset(big, ' ', sizeof big);
    big[0] = '{';
    big[sizeof big - 2] = '}';
    big[sizeof big - 1] = '\0';
    assert_int_equal(parse(big, &gi, &off, &why), -1);
}

static void test_implied(void **state)
{
    (void)state;
    const char *model;
    int count;
    double gb;
    assert_true(skypilot_implied_gpu("a2-highgpu-4g", &model, &count, &gb));
    assert_string_equal(model, "A100");
    assert_int_equal(count, 4);
    assert_true(gb == 40);
    assert_true(skypilot_implied_gpu("a2-megagpu-16g", &model, &count, &gb));
    assert_int_equal(count, 16);
    assert_true(skypilot_implied_gpu("a2-ultragpu-8g", &model, &count, &gb));
    assert_string_equal(model, "A100-80GB");
    assert_true(gb == 80);
    assert_true(skypilot_implied_gpu("a3-edgegpu-8g", &model, &count, &gb));
    assert_string_equal(model, "H100");
    assert_false(skypilot_implied_gpu("a2-highgpu-g", &model, &count, &gb));
    assert_false(skypilot_implied_gpu("a2-highgpu-08g", &model, &count, &gb));
    assert_false(skypilot_implied_gpu("a2-highgpu-1gx", &model, &count, &gb));
    assert_false(skypilot_implied_gpu("n2-standard-8", &model, &count, &gb));
}

/* Feeds a whole text (lines split on \n) and returns the problems' total. */
static size_t feed_text(struct skypilot_reader *r, const char *text, struct problems *p)
{
    struct csv_row row;
    csv_row_init(&row);
    long line = 0;
    const char *s = text;
    while (*s) {
        const char *e = strchr(s, '\n');
        size_t n = e ? (size_t)(e - s) : strlen(s);
        line++;
        long bad = 0;
        if (n && n < 1 << 20) {
            if (csv_split(&row, s, n, ',', &bad) != 0)
                problems_add_line(p, line, bad, "", "csv");
            else if (skypilot_feed(r, &row, line, p) != 0)
                break;
        }
        s += n + (e ? 1 : 0);
    }
    csv_row_free(&row);
    return p->total;
}

static char *read_sample(const char *name)
{
    char path[512];
    snprintf(path, sizeof path, "%s/tests/data/samples/skypilot-catalog/%s", CAPLEDGER_SOURCE_DIR,
             name);
    FILE *f = fopen(path, "rb");
    assert_non_null(f);
    static char buf[1 << 16];
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = '\0';
    return buf;
}

static const struct skypilot_offer *find(const struct skypilot_reader *r, const char *type,
                                         const char *region, int spot)
{
    for (size_t i = 0; i < r->n; i++)
        if (strcmp(r->offers[i].instance_type, type) == 0 &&
            strcmp(r->offers[i].region, region) == 0 && r->offers[i].spot == spot)
            return &r->offers[i];
    return NULL;
}

static void test_lambda_excerpt(void **state)
{
    (void)state;
    struct skypilot_reader r;
    struct problems p;
    skypilot_reader_init(&r);
    problems_init(&p);
    assert_int_equal(feed_text(&r, read_sample("lambda_vms_v7_excerpt.csv"), &p), 0);
    /* 38 rows: 2 CPU-only, 36 GPU rows; no SpotPrice → on-demand only */
    assert_int_equal(r.rows, 38);
    assert_int_equal(r.skipped_cpu_only, 2);
    assert_int_equal(r.n, 36);
    const struct skypilot_offer *o = find(&r, "gpu_8x_a100_80gb_sxm4", "europe-central-1", 0);
    assert_non_null(o);
    assert_string_equal(o->gpu_model, "A100-80GB");
    assert_int_equal(o->gpus, 8);
    assert_true(o->gpu_memory_gb == 80);
    assert_true(o->price == 14.32);
    assert_null(find(&r, "gpu_8x_a100_80gb_sxm4", "europe-central-1", 1));
    o = find(&r, "gpu_1x_gh200", "us-east-1", 0);
    assert_true(o->gpu_memory_gb == 96);
    json_t *a = skypilot_offers_json(&r, "lambda", "USD");
    assert_int_equal(json_array_size(a), 36);
    json_t *first = json_array_get(a, 0);
    assert_string_equal(json_string_value(json_object_get(first, "instance_type")), "gpu_8x_v100");
    assert_string_equal(json_string_value(json_object_get(first, "purchase_option")), "on_demand");
    assert_int_equal(json_integer_value(json_object_get(first, "gpus_per_instance")), 8);
    assert_true(json_real_value(json_object_get(first, "gpu_memory_gb")) == 16);
    json_decref(a);
    problems_free(&p);
    skypilot_reader_free(&r);
}

static void test_gcp_excerpt(void **state)
{
    (void)state;
    struct skypilot_reader r;
    struct problems p;
    skypilot_reader_init(&r);
    problems_init(&p);
    assert_int_equal(feed_text(&r, read_sample("gcp_vms_v7_excerpt.csv"), &p), 0);
    /* 16 rows, each one (instance type, region): 16 on-demand + 16 spot offers */
    assert_int_equal(r.rows, 16);
    assert_int_equal(r.skipped_cpu_only, 0);
    assert_int_equal(r.n, 32);
    const struct skypilot_offer *o = find(&r, "a3-edgegpu-8g", "asia-northeast1", 1);
    assert_non_null(o);
    assert_string_equal(o->gpu_model, "H100");
    assert_int_equal(o->gpus, 8);
    assert_true(o->gpu_memory_gb == 80);
    assert_true(o->price == 8.56847);
    o = find(&r, "a2-megagpu-16g", "us-central1", 0);
    assert_int_equal(o->gpus, 16);
    assert_string_equal(o->gpu_model, "A100");
    assert_true(o->price == 8.79698);
    problems_free(&p);
    skypilot_reader_free(&r);
}

static void test_zones_collapse_and_faults(void **state)
{
    (void)state;
    struct skypilot_reader r;
    struct problems p;
    skypilot_reader_init(&r);
    problems_init(&p);
    const char *text =
        "InstanceType,vCPUs,MemoryGiB,AcceleratorName,AcceleratorCount,GpuInfo,Region,"
        "AvailabilityZone,Price,SpotPrice\n"
        "a2-highgpu-1g,12.0,85.0,,,,us-central1,us-central1-a,0.73948,0.29576\n"
        "a2-highgpu-1g,12.0,85.0,,,,us-central1,us-central1-b,0.73948,0.25\n"
        "a2-highgpu-1g,12.0,85.0,,,,us-central1,us-central1-c,0.8,\n"
        "n1-highmem-8,8.0,52.0,,,,us-central1,us-central1-a,0.47,0.1\n"
        "n1-standard-4,4.0,15.0,T4,1.0,,us-central1,us-central1-a,0.54,0.2\n"
        "frac,4.0,15.0,A10,0.5,,us-central1,us-central1-a,0.54,0.2\n"
        "nofig,4.0,15.0,T4,1.0,,us-central1,us-central1-a,,\n"
        "v4-8,4.0,15.0,tpu-v4-8,1.0,,us-central1,us-central1-a,1,\n"
        "v4-16,4.0,15.0,tpu-v4-8,2.0,,us-central1,us-central1-a,1,\n"
        "inf1,4.0,15.0,Inferentia,1.0,,us-central1,us-central1-a,1,\n";
    assert_int_equal(feed_text(&r, text, &p), 0);
    assert_int_equal(r.skipped_cpu_only, 1);
    assert_int_equal(r.skipped_fractional, 1);
    assert_int_equal(r.skipped_unpriced, 1);
    assert_int_equal(r.skipped_unknown_memory, 3);
    assert_int_equal(r.n_unknown_models, 2);
    assert_string_equal(r.unknown_models[0], "tpu-v4-8");
    assert_string_equal(r.unknown_models[1], "Inferentia");
    assert_int_equal(r.n, 4);
    const struct skypilot_offer *o = find(&r, "a2-highgpu-1g", "us-central1", 0);
    assert_int_equal(o->zones, 3);
    assert_true(o->price == 0.73948);
    o = find(&r, "a2-highgpu-1g", "us-central1", 1);
    assert_int_equal(o->zones, 2);
    assert_true(o->price == 0.25);
    o = find(&r, "n1-standard-4", "us-central1", 0);
    assert_true(o->gpu_memory_gb == 16);
    problems_free(&p);
    skypilot_reader_free(&r);

    skypilot_reader_init(&r);
    problems_init(&p);
    text = "InstanceType,AcceleratorName,AcceleratorCount,Price,Region,GpuInfo,SpotPrice\n"
           "x,A100,2.0,abc,r1,,\n"
           "y,A100,two,1,r1,,\n"
           "w,A100,1,1,r1,\"{'Gpus': [{'Name': 'A100', 'Count': 1,}\",\n"
           "v,A100,1,1,r1\n"
           "u,A100,1,-1,r1,,\n"
           ",A100,1,1,r1,,\n";
    assert_int_equal(feed_text(&r, text, &p), 6);
    long want[][2] = {{2, 4}, {3, 3}, {4, 6}, {5, 6}, {6, 4}, {7, 1}};
    for (size_t i = 0; i < 6; i++) {
        assert_int_equal(p.items[i].line, want[i][0]);
        assert_int_equal(p.items[i].column, want[i][1]);
    }
    assert_int_equal(r.n, 0);
    problems_free(&p);
    skypilot_reader_free(&r);

    /* same key, another GPU: a fault at the later line */
    skypilot_reader_init(&r);
    problems_init(&p);
    text = "InstanceType,AcceleratorName,AcceleratorCount,Price,Region\n"
           "x,A100,2,1,r1\nx,H100,2,1,r1\n";
    assert_int_equal(feed_text(&r, text, &p), 1);
    assert_int_equal(p.items[0].line, 3);
    problems_free(&p);
    skypilot_reader_free(&r);

    /* a header without the needed columns stops reading */
    skypilot_reader_init(&r);
    problems_init(&p);
    assert_int_equal(feed_text(&r, "provider,region\nx,y\n", &p), 5); /* five required */
    assert_int_equal(p.items[0].line, 1);
    assert_non_null(strstr(p.items[0].message, "InstanceType"));
    problems_free(&p);
    skypilot_reader_free(&r);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_gpuinfo_literal), cmocka_unit_test(test_gpuinfo_refusals),
        cmocka_unit_test(test_implied),         cmocka_unit_test(test_lambda_excerpt),
        cmocka_unit_test(test_gcp_excerpt),     cmocka_unit_test(test_zones_collapse_and_faults),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
