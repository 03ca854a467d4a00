/*
 * wire_json.c - the JSON helper every tool's --json output needs: a quoted,
 * escaped string.  Names come from the network, so every control character
 * is escaped.
 */
#include "wire.h"

void
wire_json_str(FILE *fp, const char *s)
{
    fputc('"', fp);
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        if (*p == '"' || *p == '\\')
            fprintf(fp, "\\%c", *p);
        else if (*p < 0x20)
            fprintf(fp, "\\u%04x", *p);
        else
            fputc(*p, fp);
    }
    fputc('"', fp);
}
