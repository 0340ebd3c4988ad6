/* Test oracle: a whole bundle through the streamed checks (see bundle_verify.h). */
#include "oracle/bundle_verify.h"

#include <string.h>

#include "core/jcs.h"

int bundle_verify(const json_t *bundle, const struct bundle_trust *trust, json_t *report, char *why,
                  size_t why_size)
{
    const json_t *leaves = json_object_get(bundle, "leaves");
    struct bundle_check *c =
        bundle_check_begin(bundle, json_is_array(leaves) ? (long long)json_array_size(leaves) : -1,
                           trust, why, why_size);
    if (!c)
        return 1;
    int rc = 0;
    for (size_t i = 0; rc == 0 && i < json_array_size(leaves); i++) {
        const char *b64 = jcs_text(json_array_get(leaves, i));
        rc = bundle_check_leaf(c, b64, b64 ? strlen(b64) : 0, why, why_size);
    }
    if (rc == 0)
        rc = bundle_check_end(c, report, why, why_size);
    bundle_check_free(c);
    return rc;
}
