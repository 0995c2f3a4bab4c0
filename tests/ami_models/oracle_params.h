/* The oracle models' reader of the AMI_parameters_in string "(root (name value) ...)":
   a tolerant search for "(name" and the value after it (the strings our .ami writer gives). */
#ifndef ORACLE_PARAMS_H
#define ORACLE_PARAMS_H
#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The value text after "(name" + whitespace in the parameter string, or NULL when absent. */
static const char *find_param(const char *s, const char *name)
{
    size_t len = strlen(name);
    for (const char *p = s ? strchr(s, '(') : NULL; p; p = strchr(p + 1, '(')) {
        const char *q = p + 1;
        while (isspace((unsigned char)*q)) q++;
        if (strncmp(q, name, len) == 0 && isspace((unsigned char)q[len])) {
            q += len;
            while (isspace((unsigned char)*q)) q++;
            return q;
        }
    }
    return NULL;
}

/* A number parameter: its value, dflt when absent; 0 (and "<model>: parameter <name> is not a
   finite number" in err) when it is not one. */
static int param_double(const char *model, const char *s, const char *name, double dflt, double *v, char *err,
                        size_t n)
{
    const char *t = find_param(s, name);
    char *end;
    *v = dflt;
    if (!t) return 1;
    *v = strtod(t, &end);
    if (end == t || !isfinite(*v)) {
        snprintf(err, n, "%s: parameter %s is not a finite number", model, name);
        return 0;
    }
    return 1;
}
#endif
