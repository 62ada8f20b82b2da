/* The system libpsl, found through pkg-config (`libpsl`): the Public Suffix
 * List as Debian maintains it (libpsl-dev, data from the publicsuffix package,
 * the same source libcurl uses), so cookie Domain checks never rely on a
 * hand-copied list that goes stale. */
#include <libpsl.h>
