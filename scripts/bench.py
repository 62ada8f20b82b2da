#!/usr/bin/env python3
"""Runs the benchmark scenarios alternately (baseline, then ours) and prints
medians with ratios. The machine is small and noisy: medians of several runs,
compared within one run of this script, are the figures to quote."""
import argparse
import os
import resource
import statistics
import subprocess
import sys


def run(command):
    """Runs a command; returns its key=value output and the peak RSS of the child in MiB."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    completed = subprocess.run(command, capture_output=True, text=True, timeout=600)
    if completed.returncode != 0:
        sys.exit(f"failed: {' '.join(command)}\n{completed.stdout}{completed.stderr}")
    peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    figures = {}
    for token in completed.stdout.split():
        if "=" in token:
            key, value = token.split("=", 1)
            figures[key] = float(value)
    # RUSAGE_CHILDREN's maxrss is the largest child so far: only meaningful
    # when it grew, so each tool's peak is also measured on its own below.
    figures["child_peak_rss_mib"] = max(peak, before) / 1024
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


def row(name, unit, ours, base, better="higher"):
    ratio = ours / base if base else float("nan")
    print(f"  {name:<28} {ours:>12.1f} {unit:<6} baseline {base:>12.1f} {unit:<6} ratio {ratio:5.2f}x ({better} is better)")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--baseline", required=True)
    parser.add_argument("--swift", required=True)
    parser.add_argument("--url", required=True)
    parser.add_argument("--scratch", required=True)
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    # BENCH_ONLY=s1,s5 runs only those scenarios (for quick iterations; quote full runs).
    only = set(filter(None, os.environ.get("BENCH_ONLY", "").lower().split(",")))
    wanted = lambda name: not only or name in only
    small = f"{args.url}/1k.bin"
    large = f"{args.url}/512m.bin"
    runs = args.runs

    print(f"AFNetworking for Linux benchmarks — medians of {runs} alternating runs, release build, local nginx")

    if wanted("s1"):
        s1(args, small, runs)
    if wanted("s2"):
        s2(args, small, runs)
    if wanted("s3"):
        s3(args, large, runs)
    if wanted("s4"):
        s4(args)
    if wanted("s5"):
        s5(args, small)


def s1(args, small, runs):
    base, ours = [], []
    for _ in range(runs):
        base.append(run([args.baseline, "s1", small, "20000", "8"]))
        ours.append(run([args.swift, "s1", small, "20000", "8"]))
    print("S1: 20,000 GETs of 1 KiB, 8 concurrent (baseline: C on libcurl's multi interface)")
    row("throughput", "req/s", median(ours, "req_per_s"), median(base, "req_per_s"))
    row("client CPU", "s", median(ours, "cpu_s"), median(base, "cpu_s"), "lower")


def s2(args, small, runs):
    base, ours = [], []
    for _ in range(runs):
        base.append(run([args.baseline, "s2", small, "2000"]))
        ours.append(run([args.swift, "s2", small, "2000"]))
    print("S2: 2,000 sequential GETs (baseline: C on libcurl's multi interface)")
    row("latency p50", "µs", median(ours, "p50_us"), median(base, "p50_us"), "lower")
    row("latency p99", "µs", median(ours, "p99_us"), median(base, "p99_us"), "lower")


def s3(args, large, runs):
    target = os.path.join(args.scratch, "download.bin")
    curl_rates, our_rates, curl_rss, our_rss = [], [], [], []
    for _ in range(max(3, runs // 2)):
        curl = subprocess.run(["curl", "-s", "-o", target, "-w", "%{speed_download}", large],
                              capture_output=True, text=True, check=True, timeout=600)
        curl_rates.append(float(curl.stdout) / 1e6)
        os.remove(target)
        ours_run = run([args.swift, "s3", large, target])
        our_rates.append(ours_run["mb_per_s"])
        our_rss.append(ours_run["peak_rss_mib"])
        os.remove(target)
    curl_rss.append(peak_rss(["curl", "-s", "-o", target, large]))
    os.remove(target)
    print("S3: 512 MiB download to a file through outputStream (baseline: curl -o)")
    row("throughput", "MB/s", statistics.median(our_rates), statistics.median(curl_rates))
    row("peak RSS", "MiB", statistics.median(our_rss), statistics.median(curl_rss), "lower")


def s4(args):
    upload = os.path.join(args.scratch, "upload-1g.bin")
    sink = f"{args.url}/upload"
    size = os.path.getsize(upload)
    curl_rates, our_rates, our_rss = [], [], []
    for _ in range(3):
        curl = subprocess.run(["curl", "-s", "-o", "/dev/null", "-w", "%{time_total}", "-F", f"file=@{upload}", sink],
                              capture_output=True, text=True, check=True, timeout=600)
        curl_rates.append(size / float(curl.stdout) / 1e6)
        ours_run = run([args.swift, "s4", sink, upload])
        our_rates.append(ours_run["mb_per_s"])
        our_rss.append(ours_run["peak_rss_mib"])
    curl_rss = peak_rss(["curl", "-s", "-o", "/dev/null", "-F", f"file=@{upload}", sink])
    print("S4: 1 GiB multipart upload streamed from a file (baseline: curl -F)")
    row("throughput", "MB/s", statistics.median(our_rates), statistics.median(curl_rates))
    row("peak RSS", "MiB", statistics.median(our_rss), curl_rss, "lower")


def s5(args, small):
    samples = [run([args.swift, "s5", small, f"{args.url}/upload-whole", "200"]) for _ in range(3)]
    print("S5: 200 sequential GETs while a multipart upload throttled to 16 KiB / 50 ms runs (baseline: the same GETs idle)")
    row("latency p50", "µs", median(samples, "loaded_p50_us"), median(samples, "idle_p50_us"), "lower")
    row("latency p90", "µs", median(samples, "loaded_p90_us"), median(samples, "idle_p90_us"), "lower")
    row("latency mean", "µs", median(samples, "loaded_mean_us"), median(samples, "idle_mean_us"), "lower")
    if not all(sample.get("upload_still_running") == 1 for sample in samples):
        print("  (the throttled upload ended before the last GET: the GETs were slowed enough to outlast it)")


if __name__ == "__main__":
    main()
