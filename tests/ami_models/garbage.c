/* An AMI model that returns garbage as its parameter "mode" says:
   fail      AMI_Init returns 0 with a two-line message;
   inf       AMI_Init puts an infinite sample in the impulse;
   longmsg   AMI_Init succeeds with a 3 MB message (the host copies out at most 1 MB);
   nan       AMI_GetWave puts a NaN in the wave;
   wavefail  AMI_GetWave returns 0;
   clock     AMI_GetWave writes clock times that go back (1e-9, then 0.5e-9);
   clocknan  AMI_GetWave writes a NaN clock time;
   clockback each AMI_GetWave writes clock times from 0 again (they go back across blocks);
   closefail AMI_Close returns 0;
   longout   AMI_GetWave succeeds with a 5000-character AMI_parameters_out (not garbage: long). */
#include <math.h>
#include <stdlib.h>
#include "ami_test.h"

static char mode[16];
static char *long_msg;
static char long_out[5001];

long AMI_Init(double *impulse_matrix, long row_size, long aggressors, double sample_interval, double bit_time,
              char *AMI_parameters_in, char **AMI_parameters_out, void **AMI_memory_handle, char **msg)
{
    (void)aggressors; (void)sample_interval; (void)bit_time;
    ami_word(AMI_parameters_in, "mode", mode, sizeof mode);
    *AMI_parameters_out = "(garbage)";
    *AMI_memory_handle = NULL;
    *msg = "garbage: fine";
    if (strcmp(mode, "fail") == 0) {
        *msg = "garbage: asked to fail\nsecond line";
        return 0;
    }
    if (strcmp(mode, "inf") == 0)
        impulse_matrix[row_size / 2] = INFINITY;
    if (strcmp(mode, "longmsg") == 0) {
        size_t n = 3u << 20;
        free(long_msg);
        long_msg = malloc(n + 1);
        memset(long_msg, 'x', n);
        long_msg[n] = '\0';
        *msg = long_msg;
    }
    return 1;
}

long AMI_GetWave(double *wave, long wave_size, double *clock_times, char **AMI_parameters_out, void *AMI_memory)
{
    (void)AMI_memory;
    *AMI_parameters_out = NULL;
    if (strcmp(mode, "nan") == 0)
        wave[wave_size - 1] = NAN;
    if (strcmp(mode, "wavefail") == 0)
        return 0;
    if (strcmp(mode, "longout") == 0) {
        memset(long_out, 'y', sizeof long_out - 1);
        *AMI_parameters_out = long_out;
    }
    if (strcmp(mode, "clock") == 0) {
        clock_times[0] = 1e-9;
        clock_times[1] = 0.5e-9;
    }
    if (strcmp(mode, "clocknan") == 0) {
        clock_times[0] = 1e-9;
        clock_times[1] = NAN;
    }
    if (strcmp(mode, "clockback") == 0) {
        clock_times[0] = 0.0;
        clock_times[1] = 1e-9;
    }
    return 1;
}

long AMI_Close(void *AMI_memory)
{
    (void)AMI_memory;
    free(long_msg);
    long_msg = NULL;
    return strcmp(mode, "closefail") == 0 ? 0 : 1;
}
