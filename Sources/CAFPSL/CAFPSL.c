#include "CAFPSL.h"

#include <libpsl.h>
#include <pthread.h>

static const psl_ctx_t *afn_psl_list;
static pthread_once_t afn_psl_once = PTHREAD_ONCE_INIT;

/* The newer of the system's list (Debian's publicsuffix package) and the one
 * built into libpsl, loaded once and kept for the life of the process:
 * libpsl contexts are read-only after loading, so any thread may query it. */
static void afn_psl_load(void) {
    psl_ctx_t *latest = psl_latest(NULL);
    afn_psl_list = latest ? latest : psl_builtin();
}

int afn_psl_is_public_suffix(const char *domain) {
    pthread_once(&afn_psl_once, afn_psl_load);
    if (afn_psl_list == NULL) return -1;
    /* PSL_TYPE_ANY: ICANN and private entries (github.io), with the implicit
     * "*" rule, so an unknown top-level name counts as a suffix. */
    return psl_is_public_suffix2(afn_psl_list, domain, PSL_TYPE_ANY) ? 1 : 0;
}
