/*
 * wire_json.c - the JSON helpers every tool's --json output needs: a
 * quoted, escaped string.  Names and output come from the network and
 * from programs, so every control character is escaped and a byte that
 * is not part of valid UTF-8 becomes U+FFFD: the result is always JSON.
 */
#include "wire.h"

#include <string.h>

int
wire_utf8_ok(const unsigned char *s, size_t len)
{
    for (size_t i = 0; i < len;) {
        unsigned c = s[i];
        size_t k = c < 0x80 ? 1 : (c >> 5) == 6 ? 2 : (c >> 4) == 14 ? 3 : (c >> 3) == 30 ? 4 : 0;

        if (k == 0 || i + k > len)
            return 0;
        for (size_t j = 1; j < k; j++)
            if ((s[i + j] & 0xc0) != 0x80)
                return 0;
        i += k;
    }
    return 1;
}

void
wire_json_bytes(FILE *fp, const char *s, size_t len)
{
    const unsigned char *u = (const unsigned char *)s;

    putc('"', fp);
    for (size_t i = 0; i < len;) {
        unsigned c = u[i];

        if (c >= 0x80) {
            size_t k = (c >> 5) == 6 ? 2 : (c >> 4) == 14 ? 3 : (c >> 3) == 30 ? 4 : 0;

            if (k != 0 && i + k <= len && wire_utf8_ok(u + i, k)) {
                fwrite(u + i, 1, k, fp);
                i += k;
            } else {
                fputs("\\ufffd", fp);
                i++;
            }
            continue;
        }
        switch (c) {
        case '"':
            fputs("\\\"", fp);
            break;
        case '\\':
            fputs("\\\\", fp);
            break;
        case '\n':
            fputs("\\n", fp);
            break;
        case '\t':
            fputs("\\t", fp);
            break;
        case '\r':
            fputs("\\r", fp);
            break;
        default:
            if (c < 0x20 || c == 0x7f)
                fprintf(fp, "\\u%04x", c);
            else
                putc((int)c, fp);
        }
        i++;
    }
    putc('"', fp);
}

void
wire_json_str(FILE *fp, const char *s)
{
    wire_json_bytes(fp, s, strlen(s));
}
