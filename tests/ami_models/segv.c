/* An AMI model that dereferences NULL where its parameter "where" says: (where init),
   (where getwave) or (where close); (where exit) ends its process with exit(3) in GetWave. */
#include <stdlib.h>
#include "ami_test.h"

static char where[16];

long AMI_Init(double *impulse_matrix, long row_size, long aggressors, double sample_interval, double bit_time,
              char *AMI_parameters_in, char **AMI_parameters_out, void **AMI_memory_handle, char **msg)
{
    (void)impulse_matrix; (void)row_size; (void)aggressors; (void)sample_interval; (void)bit_time;
    ami_word(AMI_parameters_in, "where", where, sizeof where);
    *AMI_parameters_out = NULL;
    *AMI_memory_handle = NULL;
    *msg = NULL;
    if (strcmp(where, "init") == 0)
        ami_segv();
    return 1;
}

long AMI_GetWave(double *wave, long wave_size, double *clock_times, char **AMI_parameters_out, void *AMI_memory)
{
    (void)wave; (void)wave_size; (void)clock_times; (void)AMI_memory;
    *AMI_parameters_out = NULL;
    if (strcmp(where, "getwave") == 0)
        ami_segv();
    if (strcmp(where, "exit") == 0)
        exit(3);
    return 1;
}

long AMI_Close(void *AMI_memory)
{
    (void)AMI_memory;
    if (strcmp(where, "close") == 0)
        ami_segv();
    return 1;
}
