/* Terminal-safe output of server-provided text; see termtext.h. */
#include "cmd/termtext.h"

#include <string.h>

#include "core/formats/linebuf.h"

void term_write(FILE *out, const char *s, size_t len, int keep_lines)
{
    const unsigned char *u = (const unsigned char *)s;
    size_t i = 0;
    while (i < len) {
        /* the longest run that needs no escape: valid UTF-8, no control character */
        size_t run = i;
        while (run < len) {
            unsigned char c = u[run];
            if (c < 0x20 || c == 0x7f) {
                if (keep_lines && (c == '\n' || c == '\t')) {
                    run++;
                    continue;
                }
                break;
            }
            if (c < 0x80) {
                run++;
                continue;
            }
            size_t n = linebuf_utf8_check(u + run, len - run < 4 ? len - run : 4);
            size_t want = c >= 0xf0 ? 4 : c >= 0xe0 ? 3 : 2;
            if (n < want || (c == 0xc2 && u[run + 1] < 0xa0)) /* invalid, or C1 */
                break;
            run += want;
        }
        fwrite(u + i, 1, run - i, out);
        if (run >= len)
            break;
        unsigned char c = u[run];
        if (c == 0xc2 && run + 1 < len && u[run + 1] >= 0x80 && u[run + 1] < 0xa0) {
            fprintf(out, "\\u%04x", u[run + 1]);
            i = run + 2;
        } else if (c < 0x80) {
            fprintf(out, "\\u%04x", c);
            i = run + 1;
        } else {
            fprintf(out, "\\x%02x", c);
            i = run + 1;
        }
    }
}

void term_puts(FILE *out, const char *s, const char *absent)
{
    if (!s)
        s = absent ? absent : "";
    term_write(out, s, strlen(s), 0);
}

char *term_text(char *buf, size_t size, const char *s)
{
    if (!size)
        return buf;
    buf[0] = '\0';
    FILE *out = fmemopen(buf, size, "w");
    if (!out)
        return buf;
    setvbuf(out, NULL, _IONBF, 0);
    term_puts(out, s, "");
    fclose(out);
    buf[size - 1] = '\0';
    return buf;
}
