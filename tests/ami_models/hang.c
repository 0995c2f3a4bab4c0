/* An AMI model that never returns where its parameter "mode" says: (mode init),
   (mode getwave) or (mode close). */
#include "ami_test.h"

static char mode[16];

static void spin(void)
{
    volatile int forever = 1;
    while (forever)
        ;
}

long AMI_Init(double *impulse_matrix, long row_size, long aggressors, double sample_interval, double bit_time,
              char *AMI_parameters_in, char **AMI_parameters_out, void **AMI_memory_handle, char **msg)
{
    (void)impulse_matrix; (void)row_size; (void)aggressors; (void)sample_interval; (void)bit_time;
    ami_word(AMI_parameters_in, "mode", mode, sizeof mode);
    *AMI_parameters_out = NULL;
    *AMI_memory_handle = NULL;
    *msg = NULL;
    if (strcmp(mode, "init") == 0)
        spin();
    return 1;
}

long AMI_GetWave(double *wave, long wave_size, double *clock_times, char **AMI_parameters_out, void *AMI_memory)
{
    (void)wave; (void)wave_size; (void)clock_times; (void)AMI_memory;
    *AMI_parameters_out = NULL;
    if (strcmp(mode, "getwave") == 0)
        spin();
    return 1;
}

long AMI_Close(void *AMI_memory)
{
    (void)AMI_memory;
    if (strcmp(mode, "close") == 0)
        spin();
    return 1;
}
