/* Small, shared validators for names and identifiers. */
#ifndef CAPLEDGER_CORE_VALIDATE_H
#define CAPLEDGER_CORE_VALIDATE_H

/* 1-64 of [A-Za-z0-9._-], starting with a letter or digit (team names, usernames). */
int team_name_valid(const char *name);
/* 1 for a user role: "admin", "owner", "team" or "auditor". */
int user_role_valid(const char *role);
/* A canonical lower- or upper-case UUID text (8-4-4-4-12 hex). */
int uuid_valid(const char *s);

#endif
