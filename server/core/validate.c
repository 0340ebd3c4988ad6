#include "core/validate.h"

#include "core/formats/linebuf.h"

#include <ctype.h>
#include <stdio.h>
#include <string.h>

int team_name_valid(const char *name)
{
    size_t len = strlen(name);
    if (len < 1 || len > 64 || !isalnum((unsigned char)name[0]))
        return 0;
    for (size_t i = 0; i < len; i++) {
        unsigned char c = (unsigned char)name[i];
        if (!(isalnum(c) || c == '.' || c == '_' || c == '-') || c > 127)
            return 0;
    }
    return 1;
}

const char *text_fault(const char *s, size_t len, int multiline, char *why, size_t why_size)
{
    if (linebuf_utf8_check((const unsigned char *)s, len) != len) {
        snprintf(why, why_size, "must be UTF-8 without NUL");
        return why;
    }
    for (size_t i = 0; i < len; i++) {
        unsigned char c = (unsigned char)s[i];
        unsigned cp = c;
        if (c == 0xc2 && i + 1 < len && (unsigned char)s[i + 1] < 0xa0)
            cp = (unsigned char)s[i + 1]; /* U+0080–U+009F, two bytes */
        else if (c >= 0x20 && c != 0x7f)
            continue;
        if (multiline && (c == '\n' || c == '\t'))
            continue;
        snprintf(why, why_size, "must not contain control characters (U+%04X at byte %zu)%s", cp,
                 i + 1, multiline ? "; line feeds and tabs are allowed" : "");
        return why;
    }
    return NULL;
}

const char *class_label_fault(const char *s, size_t len)
{
    char why[96];
    if (len == 0)
        return "must not be empty";
    if (len > CLASS_LABEL_MAX)
        return "must be at most 63 bytes";
    if (linebuf_utf8_check((const unsigned char *)s, len) != len)
        return "must be UTF-8 without NUL";
    if (text_fault(s, len, 0, why, sizeof why))
        return "must not contain control characters";
    if (len == 12 && memcmp(s, "unclassified", 12) == 0)
        return "'unclassified' names runs without a class and cannot be a label";
    return NULL;
}

int uuid_valid(const char *s)
{
    if (strlen(s) != 36)
        return 0;
    for (int i = 0; i < 36; i++) {
        if (i == 8 || i == 13 || i == 18 || i == 23) {
            if (s[i] != '-')
                return 0;
        } else if (!isxdigit((unsigned char)s[i])) {
            return 0;
        }
    }
    return 1;
}

const char *const USER_ROLES[] = {"admin", "owner", "team", "auditor", NULL};

int user_role_valid(const char *role)
{
    for (const char *const *r = USER_ROLES; *r; r++)
        if (strcmp(*r, role) == 0)
            return 1;
    return 0;
}

int lower_hex_valid(const char *s, size_t n)
{
    if (strlen(s) != n)
        return 0;
    for (size_t i = 0; i < n; i++)
        if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f')))
            return 0;
    return 1;
}

int hex_digit_value(char c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    return -1;
}
