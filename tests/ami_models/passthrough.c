/* An AMI model that changes nothing: AMI_Init leaves the impulse matrix, AMI_GetWave leaves
   the wave and writes a clock time k*UI for each UI that starts in the block (k counted from
   the first sample of the first block). AMI_parameters_out: the parameters it was given at
   Init, and "(passthrough (blocks N) (samples M))" after each GetWave. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
    double bit_time;
    long samples_per_bit;
    long samples;   /* samples seen by GetWave so far */
    long blocks;
    char *params_in;
    char out[128];
} state;

long AMI_Init(double *impulse_matrix, long row_size, long aggressors, double sample_interval, double bit_time,
              char *AMI_parameters_in, char **AMI_parameters_out, void **AMI_memory_handle, char **msg)
{
    state *s = calloc(1, sizeof *s);
    (void)impulse_matrix; (void)row_size; (void)aggressors;
    s->bit_time = bit_time;
    s->samples_per_bit = lround(bit_time / sample_interval);
    if (s->samples_per_bit < 1)
        s->samples_per_bit = 1;
    s->params_in = malloc(strlen(AMI_parameters_in) + 1);
    strcpy(s->params_in, AMI_parameters_in);
    *AMI_parameters_out = s->params_in;
    *AMI_memory_handle = s;
    *msg = "passthrough: impulse left as it is";
    return 1;
}

long AMI_GetWave(double *wave, long wave_size, double *clock_times, char **AMI_parameters_out, void *AMI_memory)
{
    state *s = AMI_memory;
    long n = s->samples_per_bit, k = 0;
    long g = (s->samples + n - 1) / n * n; /* the first UI start in this block */
    (void)wave;
    for (; g < s->samples + wave_size; g += n)
        clock_times[k++] = (double)(g / n) * s->bit_time;
    s->samples += wave_size;
    s->blocks += 1;
    snprintf(s->out, sizeof s->out, "(passthrough (blocks %ld) (samples %ld))", s->blocks, s->samples);
    *AMI_parameters_out = s->out;
    return 1;
}

long AMI_Close(void *AMI_memory)
{
    state *s = AMI_memory;
    free(s->params_in);
    free(s);
    return 1;
}
