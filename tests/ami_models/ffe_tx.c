/*
 * ffe_tx: an IBIS-AMI transmitter FFE, the oracle for phy.serdes.TxFfe (issue 36).
 *
 * Taps c = (tap_pre2, tap_pre1, tap_main, tap_post1, tap_post2, tap_post3), used as given.
 * AMI_Init:    every row of the impulse matrix in place,
 *              out[n] = sum_i c_i x[n - (i - 2) spu]  (zero outside the row),
 *              the same sums in the same order as TxFfe(c, main=2, normalise=False).apply(x, spu).
 * AMI_GetWave: the causal FIR out[n] = sum_i c_i x[n - i spu], input history carried across calls
 *              (the Init response delayed by 2 UI); clock_times left untouched.
 * Plain C99 and libm:  cc -O2 -shared -fPIC -std=c99 -o ffe_tx.so ffe_tx.c -lm
 */
#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "oracle_params.h"

#define NTAPS 6
#define MAIN 2

typedef struct {
    double c[NTAPS];
    long spu;        /* samples per UI */
    long hist_len;   /* (NTAPS - 1) * spu past input samples */
    double *hist;    /* the last hist_len inputs, oldest first */
    char out[512];   /* AMI_parameters_out */
    char msg[512];   /* the message of AMI_Init */
} FfeTx;

static char fail_msg[512];
static char fail_out[] = "(ffe_tx)";

static long fail(void **handle, char **params_out, char **msg, FfeTx *m)
{
    if (m) {
        snprintf(fail_msg, sizeof fail_msg, "%s", m->msg);
        free(m->hist);
        free(m);
    }
    *handle = NULL;
    *params_out = fail_out;
    *msg = fail_msg;
    return 0;
}

/* out = sum_i c_i x[n - (i - MAIN) spu] over one row (x and out distinct). */
static void ffe_row(const double *c, long spu, const double *x, double *out, long size)
{
    for (long n = 0; n < size; n++) {
        double acc = 0.0;
        for (int i = 0; i < NTAPS; i++) {
            long j = n - (long)(i - MAIN) * spu;
            if (j >= 0 && j < size) acc += c[i] * x[j];
        }
        out[n] = acc;
    }
}

long AMI_Init(double *impulse_matrix, long row_size, long aggressors, double sample_interval,
              double bit_time, char *AMI_parameters_in, char **AMI_parameters_out,
              void **AMI_memory_handle, char **msg)
{
    static const char *names[NTAPS] = {"tap_pre2", "tap_pre1", "tap_main", "tap_post1", "tap_post2",
                                       "tap_post3"};
    FfeTx *m = calloc(1, sizeof *m);
    if (!m) {
        snprintf(fail_msg, sizeof fail_msg, "ffe_tx: out of memory");
        return fail(AMI_memory_handle, AMI_parameters_out, msg, NULL);
    }
    for (int i = 0; i < NTAPS; i++)
        if (!param_double("ffe_tx", AMI_parameters_in, names[i], i == MAIN ? 1.0 : 0.0, &m->c[i], m->msg, sizeof m->msg))
            return fail(AMI_memory_handle, AMI_parameters_out, msg, m);
    double r = bit_time / sample_interval;
    long spu = lround(r);
    if (!(sample_interval > 0) || !(bit_time > 0) || spu < 1 || fabs(r - spu) > 1e-9 * r) {
        snprintf(m->msg, sizeof m->msg, "ffe_tx: bit_time/sample_interval = %.12g is not an integer", r);
        return fail(AMI_memory_handle, AMI_parameters_out, msg, m);
    }
    m->spu = spu;
    m->hist_len = (NTAPS - 1) * spu;
    m->hist = calloc((size_t)m->hist_len, sizeof(double));
    double *row = malloc((size_t)(row_size > 0 ? row_size : 1) * sizeof(double));
    if (!m->hist || !row) {
        free(row);
        snprintf(m->msg, sizeof m->msg, "ffe_tx: out of memory");
        return fail(AMI_memory_handle, AMI_parameters_out, msg, m);
    }
    for (long a = 0; a <= aggressors; a++) {
        double *x = impulse_matrix + a * row_size;
        memcpy(row, x, (size_t)row_size * sizeof(double));
        ffe_row(m->c, spu, row, x, row_size);
    }
    free(row);
    snprintf(m->msg, sizeof m->msg, "ffe_tx: taps %g %g %g %g %g %g, %ld samples per UI", m->c[0], m->c[1],
             m->c[2], m->c[3], m->c[4], m->c[5], spu);
    snprintf(m->out, sizeof m->out, "(ffe_tx (samples_per_ui %ld))", spu);
    *AMI_memory_handle = m;
    *AMI_parameters_out = m->out;
    *msg = m->msg;
    return 1;
}

long AMI_GetWave(double *wave, long wave_size, double *clock_times, char **AMI_parameters_out,
                 void *AMI_memory)
{
    FfeTx *m = AMI_memory;
    long h = m->hist_len;
    (void)clock_times;
    if (wave_size <= 0) {
        *AMI_parameters_out = m->out;
        return 1;
    }
    double *ext = malloc((size_t)(h + wave_size) * sizeof(double)); /* history then this block */
    if (!ext) return 0;
    memcpy(ext, m->hist, (size_t)h * sizeof(double));
    memcpy(ext + h, wave, (size_t)wave_size * sizeof(double));
    for (long n = 0; n < wave_size; n++) {
        double acc = 0.0;
        for (int i = 0; i < NTAPS; i++) acc += m->c[i] * ext[h + n - i * m->spu];
        wave[n] = acc;
    }
    memcpy(m->hist, ext + wave_size, (size_t)h * sizeof(double));
    free(ext);
    *AMI_parameters_out = m->out;
    return 1;
}

long AMI_Close(void *AMI_memory)
{
    FfeTx *m = AMI_memory;
    if (m) {
        free(m->hist);
        free(m);
    }
    return 1;
}
