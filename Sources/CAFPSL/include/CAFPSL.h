#ifndef CAFPSL_H
#define CAFPSL_H

/* Whether `domain` (lowercase; ASCII or punycode) is a public suffix: 1 yes,
 * 0 no, -1 no list could be loaded. libpsl's types stay out of this header,
 * so the Swift module that imports it never needs libpsl's module map. */
int afn_psl_is_public_suffix(const char *domain);

#endif
