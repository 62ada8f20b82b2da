/* The system libcurl, found through pkg-config (`libcurl`): a missing
 * libcurl4-openssl-dev makes SwiftPM print the apt command to install it. */
#include <curl/curl.h>
