// The benchmark baseline: the same workloads written directly against
// libcurl's multi interface in C, so the Swift figures have a floor to be
// compared with on the same machine, server and run.
//
//   baseline s1 URL COUNT CONCURRENCY   throughput: req/s and CPU seconds
//   baseline s2 URL COUNT               sequential latency: p50 and p99 in µs
//   baseline s6 URL COUNT CONCURRENCY CAFILE
//                                       s1 over HTTPS with CAFILE trusted, waiting to
//                                       multiplex (CURLOPT_PIPEWAIT), as curl --parallel does
#include <curl/curl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

static size_t discard(char *data, size_t size, size_t count, void *userdata) {
    (void)data; (void)userdata;
    return size * count;
}

static double now_seconds(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec / 1e9;
}

static double cpu_seconds(void) {
    struct rusage usage;
    getrusage(RUSAGE_SELF, &usage);
    return usage.ru_utime.tv_sec + usage.ru_utime.tv_usec / 1e6 + usage.ru_stime.tv_sec + usage.ru_stime.tv_usec / 1e6;
}

/* S6's CA file; NULL for plain http. */
static const char *ca_file = NULL;

static CURL *make_handle(const char *url) {
    CURL *handle = curl_easy_init();
    curl_easy_setopt(handle, CURLOPT_URL, url);
    curl_easy_setopt(handle, CURLOPT_WRITEFUNCTION, discard);
    curl_easy_setopt(handle, CURLOPT_NOSIGNAL, 1L);
    if (ca_file) {
        curl_easy_setopt(handle, CURLOPT_CAINFO, ca_file);
        curl_easy_setopt(handle, CURLOPT_PIPEWAIT, 1L);
    }
    return handle;
}

static double peak_rss_mib(void) {
    struct rusage usage;
    getrusage(RUSAGE_SELF, &usage);
    return usage.ru_maxrss / 1024.0;
}

static int compare_doubles(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static int throughput(const char *url, long count, int concurrency) {
    CURLM *multi = curl_multi_init();
    long started = 0, finished = 0, failed = 0;
    double t0 = now_seconds(), c0 = cpu_seconds();
    for (int i = 0; i < concurrency && started < count; i++, started++) {
        curl_multi_add_handle(multi, make_handle(url));
    }
    while (finished < count) {
        int running = 0, pending = 0;
        curl_multi_perform(multi, &running);
        CURLMsg *message;
        while ((message = curl_multi_info_read(multi, &pending))) {
            if (message->msg != CURLMSG_DONE) continue;
            CURL *handle = message->easy_handle;
            if (message->data.result != CURLE_OK) failed++;
            finished++;
            curl_multi_remove_handle(multi, handle);
            curl_easy_cleanup(handle);
            if (started < count) {
                curl_multi_add_handle(multi, make_handle(url));
                started++;
            }
        }
        if (finished < count) curl_multi_poll(multi, NULL, 0, 1000, NULL);
    }
    double wall = now_seconds() - t0, cpu = cpu_seconds() - c0;
    printf("requests=%ld failed=%ld wall=%.3f req_per_s=%.0f cpu_s=%.3f peak_rss_mib=%.1f\n", count, failed, wall, count / wall, cpu,
           peak_rss_mib());
    curl_multi_cleanup(multi);
    return failed ? 1 : 0;
}

static int latency(const char *url, long count) {
    CURLM *multi = curl_multi_init();
    double *samples = calloc((size_t)count, sizeof(double));
    long failed = 0;
    for (long i = 0; i < count; i++) {
        double t0 = now_seconds();
        CURL *handle = make_handle(url);
        curl_multi_add_handle(multi, handle);
        int running = 1, pending = 0;
        while (running) {
            curl_multi_perform(multi, &running);
            if (running) curl_multi_poll(multi, NULL, 0, 1000, NULL);
        }
        CURLMsg *message;
        while ((message = curl_multi_info_read(multi, &pending))) {
            if (message->msg == CURLMSG_DONE && message->data.result != CURLE_OK) failed++;
        }
        curl_multi_remove_handle(multi, handle);
        curl_easy_cleanup(handle);
        samples[i] = (now_seconds() - t0) * 1e6;
    }
    qsort(samples, (size_t)count, sizeof(double), compare_doubles);
    printf("requests=%ld failed=%ld p50_us=%.1f p99_us=%.1f\n", count, failed, samples[count / 2], samples[(count * 99) / 100]);
    free(samples);
    curl_multi_cleanup(multi);
    return failed ? 1 : 0;
}

int main(int argc, char **argv) {
    if (argc < 4) {
        fprintf(stderr, "usage: %s s1 URL COUNT CONCURRENCY | s2 URL COUNT | s6 URL COUNT CONCURRENCY CAFILE\n", argv[0]);
        return 2;
    }
    curl_global_init(CURL_GLOBAL_ALL);
    int status;
    if (strcmp(argv[1], "s1") == 0 && argc >= 5) {
        status = throughput(argv[2], atol(argv[3]), atoi(argv[4]));
    } else if (strcmp(argv[1], "s6") == 0 && argc >= 6) {
        ca_file = argv[5];
        status = throughput(argv[2], atol(argv[3]), atoi(argv[4]));
    } else if (strcmp(argv[1], "s2") == 0) {
        status = latency(argv[2], atol(argv[3]));
    } else {
        fprintf(stderr, "unknown scenario %s\n", argv[1]);
        status = 2;
    }
    curl_global_cleanup();
    return status;
}
