/* Text a server (or a file) gave, written to a terminal: every control character — C0 but the
 * line feed where lines are kept, DEL, C1 (U+0080–U+009F) — and every byte that is not UTF-8
 * is written escaped (\u001b, \x9b), so a name holding ESC or BEL can neither retitle, clear
 * nor rewrite the terminal of whoever runs the command. JSON stays JSON: a control character
 * inside a string becomes its own \u escape. */
#ifndef CAPLEDGER_CMD_TERMTEXT_H
#define CAPLEDGER_CMD_TERMTEXT_H

#include <stddef.h>
#include <stdio.h>

/* len bytes of s; keep_lines: '\n' and '\t' are written as they are (a whole reply body). */
void term_write(FILE *out, const char *s, size_t len, int keep_lines);
/* A NUL-terminated field (one line): NULL writes `absent`. */
void term_puts(FILE *out, const char *s, const char *absent);
/* The same into buf (cut to size − 1 bytes, NUL-terminated); returns buf. */
char *term_text(char *buf, size_t size, const char *s);

#endif
