/* Small, shared validators for names and identifiers. */
#ifndef CAPLEDGER_CORE_VALIDATE_H
#define CAPLEDGER_CORE_VALIDATE_H

#include <stddef.h>

/* 1-64 of [A-Za-z0-9._-], starting with a letter or digit (team names, usernames). */
int team_name_valid(const char *name);
/* The longest workload class label, in bytes. */
#define CLASS_LABEL_MAX 63
/* A workload class label as runs, cluster maps and the tier table carry it (the team's own
 * words: "LS", "Burstable", "production"): 1-CLASS_LABEL_MAX bytes of UTF-8 without control
 * characters, not "unclassified" (the name runs without a class are counted under). Returns
 * NULL when valid, else why not (a sentence without the field's name). */
const char *class_label_fault(const char *s, size_t len);
/* Text a client gives (names, labels, notes), before it is stored: UTF-8 (NUL refused) without
 * control characters — C0 (U+0000–U+001F), DEL and C1 (U+0080–U+009F): ESC, BEL, CSI and the
 * rest would act on the terminal of whoever later prints the text (a name that retitles or
 * clears a team member's terminal). multiline: line feeds and tabs are text too (notes,
 * rationales, descriptions), never a carriage return. Returns NULL when the text is fine, else
 * why not (a phrase without the field's name, e.g. "must not contain control characters
 * (U+001B at byte 5)"), written into why. */
const char *text_fault(const char *s, size_t len, int multiline, char *why, size_t why_size);
/* The user roles, NULL-terminated: "admin", "owner", "team", "auditor". */
extern const char *const USER_ROLES[];
/* 1 for a user role: one of USER_ROLES. */
int user_role_valid(const char *role);
/* The value of one hex digit (either case), or -1. */
int hex_digit_value(char c);
/* Exactly n lower-case hex digits (hashes and key ids: SHA-256 is n = 64). */
int lower_hex_valid(const char *s, size_t n);
/* A canonical lower- or upper-case UUID text (8-4-4-4-12 hex). */
int uuid_valid(const char *s);

#endif
