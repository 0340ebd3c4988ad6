/* A parsed run as a line of COPY text (run_text.h). */
#include "run_text.h"

void run_copy_line(const struct run *r, struct pgcopy_buf *out)
{
    pgcopy_text(out, r->external_id);
    pgcopy_tab(out);
    pgcopy_text(out, r->team[0] ? r->team : NULL);
    pgcopy_tab(out);
    pgcopy_text(out, r->user[0] ? r->user : NULL);
    pgcopy_tab(out);
    pgcopy_text(out, r->workload_class[0] ? r->workload_class : NULL);
    pgcopy_tab(out);
    pgcopy_text(out, r->partition[0] ? r->partition : NULL);
    pgcopy_tab(out);
    pgcopy_text(out, r->gpu_model[0] ? r->gpu_model : NULL);
    pgcopy_tab(out);
    pgcopy_time_ms(out, r->submitted_at_s * 1000, r->has_submitted);
    pgcopy_tab(out);
    pgcopy_time_ms(out, r->started_at_s * 1000, r->has_started);
    pgcopy_tab(out);
    pgcopy_time_ms(out, r->ended_at_s * 1000, r->has_ended);
    pgcopy_tab(out);
    pgcopy_double(out, r->gpus);
    pgcopy_tab(out);
    pgcopy_text(out, run_state_name(r->state));
    pgcopy_tab(out);
    pgcopy_text(out, r->exit_code[0] ? r->exit_code : NULL);
    pgcopy_tab(out);
    pgcopy_double(out, r->gpu_utilization);
    pgcopy_end_row(out);
}
