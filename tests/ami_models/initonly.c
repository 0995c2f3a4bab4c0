/* An AMI model with AMI_Init alone (an Init-only model: GetWave_Exists False, no Close).
   It halves the through impulse (row 0) and leaves the aggressors. */
long AMI_Init(double *impulse_matrix, long row_size, long aggressors, double sample_interval, double bit_time,
              char *AMI_parameters_in, char **AMI_parameters_out, void **AMI_memory_handle, char **msg)
{
    long i;
    (void)aggressors; (void)sample_interval; (void)bit_time; (void)AMI_parameters_in;
    for (i = 0; i < row_size; i++)
        impulse_matrix[i] *= 0.5;
    *AMI_parameters_out = "(initonly (gain 0.5))";
    *AMI_memory_handle = 0;
    *msg = 0;
    return 1;
}
