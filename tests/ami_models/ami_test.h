/* What the test AMI models share: reading one word of the AMI_parameters_in string, and
   a NULL dereference the compiler cannot see through (a real SIGSEGV, not a trap). */
#include <stdio.h>
#include <string.h>

/* The value after "(<name> " in params (quotes dropped) into out (size bytes);
   1 when found, else 0 and out empty. */
static int ami_word(const char *params, const char *name, char *out, size_t size)
{
    char key[64];
    const char *p;
    size_t i = 0;
    out[0] = '\0';
    if (params == NULL)
        return 0;
    snprintf(key, sizeof key, "(%s ", name);
    p = strstr(params, key);
    if (p == NULL)
        return 0;
    p += strlen(key);
    while (*p == ' ' || *p == '"')
        p++;
    while (*p && *p != ')' && *p != '"' && *p != ' ' && i + 1 < size)
        out[i++] = *p++;
    out[i] = '\0';
    return 1;
}

static inline void ami_segv(void)
{
    volatile int *volatile p = NULL;
    *p = 1;
}
