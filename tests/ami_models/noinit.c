/* A shared library with AMI_GetWave and AMI_Close but no AMI_Init: not an AMI model. */
long AMI_GetWave(double *wave, long wave_size, double *clock_times, char **AMI_parameters_out, void *AMI_memory)
{
    (void)wave; (void)wave_size; (void)clock_times; (void)AMI_memory;
    *AMI_parameters_out = 0;
    return 1;
}

long AMI_Close(void *AMI_memory)
{
    (void)AMI_memory;
    return 1;
}
