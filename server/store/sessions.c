/* Browser sessions. */
#include "store/sessions.h"

#include <stdio.h>

/* Only for an enabled user; FOR SHARE waits for a disable committing meanwhile, then sees it. */
static const char *SQL_CREATE =
    "INSERT INTO user_session (id_sha256, user_id, expires_at) "
    "SELECT $1, id, now() + make_interval(secs => $3::int) FROM app_user "
    "WHERE id = $2::uuid AND disabled_at IS NULL FOR SHARE "
    "RETURNING json_build_object('id', id, 'user_id', user_id, 'created_at', created_at, "
    "'expires_at', expires_at)";

/* The touch is a data-modifying CTE: it runs even though the SELECT does not read it. */
static const char *SQL_RESOLVE =
    "WITH s AS (SELECT id, user_id, created_at, last_seen_at FROM user_session "
    "  WHERE id_sha256 = $1 AND ended_at IS NULL AND expires_at > now() "
    "  AND last_seen_at > now() - make_interval(secs => $2::int)), "
    "touch AS (UPDATE user_session SET last_seen_at = now() FROM s "
    "  WHERE user_session.id = s.id "
    "  AND s.last_seen_at < now() - make_interval(secs => $3::double precision)) "
    "SELECT json_build_object('user_id', u.id, 'username', u.username, 'role', u.role, "
    "  'session_id', s.id, 'signed_in_s', floor(extract(epoch FROM now() - s.created_at)), "
    "  'teams', coalesce((SELECT json_agg(tm.name ORDER BY tm.name) "
    "  FROM user_team ut JOIN team tm ON tm.id = ut.team_id WHERE ut.user_id = u.id), '[]')) "
    "FROM s JOIN app_user u ON u.id = s.user_id WHERE u.disabled_at IS NULL";

static const char *SQL_END =
    "UPDATE user_session SET ended_at = now() WHERE id_sha256 = $1 AND ended_at IS NULL "
    "RETURNING json_build_object('id', id, 'user_id', user_id, 'ended_at', ended_at)";

static const char *SQL_PURGE =
    "DELETE FROM user_session WHERE expires_at < now() - interval '1 day'";

enum store_status store_session_create(struct store *s, const struct audit_actor *who,
                                       const char *session_sha256, const char *user_id,
                                       int absolute_s, json_t **out)
{
    char secs[16];
    snprintf(secs, sizeof secs, "%d", absolute_s);
    const char *p[] = {session_sha256, user_id, secs};
    return store_write_audited(s, who, "session.create", SQL_CREATE, STORE_ARGS(p), out);
}

enum store_status store_session_resolve(struct store *s, const char *session_sha256, int idle_s,
                                        double touch_s, json_t **out)
{
    char idle[16], touch[32];
    snprintf(idle, sizeof idle, "%d", idle_s);
    snprintf(touch, sizeof touch, "%.3f", touch_s);
    const char *p[] = {session_sha256, idle, touch};
    return store_json(s, SQL_RESOLVE, STORE_ARGS(p), out);
}

enum store_status store_session_end(struct store *s, const struct audit_actor *who,
                                    const char *session_sha256)
{
    const char *p[] = {session_sha256};
    json_t *row = NULL;
    enum store_status st = store_write_audited(s, who, "session.end", SQL_END, STORE_ARGS(p), &row);
    json_decref(row);
    return st;
}

enum store_status store_session_purge(struct store *s)
{
    return store_exec(s, SQL_PURGE, 0, NULL, NULL);
}
