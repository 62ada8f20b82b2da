/* The system OpenSSL, found through pkg-config (`openssl`): a missing
 * libssl-dev makes SwiftPM print the apt command to install it. */
#include <openssl/ssl.h>
