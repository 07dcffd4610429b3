/* test_gpumetrics.c — GPU sampling backends without a GPU: the test-file
 * backend, NVML through a fake library loaded by dlopen (when the build made
 * one), the unavailable state, profiles and Slurm's GPU index lists. */
#include "testutil.h"

#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "lucid/gpumetrics.h"

static void test_file_backend_reads_last_sample(void **state)
{
    (void)state;
    char dir[512], path[600];
    test_tmpdir(dir, sizeof dir, "gpumetrics_file");
    lucid_error err = {{0}};
    lucid_gpumetrics *metrics = lucid_gpumetrics_open_test_file(dir, &err);
    assert_non_null(metrics);
    assert_int_equal(lucid_gpumetrics_backend(metrics), LUCID_GPUMETRICS_TEST_FILE);
    assert_string_equal(lucid_gpumetrics_backend_name(metrics), "test-file");
    assert_non_null(strstr(lucid_gpumetrics_describe(metrics), "not real GPUs"));

    lucid_gpu_sample sample;
    assert_int_equal(lucid_gpumetrics_sample(metrics, "42", NULL, 0, &sample, &err), -1);
    assert_non_null(strstr(err.msg, "42.gpu: no samples yet"));

    test_write_file(path, sizeof path, dir, "42.gpu", "# util mem memutil\n\n10 2048 5\n87.5 3000 41\n");
    assert_int_equal(lucid_gpumetrics_sample(metrics, "42", NULL, 0, &sample, &err), 0);
    assert_true(sample.gpu_util_pct == 87.5);
    assert_true(sample.gmem_used_mib == 3000);
    assert_true(sample.gmem_util_pct == 41);

    test_write_file(path, sizeof path, dir, "43.gpu", "10 2048 5\n101 1 1\n");
    assert_int_equal(lucid_gpumetrics_sample(metrics, "43", NULL, 0, &sample, &err), -1);
    char want[700];
    snprintf(want, sizeof want, "%s/43.gpu:2: expected \"gpu_util_pct gmem_used_mib gmem_util_pct\"", dir);
    assert_string_equal(err.msg, want);
    test_write_file(path, sizeof path, dir, "44.gpu", "10 2048\n");
    assert_int_equal(lucid_gpumetrics_sample(metrics, "44", NULL, 0, &sample, &err), -1);
    assert_int_equal(lucid_gpumetrics_sample(metrics, "../x", NULL, 0, &sample, &err), -1);
    assert_string_equal(err.msg, "job id '../x' is not a file name");
    lucid_gpumetrics_close(metrics);

    assert_null(lucid_gpumetrics_open_test_file("/nonexistent/dir", &err));
    assert_string_equal(err.msg, "metrics test backend: /nonexistent/dir is not a directory");
}

static void missing_nvml_reports_unavailable(void **state)
{
    (void)state;
    lucid_error err = {{0}};
    assert_null(lucid_gpumetrics_open_nvml("/nonexistent/libnvidia-ml.so.1", &err));
    assert_non_null(strstr(err.msg, "metrics unavailable: cannot load /nonexistent/libnvidia-ml.so.1"));

    lucid_gpumetrics *metrics = lucid_gpumetrics_open_unavailable(err.msg);
    assert_int_equal(lucid_gpumetrics_backend(metrics), LUCID_GPUMETRICS_UNAVAILABLE);
    assert_string_equal(lucid_gpumetrics_backend_name(metrics), "unavailable");
    lucid_gpu_sample sample;
    int gpu = 0;
    lucid_error sample_err = {{0}};
    assert_int_equal(lucid_gpumetrics_sample(metrics, "1", &gpu, 1, &sample, &sample_err), -1);
    assert_string_equal(sample_err.msg, err.msg);
    lucid_gpumetrics_close(metrics);

    /* A library without NVML's symbols is refused by name. */
    assert_null(lucid_gpumetrics_open_nvml("libm.so.6", &err));
    assert_string_equal(err.msg, "metrics unavailable: NVML lacks nvmlInit_v2");
}

static void auto_prefers_test_dir(void **state)
{
    (void)state;
    char dir[512];
    test_tmpdir(dir, sizeof dir, "gpumetrics_auto");
    lucid_gpumetrics *metrics = lucid_gpumetrics_open_auto(dir);
    assert_string_equal(lucid_gpumetrics_backend_name(metrics), "test-file");
    lucid_gpumetrics_close(metrics);
    metrics = lucid_gpumetrics_open_auto(NULL);
    /* nvml where a driver exists, otherwise unavailable: never NULL. */
    assert_non_null(metrics);
    assert_int_not_equal(lucid_gpumetrics_backend(metrics), LUCID_GPUMETRICS_TEST_FILE);
    lucid_gpumetrics_close(metrics);
}

static void fake_nvml_is_sampled_per_job_gpus(void **state)
{
    (void)state;
    char library[600];
    snprintf(library, sizeof library, "%s/tests/libfake_nvml.so", LUCID_BINARY_DIR);
    if (access(library, R_OK) != 0)
        skip();
    lucid_error err = {{0}};
    lucid_gpumetrics *metrics = lucid_gpumetrics_open_nvml(library, &err);
    assert_non_null(metrics);
    assert_string_equal(lucid_gpumetrics_backend_name(metrics), "nvml");
    assert_non_null(strstr(lucid_gpumetrics_describe(metrics), "2 GPUs"));
    lucid_gpu_sample sample;
    int both[] = {0, 1};
    assert_int_equal(lucid_gpumetrics_sample(metrics, "7", both, 2, &sample, &err), 0);
    assert_true(sample.gpu_util_pct == 15.0);
    assert_true(sample.gmem_util_pct == 7.5);
    assert_true(sample.gmem_used_mib == 2048.0);
    int second = 1;
    assert_int_equal(lucid_gpumetrics_sample(metrics, "7", &second, 1, &sample, &err), 0);
    assert_true(sample.gpu_util_pct == 20.0);
    int absent = 2;
    assert_int_equal(lucid_gpumetrics_sample(metrics, "7", &absent, 1, &sample, &err), -1);
    assert_string_equal(err.msg, "GPU 2: not present (this node has 2)");
    assert_int_equal(lucid_gpumetrics_sample(metrics, "7", NULL, 0, &sample, &err), -1);
    assert_string_equal(err.msg, "job 7 holds no GPU to sample");
    lucid_gpumetrics_close(metrics);
}

static void profile_is_mean_and_peak(void **state)
{
    (void)state;
    lucid_gpu_profile profile = {0};
    lucid_gpu_sample empty = lucid_gpu_profile_result(&profile);
    assert_true(empty.gpu_util_pct == 0 && empty.gmem_used_mib == 0);
    lucid_gpu_sample a = {90, 1000, 40}, b = {60, 3000, 20}, c = {30, 2000, 0};
    lucid_gpu_profile_add(&profile, &a);
    lucid_gpu_profile_add(&profile, &b);
    lucid_gpu_profile_add(&profile, &c);
    lucid_gpu_sample result = lucid_gpu_profile_result(&profile);
    assert_int_equal(profile.samples, 3);
    assert_true(result.gpu_util_pct == 60);
    assert_true(result.gmem_util_pct == 20);
    assert_true(result.gmem_used_mib == 3000);
}

static void slurm_gpu_lists_parse(void **state)
{
    (void)state;
    int gpus[16];
    lucid_error err = {{0}};
    assert_int_equal(lucid_gpu_parse_indices("0-2,5", gpus, 16, &err), 4);
    assert_int_equal(gpus[0], 0);
    assert_int_equal(gpus[2], 2);
    assert_int_equal(gpus[3], 5);
    assert_int_equal(lucid_gpu_parse_indices("gpu:3(IDX:4-6)", gpus, 16, &err), 3);
    assert_int_equal(gpus[0], 4);
    assert_int_equal(gpus[2], 6);
    assert_int_equal(lucid_gpu_parse_indices("7", gpus, 16, &err), 1);
    assert_int_equal(lucid_gpu_parse_indices("", gpus, 16, &err), 0);
    assert_int_equal(lucid_gpu_parse_indices("0-7", gpus, 4, &err), -1);
    assert_string_equal(err.msg, "GPU list '0-7': more than 4 GPUs");
    assert_int_equal(lucid_gpu_parse_indices("3-1", gpus, 16, &err), -1);
    assert_string_equal(err.msg, "GPU list '3-1': bad range");
    assert_int_equal(lucid_gpu_parse_indices("1,,2", gpus, 16, &err), -1);
    assert_int_equal(lucid_gpu_parse_indices("1;2", gpus, 16, &err), -1);
    assert_string_equal(err.msg, "GPU list '1;2': unexpected ';'");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_file_backend_reads_last_sample),
        cmocka_unit_test(missing_nvml_reports_unavailable),
        cmocka_unit_test(auto_prefers_test_dir),
        cmocka_unit_test(fake_nvml_is_sampled_per_job_gpus),
        cmocka_unit_test(profile_is_mean_and_peak),
        cmocka_unit_test(slurm_gpu_lists_parse),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
