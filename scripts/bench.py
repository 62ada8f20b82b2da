#!/usr/bin/env python3
"""Runs the benchmark scenarios alternately (baseline, ours, peers) and prints
medians with ratios. The machine is small and noisy: medians of several runs,
compared within one run of this script, are the figures to quote.

Requests are measured as users write them first (`URLRequest(url:)`, the
default cache policy, `URLCache.shared`): an API response marked `no-store`,
with an empty cache and with a stale entry left by an earlier run, and a
static file fresh for an hour (answered from the cache after the first
request). The cache-bypass variant, which is what the C baseline does, comes
second. BENCH_ONLY=s1,s2,... runs a subset (quote full runs).

"instr" counts instructions per request under callgrind: the client's own
work (ours, the C loop's, without the server) by the difference between a run
of 3,000 and one of 1,000 requests, so start-up cancels out. It is the stable
figure on a noisy machine; times are the ones users feel."""
import argparse
import os
import re
import shutil
import statistics
import subprocess
import sys


def run(command, env=None):
    """Runs a command; returns its key=value output."""
    completed = subprocess.run(command, capture_output=True, text=True, timeout=900, env=env)
    if completed.returncode != 0:
        sys.exit(f"failed: {' '.join(command)}\n{completed.stdout}{completed.stderr}")
    figures = {}
    for token in completed.stdout.split():
        if "=" in token:
            key, value = token.split("=", 1)
            try:
                figures[key] = float(value)
            except ValueError:
                pass
    return figures


def peak_rss(command):
    """Peak RSS in MiB of one command, measured by a fresh Python child."""
    probe = (
        "import resource,subprocess,sys;"
        "subprocess.run(sys.argv[1:],check=True,capture_output=True);"
        "print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)"
    )
    output = subprocess.run([sys.executable, "-c", probe] + command, capture_output=True, text=True, check=True)
    return int(output.stdout.strip()) / 1024


def median(samples, key):
    return statistics.median(sample[key] for sample in samples)


def row(name, unit, ours, base, better="higher", baseline="baseline"):
    ratio = ours / base if base else float("nan")
    print(f"  {name:<34} {ours:>10.1f} {unit:<6} {baseline:<10} {base:>10.1f} {unit:<6} ratio {ratio:5.2f}x ({better} is better)")


class Bench:
    def __init__(self, args):
        self.args = args
        self.runs = args.runs
        self.small = f"{args.url}/1k.bin"
        self.nostore = f"{args.url}/nostore/1k.bin"
        self.fresh = f"{args.url}/fresh/1k.bin"
        self.large = f"{args.url}/512m.bin"
        self.tiny = f"{args.url}/1b.bin"
        # Each tool gets a cache directory of its own (XDG_CACHE_HOME), so
        # "an empty cache" and "an entry left by an earlier run" are exact.
        self.cache_home = os.path.join(args.scratch, "cache")
        self.peer_cache_home = os.path.join(args.scratch, "peer-cache")

    def ours(self, *arguments, fresh_cache=False):
        if fresh_cache:
            shutil.rmtree(self.cache_home, ignore_errors=True)
        env = dict(os.environ, XDG_CACHE_HOME=self.cache_home)
        return run([self.args.swift, *arguments], env=env)

    def peer(self, name, *arguments):
        shutil.rmtree(self.peer_cache_home, ignore_errors=True)
        env = dict(os.environ, XDG_CACHE_HOME=self.peer_cache_home)
        return run([self.args.peers, name, *arguments], env=env)

    def baseline(self, *arguments):
        return run([self.args.baseline, *arguments])

    # S1: throughput.

    def s1(self):
        count, concurrency = "20000", "8"
        base, empty, stale, hits, bypass, tasks, ahc, session = [], [], [], [], [], [], [], []
        for _ in range(self.runs):
            base.append(self.baseline("s1", self.small, count, concurrency))
            empty.append(self.ours("s1", self.nostore, count, concurrency, fresh_cache=True))
            tasks.append(self.ours("session-s1", self.nostore, count, concurrency, fresh_cache=True))
            self.ours("prime-stale", self.nostore, fresh_cache=True)
            stale.append(self.ours("s1", self.nostore, count, concurrency))
            hits.append(self.ours("s1", self.fresh, count, concurrency, fresh_cache=True))
            bypass.append(self.ours("s1", self.nostore, count, concurrency, "bypass", fresh_cache=True))
            if self.args.peers:
                ahc.append(self.peer("ahc", "s1", self.nostore, count, concurrency))
                session.append(self.peer("urlsession", "s1", self.nostore, count, concurrency))
        print(f"S1: {int(count):,} GETs of 1 KiB, {concurrency} concurrent (baseline: C on libcurl's multi interface, no cache)")
        b = median(base, "req_per_s")
        row("default, no-store, empty cache", "req/s", median(empty, "req_per_s"), b)
        row("default, no-store, stale entry", "req/s", median(stale, "req_per_s"), b)
        row("default, fresh for an hour (hits)", "req/s", median(hits, "req_per_s"), b)
        row("bypassing the cache", "req/s", median(bypass, "req_per_s"), b)
        row("session manager (no-store, empty cache)", "req/s", median(tasks, "req_per_s"), b)
        row("session manager vs operations", "req/s", median(tasks, "req_per_s"), median(empty, "req_per_s"), baseline="operations")
        if ahc:
            row("AsyncHTTPClient (no-store)", "req/s", median(ahc, "req_per_s"), b)
            row("URLSession (no-store)", "req/s", median(session, "req_per_s"), b)
            row("ours vs AsyncHTTPClient", "req/s", median(empty, "req_per_s"), median(ahc, "req_per_s"), baseline="AHC")
            row("bypass vs AsyncHTTPClient", "req/s", median(bypass, "req_per_s"), median(ahc, "req_per_s"), baseline="AHC")
            row("session manager vs AsyncHTTPClient", "req/s", median(tasks, "req_per_s"), median(ahc, "req_per_s"), baseline="AHC")
            row("ours vs URLSession", "req/s", median(empty, "req_per_s"), median(session, "req_per_s"), baseline="URLSession")
        cpu_base = median(base, "cpu_s") / int(count) * 1e6
        print("  client CPU per request")
        row("default, no-store, empty cache", "µs", median(empty, "cpu_s") / int(count) * 1e6, cpu_base, "lower")
        row("default, no-store, stale entry", "µs", median(stale, "cpu_s") / int(count) * 1e6, cpu_base, "lower")
        row("default, fresh for an hour (hits)", "µs", median(hits, "cpu_s") / int(count) * 1e6, cpu_base, "lower")
        row("bypassing the cache", "µs", median(bypass, "cpu_s") / int(count) * 1e6, cpu_base, "lower")
        row("session manager", "µs", median(tasks, "cpu_s") / int(count) * 1e6, cpu_base, "lower")

    # S2: latency.

    def s2(self):
        count = "2000"
        base, empty, stale, bypass, tasks, ahc, session = [], [], [], [], [], [], []
        for _ in range(self.runs):
            base.append(self.baseline("s2", self.small, count))
            empty.append(self.ours("s2", self.nostore, count, fresh_cache=True))
            tasks.append(self.ours("session-s2", self.nostore, count, fresh_cache=True))
            self.ours("prime-stale", self.nostore, fresh_cache=True)
            stale.append(self.ours("s2", self.nostore, count))
            bypass.append(self.ours("s2", self.nostore, count, "bypass", fresh_cache=True))
            if self.args.peers:
                ahc.append(self.peer("ahc", "s2", self.nostore, count))
                session.append(self.peer("urlsession", "s2", self.nostore, count))
        print(f"S2: {int(count):,} sequential GETs (baseline: C on libcurl's multi interface)")
        for key, label in (("p50_us", "p50"), ("p99_us", "p99")):
            b = median(base, key)
            row(f"{label}, default, no-store, empty cache", "µs", median(empty, key), b, "lower")
            row(f"{label}, default, no-store, stale entry", "µs", median(stale, key), b, "lower")
            row(f"{label}, bypassing the cache", "µs", median(bypass, key), b, "lower")
            row(f"{label}, session manager", "µs", median(tasks, key), b, "lower")
            if ahc:
                row(f"{label}, AsyncHTTPClient", "µs", median(ahc, key), b, "lower")
                row(f"{label}, URLSession", "µs", median(session, key), b, "lower")
                row(f"{label}, ours vs AsyncHTTPClient", "µs", median(empty, key), median(ahc, key), "lower", baseline="AHC")
                row(f"{label}, session vs AsyncHTTPClient", "µs", median(tasks, key), median(ahc, key), "lower", baseline="AHC")

    # S6: HTTPS to one origin, 64 in flight (HTTP/2 and HTTP/1.1).

    def s6(self):
        if not self.args.tls_log:
            print("S6: skipped (nginx started without TLS)")
            return
        count, concurrency = "10000", "64"
        ca_der, ca_pem = os.path.join(self.args.scratch, "ca.der"), os.path.join(self.args.scratch, "ca.pem")
        rounds = {}
        for label, url in (("HTTP/2", self.args.h2_url), ("HTTP/1.1", self.args.h1_url)):
            small = f"{url}/nostore/1k.bin"
            samples = {"baseline": [], "ours": [], "ahc": []}
            for _ in range(max(3, self.runs // 2)):
                for name, command in (("baseline", [self.args.baseline, "s6", small, count, concurrency, os.path.join(self.args.scratch, "ca.pem")]),
                                      ("ours", [self.args.swift, "s6", small, count, concurrency, ca_der]),
                                      ("ahc", [self.args.peers, "ahc", "s6", small, count, concurrency, ca_pem] if self.args.peers else None)):
                    if command is None:
                        continue
                    open(self.args.tls_log, "w").close()
                    env = dict(os.environ, XDG_CACHE_HOME=self.cache_home)
                    shutil.rmtree(self.cache_home, ignore_errors=True)
                    figures = run(command, env=env)
                    with open(self.args.tls_log) as log:
                        figures["connections"] = len({line.split()[1] for line in log if line.strip()})
                    samples[name].append(figures)
            rounds[label] = samples
        print(f"S6: {int(count):,} GETs of 1 KiB over HTTPS, {concurrency} in flight, one origin, a private CA trusted "
              "(SecurityPolicy.additionalTrustedCertificates; baseline: C on libcurl's multi interface with CURLOPT_PIPEWAIT)")
        for label, samples in rounds.items():
            b = median(samples["baseline"], "req_per_s")
            row(f"{label}: throughput", "req/s", median(samples["ours"], "req_per_s"), b)
            if samples["ahc"]:
                row(f"{label}: AsyncHTTPClient", "req/s", median(samples["ahc"], "req_per_s"), b)
                row(f"{label}: ours vs AsyncHTTPClient", "req/s", median(samples["ours"], "req_per_s"), median(samples["ahc"], "req_per_s"), baseline="AHC")
            row(f"{label}: connections (nginx's log)", "conns", median(samples["ours"], "connections"), median(samples["baseline"], "connections"), "lower")
            if samples["ahc"]:
                row(f"{label}: AsyncHTTPClient connections", "conns", median(samples["ahc"], "connections"), median(samples["baseline"], "connections"), "lower")
            row(f"{label}: peak RSS", "MiB", median(samples["ours"], "peak_rss_mib"), median(samples["baseline"], "peak_rss_mib"), "lower")
            if samples["ahc"]:
                row(f"{label}: AsyncHTTPClient peak RSS", "MiB", median(samples["ahc"], "peak_rss_mib"), median(samples["baseline"], "peak_rss_mib"), "lower")

    # Queue scale: memory per queued, not yet started operation.

    # Soak: memory over many in-memory bodies.

    def soak(self):
        samples = [self.ours("soak", self.args.url, "3000") for _ in range(3)]
        print("Soak: 3,000 GETs of 1 KiB–8 MiB bodies in memory, 8 at a time; resident memory at rest (goal: flat)")
        for key, label in (("rss_warm_mib", "at rest after a warm-up of 100"), ("rss_end_mib", "at rest after the 3,000"),
                           ("growth_mib", "growth over the 3,000"), ("rss_trimmed_mib", "after the harness's malloc_trim"),
                           ("peak_rss_mib", "peak RSS")):
            print(f"  {label:<34} {median(samples, key):>10.1f} MiB")
        print(f"  {'wall time':<34} {median(samples, 'wall'):>10.2f} s")

    def queue(self):
        samples = [self.ours("queue-scale", self.small, "100000") for _ in range(3)]
        print("Queue scale: 100,000 operations handed to a suspended queue (goal: at most 1 KiB each)")
        print(f"  {'resident memory per operation':<34} {median(samples, 'bytes_per_operation'):>10.0f} bytes")
        print(f"  {'peak RSS':<34} {median(samples, 'peak_rss_mib'):>10.1f} MiB")
        kept = [self.ours("kept-scale", self.nostore, "10000") for _ in range(3)]
        print("Kept operations: 10,000 GETs of 1 KiB run to completion, every operation kept by its caller")
        print(f"  {'resident memory per operation':<34} {median(kept, 'bytes_per_operation'):>10.0f} bytes "
              f"(of which body {median(kept, 'body_bytes_per_operation'):.0f})")

    # Instructions per request (callgrind, steady state).

    def instructions(self, command, env=None):
        """Instructions callgrind counts for one run of `command`."""
        completed = subprocess.run(["valgrind", "--tool=callgrind", "--callgrind-out-file=/dev/null", *command],
                                   capture_output=True, text=True, timeout=1800, env=env)
        if completed.returncode != 0:
            sys.exit(f"failed under callgrind: {' '.join(command)}\n{completed.stderr[-2000:]}")
        match = re.search(r"Collected : (\d+)", completed.stderr)
        if not match:
            sys.exit(f"no instruction count from callgrind for {' '.join(command)}")
        return int(match.group(1))

    def per_request(self, command, fresh_cache=True, env=None, primed=False):
        """(count(3,000) - count(1,000)) / 2,000 for `command` with COUNT
        replaced. `primed`: cache hits — the entry is stored, and on disk,
        before each pair (else a run's first request may store it, and the
        archiving costs ~100M instructions), and the median of three pairs is
        taken."""
        def count(n):
            return self.instructions([part if part != "COUNT" else str(n) for part in command], env=env)
        samples = []
        for _ in range(3 if primed else 1):
            if fresh_cache:
                shutil.rmtree(self.cache_home, ignore_errors=True)
            if primed:
                subprocess.run([command[0], "prime-fresh", command[2]], env=env, check=True, capture_output=True, timeout=120)
            first = count(1000)
            samples.append((count(3000) - first) / 2000)
        return statistics.median(samples)

    def instr(self):
        # valgrind cannot read the DWARF of Swift 6.3 objects; a copy without
        # debug sections (symbols kept) runs the same instructions.
        swift = os.path.join(self.args.scratch, "afn-bench-nodebug")
        subprocess.run(["strip", "--strip-debug", "-o", swift, self.args.swift], check=True)
        env = dict(os.environ, XDG_CACHE_HOME=self.cache_home)
        base = self.per_request([self.args.baseline, "s1", self.small, "COUNT", "8"], fresh_cache=False)
        figures = [
            ("default, no-store, empty cache", self.per_request([swift, "s1", self.nostore, "COUNT", "8"], env=env), 120_000),
            ("bypassing the cache", self.per_request([swift, "s1", self.nostore, "COUNT", "8", "bypass"], env=env), 120_000),
            ("session manager (no-store)", self.per_request([swift, "session-s1", self.nostore, "COUNT", "8"], env=env), 120_000),
            ("cache hits (fresh for an hour)", self.per_request([swift, "s1", self.fresh, "COUNT", "8"], env=env, primed=True), 40_000),
        ]
        print("Instructions per request (callgrind, S1 shape, steady state: (3,000 - 1,000 requests) / 2,000)")
        print(f"  {'C on libcurl multi (the floor)':<34} {base / 1000:>10.1f} k")
        for name, count, goal in figures:
            print(f"  {name:<34} {count / 1000:>10.1f} k      goal {goal / 1000:>5.0f} k   ratio to C {count / base:5.2f}x")

    # S3: download to a file.

    def s3(self):
        target = os.path.join(self.args.scratch, "download.bin")
        curl_rates, our_rates, our_rss, task_rates, task_rss = [], [], [], [], []
        for _ in range(max(3, self.runs // 2)):
            curl = subprocess.run(["curl", "-s", "-o", target, "-w", "%{speed_download}", self.large],
                                  capture_output=True, text=True, check=True, timeout=600)
            curl_rates.append(float(curl.stdout) / 1e6)
            os.remove(target)
            ours = self.ours("s3", self.large, target)
            our_rates.append(ours["mb_per_s"])
            our_rss.append(ours["peak_rss_mib"])
            os.remove(target)
            task = self.ours("session-s3", self.large, target)
            task_rates.append(task["mb_per_s"])
            task_rss.append(task["peak_rss_mib"])
            os.remove(target)
        curl_rss = peak_rss(["curl", "-s", "-o", target, self.large])
        os.remove(target)
        print("S3: 512 MiB download to a file through outputStream, default request (baseline: curl -o)")
        row("throughput", "MB/s", statistics.median(our_rates), statistics.median(curl_rates))
        row("peak RSS", "MiB", statistics.median(our_rss), curl_rss, "lower")
        self.process_floor(target)
        row("session download task throughput", "MB/s", statistics.median(task_rates), statistics.median(curl_rates))
        row("session download task peak RSS", "MiB", statistics.median(task_rss), curl_rss, "lower")

    def process_floor(self, target):
        """What the same program costs before and after one request of one
        byte: the part of the peak RSS rows that does not grow with the body."""
        start = [self.ours("idle", self.tiny)["peak_rss_mib"] for _ in range(3)]
        one = []
        for _ in range(3):
            one.append(self.ours("s3", self.tiny, target)["peak_rss_mib"])
            os.remove(target)
        print(f"  {'peak RSS, the program at start':<34} {statistics.median(start):>10.1f} MiB")
        print(f"  {'peak RSS, one GET of 1 byte':<34} {statistics.median(one):>10.1f} MiB"
              f"   (the rows above less this: what the body costs)")

    # S4: multipart upload from a file.

    def s4(self):
        upload = os.path.join(self.args.scratch, "upload-1g.bin")
        sink = f"{self.args.url}/upload"
        size = os.path.getsize(upload)
        curl_rates, our_rates, our_rss = [], [], []
        for _ in range(3):
            curl = subprocess.run(["curl", "-s", "-o", "/dev/null", "-w", "%{time_total}", "-F", f"file=@{upload}", sink],
                                  capture_output=True, text=True, check=True, timeout=600)
            curl_rates.append(size / float(curl.stdout) / 1e6)
            ours = self.ours("s4", sink, upload)
            our_rates.append(ours["mb_per_s"])
            our_rss.append(ours["peak_rss_mib"])
        curl_rss = peak_rss(["curl", "-s", "-o", "/dev/null", "-F", f"file=@{upload}", sink])
        print("S4: 1 GiB multipart upload streamed from a file (baseline: curl -F)")
        row("throughput", "MB/s", statistics.median(our_rates), statistics.median(curl_rates))
        row("peak RSS", "MiB", statistics.median(our_rss), curl_rss, "lower")

    # S5: latency while a throttled upload runs.

    def s5(self):
        samples = [self.ours("s5", self.small, f"{self.args.url}/upload-whole", "200") for _ in range(3)]
        print("S5: 200 sequential GETs while a multipart upload throttled to 16 KiB / 50 ms runs (baseline: the same GETs idle)")
        for key, label in (("p50", "p50"), ("p90", "p90"), ("mean", "mean")):
            row(f"latency {label}", "µs", median(samples, f"loaded_{key}_us"), median(samples, f"idle_{key}_us"), "lower", "idle")
        if not all(sample.get("upload_still_running") == 1 for sample in samples):
            print("  (the throttled upload ended before the last GET: the GETs were slowed enough to outlast it)")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--baseline", required=True)
    parser.add_argument("--swift", required=True)
    parser.add_argument("--peers", default="")
    parser.add_argument("--url", required=True)
    parser.add_argument("--scratch", required=True)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--h2-url", default="")
    parser.add_argument("--h1-url", default="")
    parser.add_argument("--tls-log", default="")
    args = parser.parse_args()
    only = set(filter(None, os.environ.get("BENCH_ONLY", "").lower().split(",")))
    bench = Bench(args)
    print(f"AFNetworking for Linux benchmarks — medians of {args.runs} alternating runs, release build, local nginx")
    for name in ("s1", "s2", "s6", "queue", "soak", "instr", "s3", "s4", "s5"):
        if not only or name in only:
            getattr(bench, name)()
            sys.stdout.flush()


if __name__ == "__main__":
    main()
