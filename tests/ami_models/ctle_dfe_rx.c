/*
 * ctle_dfe_rx: an IBIS-AMI receiver, CTLE then DFE, the oracle for phy.serdes.Ctle (issue 36).
 *
 * H(f) = (g1 + j f/f_z) / ((1 + j f/f_p1)(1 + j f/f_p2)) * [(g2 + j f/f_lf) / (1 + j f/f_lf)],
 * g = 10^(dB/20), the bracket only when f_lf_hz > 0 and g_dc2_db != 0 (as Ctle.response).
 * AMI_Init:    every row in place, y = irfft(rfft(x) H(f_k), N), f_k = k / (N sample_interval)
 *              (radix-2 FFT for a power-of-two N, else a direct DFT up to N = 65536); the through
 *              row's pulse p[n] = dt sum_{j<spu} y[n-j] gives peak (first argmax) and the sampling
 *              phase = peak mod spu. The DFE does not act in Init.
 * AMI_GetWave: the CTLE as bilinear-transformed first-order sections (fs = 1/dt, no prewarp), then
 *              the DFE: UI k is sampled at n_k = k spu + phase (absolute sample index), the slicer
 *              sees s_k = c[n_k] - sum_j tap_j d_{k-j}; the samples n_k - spu/2 .. n_k - spu/2 + spu - 1
 *              get the same feedback; clock time n_k dt - bit_time/2 for each n_k in the block
 *              (left out when negative: UI 0 sampled before half a UI, as -1 ends the list).
 * Plain C99 and libm:  cc -O2 -shared -fPIC -std=c99 -o ctle_dfe_rx.so ctle_dfe_rx.c -lm
 */
#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "oracle_params.h"

/* A number parameter of this model (in rx_init: the string s, the message m->msg of size e). */
#define PARAM(name, dflt, v) param_double("ctle_dfe_rx", s, name, dflt, v, m->msg, e)

#define MAX_DFE 8
#define MAX_DFT 65536L

static const double PI = 3.14159265358979323846;

typedef struct {
    double dt, bit_time;
    long spu, peak, phase;
    double g1, g2, fz, fp1, fp2, flf; /* gains (linear) and frequencies (Hz) */
    int use_lf, pam4, dfe_n;
    double vref;                      /* main_cursor_v (0: the Init pulse's peak) */
    double tap[MAX_DFE];
    double b0[3], b1[3], a1[3], z[3]; /* the CTLE sections, transposed direct form II */
    int nsec;
    long n;                           /* absolute index of the next sample */
    long k;                           /* the UI whose feedback applies now */
    double fb;                        /* its feedback sum_j tap_j d_{k-j} */
    double d[MAX_DFE];                /* d[0] = d_{k-1}, d[1] = d_{k-2}, ... */
    char out[1024];
    char msg[512];
} Rx;

static char fail_msg[512];
static char fail_out[] = "(ctle_dfe_rx)";

/* A word parameter (quotes stripped) into buf; dflt when absent. */
static void param_word(const char *s, const char *name, const char *dflt, char *buf, size_t n)
{
    const char *t = find_param(s, name);
    size_t i = 0;
    if (!t) {
        snprintf(buf, n, "%s", dflt);
        return;
    }
    if (*t == '"') t++;
    while (t[i] && t[i] != '"' && t[i] != ')' && !isspace((unsigned char)t[i]) && i + 1 < n) {
        buf[i] = t[i];
        i++;
    }
    buf[i] = '\0';
}

static long fail(void **handle, char **params_out, char **msg, Rx *m)
{
    if (m) {
        snprintf(fail_msg, sizeof fail_msg, "%s", m->msg);
        free(m);
    }
    *handle = NULL;
    *params_out = fail_out;
    *msg = fail_msg;
    return 0;
}

/* Read and check the parameters into m; 0 with m->msg on failure. */
static int read_params(Rx *m, const char *s)
{
    double gdc, gdc2, fz, fp1, fp2, flf, n_dfe;
    char mod[32], name[16];
    size_t e = sizeof m->msg;
    if (!PARAM("g_dc_db", 0.0, &gdc) || !PARAM("g_dc2_db", 0.0, &gdc2)
        || !PARAM("f_z_hz", 21.25e9, &fz) || !PARAM("f_p1_hz", 21.25e9, &fp1)
        || !PARAM("f_p2_hz", 53.125e9, &fp2) || !PARAM("f_lf_hz", 0.0, &flf)
        || !PARAM("dfe_n", 0.0, &n_dfe)
        || !PARAM("main_cursor_v", 0.0, &m->vref))
        return 0;
    if (!(fz > 0 && fp1 > 0 && fp2 > 0 && flf >= 0)) {
        snprintf(m->msg, e, "ctle_dfe_rx: f_z_hz, f_p1_hz and f_p2_hz must be > 0 and f_lf_hz >= 0");
        return 0;
    }
    if (n_dfe != floor(n_dfe) || n_dfe < 0 || n_dfe > MAX_DFE) {
        snprintf(m->msg, e, "ctle_dfe_rx: dfe_n must be an integer from 0 to %d, got %g", MAX_DFE, n_dfe);
        return 0;
    }
    m->dfe_n = (int)n_dfe;
    for (int j = 0; j < MAX_DFE; j++) {
        snprintf(name, sizeof name, "dfe_tap%d", j + 1);
        if (!PARAM(name, 0.0, &m->tap[j])) return 0;
    }
    param_word(s, "modulation", "PAM4", mod, sizeof mod);
    if (strcmp(mod, "PAM4") != 0 && strcmp(mod, "NRZ") != 0) {
        snprintf(m->msg, e, "ctle_dfe_rx: modulation must be \"PAM4\" or \"NRZ\", got \"%s\"", mod);
        return 0;
    }
    m->pam4 = strcmp(mod, "PAM4") == 0;
    m->g1 = pow(10.0, gdc / 20.0);
    m->g2 = pow(10.0, gdc2 / 20.0);
    m->fz = fz;
    m->fp1 = fp1;
    m->fp2 = fp2;
    m->flf = flf;
    m->use_lf = flf > 0 && gdc2 != 0;
    return 1;
}

/* H at f (Hz), as Ctle.response. */
static void ctle_h(const Rx *m, double f, double *hr, double *hi)
{
    double a = f / m->fp1, b = f / m->fp2;
    double nr = m->g1, ni = f / m->fz, dr = 1 - a * b, di = a + b, q = dr * dr + di * di;
    double r = (nr * dr + ni * di) / q, i = (ni * dr - nr * di) / q;
    if (m->use_lf) {
        double c = f / m->flf, pr = r * m->g2 - i * c, pi = r * c + i * m->g2;
        q = 1 + c * c;
        r = (pr + pi * c) / q;
        i = (pi - pr * c) / q;
    }
    *hr = r;
    *hi = i;
}


/* In place radix-2 FFT of (re, im), n a power of two; sign -1 forward, +1 inverse (unscaled). */
static int fft(double *re, double *im, long n, int sign)
{
    if (n < 2) return 1;
    double *c = malloc((size_t)(n / 2) * sizeof(double)), *s = malloc((size_t)(n / 2) * sizeof(double));
    if (!c || !s) {
        free(c);
        free(s);
        return 0;
    }
    for (long k = 0; k < n / 2; k++) {
        c[k] = cos(2 * PI * (double)k / (double)n);
        s[k] = sign * sin(2 * PI * (double)k / (double)n);
    }
    for (long i = 1, j = 0; i < n; i++) { /* bit reversal */
        long bit = n >> 1;
        for (; j & bit; bit >>= 1) j ^= bit;
        j ^= bit;
        if (i < j) {
            double t = re[i]; re[i] = re[j]; re[j] = t;
            t = im[i]; im[i] = im[j]; im[j] = t;
        }
    }
    for (long len = 2; len <= n; len <<= 1) {
        long half = len / 2, step = n / len;
        for (long i = 0; i < n; i += len)
            for (long k = 0; k < half; k++) {
                double wr = c[k * step], wi = s[k * step];
                double *ur = re + i + k, *ui = im + i + k, *vr = ur + half, *vi = ui + half;
                double tr = wr * *vr - wi * *vi, ti = wr * *vi + wi * *vr;
                *vr = *ur - tr;
                *vi = *ui - ti;
                *ur += tr;
                *ui += ti;
            }
    }
    free(c);
    free(s);
    return 1;
}

/* x <- irfft(rfft(x) H, n) by the FFT (n a power of two); re, im: n doubles of work space. */
static int ctle_row_fft(const Rx *m, double *x, long n, double *re, double *im)
{
    for (long i = 0; i < n; i++) {
        re[i] = x[i];
        im[i] = 0.0;
    }
    if (!fft(re, im, n, -1)) return 0;
    for (long k = 0; k <= n / 2; k++) {
        double hr, hi, xr = re[k], xi = im[k];
        ctle_h(m, (double)k / ((double)n * m->dt), &hr, &hi);
        re[k] = xr * hr - xi * hi;
        im[k] = xr * hi + xi * hr;
    }
    im[0] = 0.0;      /* irfft ignores the imaginary parts of DC ... */
    if (n > 1) im[n / 2] = 0.0; /* ... and of the Nyquist bin */
    for (long k = 1; k < (n + 1) / 2; k++) {
        re[n - k] = re[k];
        im[n - k] = -im[k];
    }
    if (!fft(re, im, n, +1)) return 0;
    for (long i = 0; i < n; i++) x[i] = re[i] / (double)n;
    return 1;
}

/* The same by a direct DFT (any n <= MAX_DFT); re, im: n/2 + 1 doubles, c, s: n doubles. */
static void ctle_row_dft(const Rx *m, double *x, long n, double *re, double *im, double *c, double *s)
{
    for (long t = 0; t < n; t++) {
        c[t] = cos(2 * PI * (double)t / (double)n);
        s[t] = sin(2 * PI * (double)t / (double)n);
    }
    for (long k = 0; k <= n / 2; k++) {
        double xr = 0.0, xi = 0.0, hr, hi;
        for (long j = 0; j < n; j++) {
            long t = (k * j) % n;
            xr += x[j] * c[t];
            xi -= x[j] * s[t];
        }
        ctle_h(m, (double)k / ((double)n * m->dt), &hr, &hi);
        re[k] = xr * hr - xi * hi;
        im[k] = xr * hi + xi * hr;
    }
    for (long j = 0; j < n; j++) {
        double acc = re[0];
        for (long k = 1; k <= (n - 1) / 2; k++) {
            long t = (k * j) % n;
            acc += 2.0 * (re[k] * c[t] - im[k] * s[t]);
        }
        if (n % 2 == 0) acc += (j % 2 ? -re[n / 2] : re[n / 2]);
        x[j] = acc / (double)n;
    }
}

/* The CTLE on every row of the impulse matrix; 0 with m->msg on failure. */
static int ctle_rows(Rx *m, double *impulse, long n, long aggressors)
{
    int pow2 = n > 0 && (n & (n - 1)) == 0;
    if (!pow2 && n > MAX_DFT) {
        snprintf(m->msg, sizeof m->msg, "ctle_dfe_rx: row_size %ld is not a power of two and exceeds the"
                 " direct DFT's limit of %ld samples", n, MAX_DFT);
        return 0;
    }
    double *re = malloc((size_t)n * sizeof(double)), *im = malloc((size_t)n * sizeof(double));
    double *c = pow2 ? NULL : malloc((size_t)n * sizeof(double));
    double *s = pow2 ? NULL : malloc((size_t)n * sizeof(double));
    int ok = re && im && (pow2 || (c && s));
    for (long a = 0; ok && a <= aggressors; a++) {
        if (pow2)
            ok = ctle_row_fft(m, impulse + a * n, n, re, im);
        else
            ctle_row_dft(m, impulse + a * n, n, re, im, c, s);
    }
    if (!ok) snprintf(m->msg, sizeof m->msg, "ctle_dfe_rx: out of memory");
    free(re);
    free(im);
    free(c);
    free(s);
    return ok;
}

/* peak = the first argmax of p[n] = dt sum_{j<spu, n-j>=0} y[n-j]; returns p[peak]. */
static double pulse_peak(const double *y, long n, long spu, double dt, long *peak)
{
    double best = 0.0;
    *peak = 0;
    for (long i = 0; i < n; i++) {
        double acc = 0.0;
        for (long j = 0; j < spu && j <= i; j++) acc += y[i - j];
        acc *= dt;
        if (i == 0 || acc > best) {
            best = acc;
            *peak = i;
        }
    }
    return best;
}

/* One bilinear first-order section (g + s/wn)/(1 + s/wd) at K = 2 fs, normalised to a0 = 1. */
static void section(Rx *m, double g, double inv_wn, double wd, double k2fs, int unit_num)
{
    double a0 = 1 + k2fs / wd;
    int s = m->nsec++;
    if (unit_num) { /* 1 / (1 + s/wd) */
        m->b0[s] = 1 / a0;
        m->b1[s] = 1 / a0;
    } else {
        m->b0[s] = (g + k2fs * inv_wn) / a0;
        m->b1[s] = (g - k2fs * inv_wn) / a0;
    }
    m->a1[s] = (1 - k2fs / wd) / a0;
    m->z[s] = 0.0;
}

static void setup_sections(Rx *m)
{
    double k = 2 / m->dt;
    m->nsec = 0;
    section(m, m->g1, 1 / (2 * PI * m->fz), 2 * PI * m->fp1, k, 0);
    section(m, 1, 0, 2 * PI * m->fp2, k, 1);
    if (m->use_lf) section(m, m->g2, 1 / (2 * PI * m->flf), 2 * PI * m->flf, k, 0);
}

static void write_params_out(Rx *m)
{
    size_t e = sizeof m->out;
    int w = snprintf(m->out, e, "(ctle_dfe_rx (peak_index %ld) (sample_phase %ld) (main_cursor_v %.17g)",
                     m->peak, m->phase, m->vref);
    for (int j = 0; j < m->dfe_n; j++) w += snprintf(m->out + w, e - (size_t)w, " (dfe_tap%d %.17g)", j + 1, m->tap[j]);
    snprintf(m->out + w, e - (size_t)w, ")");
}

long AMI_Init(double *impulse_matrix, long row_size, long aggressors, double sample_interval,
              double bit_time, char *AMI_parameters_in, char **AMI_parameters_out,
              void **AMI_memory_handle, char **msg)
{
    Rx *m = calloc(1, sizeof *m);
    if (!m) {
        snprintf(fail_msg, sizeof fail_msg, "ctle_dfe_rx: out of memory");
        return fail(AMI_memory_handle, AMI_parameters_out, msg, NULL);
    }
    if (!read_params(m, AMI_parameters_in)) return fail(AMI_memory_handle, AMI_parameters_out, msg, m);
    double r = bit_time / sample_interval;
    long spu = lround(r);
    if (!(sample_interval > 0) || !(bit_time > 0) || spu < 1 || fabs(r - spu) > 1e-9 * r) {
        snprintf(m->msg, sizeof m->msg, "ctle_dfe_rx: bit_time/sample_interval = %.12g is not an integer", r);
        return fail(AMI_memory_handle, AMI_parameters_out, msg, m);
    }
    if (row_size < 1 || aggressors < 0) {
        snprintf(m->msg, sizeof m->msg, "ctle_dfe_rx: empty impulse matrix (row_size %ld)", row_size);
        return fail(AMI_memory_handle, AMI_parameters_out, msg, m);
    }
    m->dt = sample_interval;
    m->bit_time = bit_time;
    m->spu = spu;
    if (!ctle_rows(m, impulse_matrix, row_size, aggressors)) return fail(AMI_memory_handle, AMI_parameters_out, msg, m);
    double p = pulse_peak(impulse_matrix, row_size, spu, sample_interval, &m->peak);
    m->phase = m->peak % spu;
    if (m->vref == 0) m->vref = p;
    setup_sections(m);
    write_params_out(m);
    snprintf(m->msg, sizeof m->msg, "ctle_dfe_rx: %s, %d DFE taps, sampling phase %ld of %ld",
             m->pam4 ? "PAM4" : "NRZ", m->dfe_n, m->phase, spu);
    *AMI_memory_handle = m;
    *AMI_parameters_out = m->out;
    *msg = m->msg;
    return 1;
}

/* The slicer: normalised level of s (PAM4 thresholds vref * (-2/3, 0, 2/3), NRZ 0). */
static double decide(const Rx *m, double s)
{
    if (!m->pam4) return s < 0 ? -1.0 : 1.0;
    double t = m->vref * (2.0 / 3.0);
    return s < -t ? -1.0 : s < 0 ? -1.0 / 3.0 : s < t ? 1.0 / 3.0 : 1.0;
}

long AMI_GetWave(double *wave, long wave_size, double *clock_times, char **AMI_parameters_out,
                 void *AMI_memory)
{
    Rx *m = AMI_memory;
    long spu = m->spu, h = spu / 2, nclk = 0;
    for (long i = 0; i < wave_size; i++, m->n++) {
        double x = wave[i];
        for (int s = 0; s < m->nsec; s++) {
            double y = m->b0[s] * x + m->z[s];
            m->z[s] = m->b1[s] * x - m->a1[s] * y;
            x = y;
        }
        while (m->n >= (m->k + 1) * spu + m->phase - h) { /* into UI k+1's window */
            m->k++;
            m->fb = 0.0;
            for (int j = 0; j < m->dfe_n; j++) m->fb += m->tap[j] * m->d[j];
        }
        wave[i] = x - m->fb;
        if (m->n == m->k * spu + m->phase) { /* UI k's sampling instant */
            memmove(m->d + 1, m->d, (MAX_DFE - 1) * sizeof(double));
            m->d[0] = decide(m, wave[i]);
            double t = (double)m->n * m->dt - m->bit_time / 2;
            if (clock_times && t >= 0) clock_times[nclk++] = t; /* a negative one would read as the end */
        }
    }
    *AMI_parameters_out = m->out;
    return 1;
}

long AMI_Close(void *AMI_memory)
{
    free(AMI_memory);
    return 1;
}
